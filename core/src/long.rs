//! The long strings of a message: where each starts and ends, so that a
//! handler skipping one (iterating past it, counting the members around it)
//! jumps over it instead of walking it again: file contents in an MCP
//! `tools/call` or an LSP `didOpen`, a raw transaction, a base64 blob.
//!
//! The scanner notes every string of [`LONG`] bytes or more it validates (and
//! the rare number that long; the longest [`SLOTS`] kept) in a
//! [`LongValues`]; it notes them only in messages of [`LONG`] bytes or more
//! whose record will be read (a session's: not those of
//! [`Parser::parse`](crate::Parser::parse) or `Parser::validate`), in copies
//! of its loops that do, so other messages pay nothing. Arrays and
//! objects are not noted: keeping their opening offsets costs every container
//! of every long message a store and a compare, more (measured) than the walks
//! it would save on dense JSON.
//!
//! The views carry the record. A [`Session`] keeps one [`LongValues`], has the
//! scanner fill it for each long message, and hands its handlers params that
//! hold a [`Record`] of it ([`LongValues::record`]; the parser's requests keep
//! their params as bytes, `ParamsBytes`, and the record is added as the
//! session makes each call, so the parser's messages do not grow by it):
//! [`crate::Params`],
//! [`crate::RawValue`], their member and element iterators and the serde
//! deserializer over them all carry one (`Copy`, one pointer, `None` when no
//! long value was noted), and every view made from a view (a member's value,
//! an element, a sub-iterator, typed extraction) carries its parent's. A skip
//! over a string value asks the record first ([`Record::end`]); counting the
//! members or elements of what is mostly one long value goes value by value
//! ([`Record::mostly`]). The borrow does the rest: a view's record borrows the
//! session's [`LongValues`] for as long as the view lives, so the record is
//! never cleared nor refilled for the next message while a view of this one
//! exists. Views made any other way ([`Parser::parse`](crate::Parser::parse)
//! outside a session, an `OwnedCall`'s copy, a `RawValue` read through serde)
//! carry no record and walk; `RawValue::from_validated`'s views (bytes the
//! scanner did not see: the C ABI's, a client's) carry [`Record::FOREIGN`],
//! which has no values either and tells the serde reader to check UTF-8.
//!
//! Why the record can never mislead: it holds the message's address and
//! length, and offsets into it; a view finds the offset of a byte by its
//! address, and only asks when its bytes lie inside the message. An entry says
//! "the value starting at offset `s` ends at offset `e`", a fact about the
//! message's bytes, which are borrowed (unchanged, alive) as long as the view
//! is; and the answers only ever bound a skip within the slice a view holds.
//!
//! [`Session`]: crate::Session

/// A value this long (in bytes) or longer is noted.
pub(crate) const LONG: usize = 1024;

/// How many long values the record keeps (the longest ones).
pub(crate) const SLOTS: usize = 8;

/// The scanner's record of one message's long values, as offsets into it. Its
/// owner clears it before a scan whose values it reads, and hands views a
/// [`Record`] of it after ([`LongValues::record`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct LongValues {
    /// The address of the message's first byte (set by [`LongValues::record`]).
    base: usize,
    /// The message's length in bytes (set by [`LongValues::record`]).
    size: usize,
    len: usize,
    start: [usize; SLOTS],
    end: [usize; SLOTS],
}

/// The record [`Record::FOREIGN`] points to: no long values, which marks it
/// (a message's record has at least one: [`LongValues::record`]).
static FOREIGN: LongValues = LongValues {
    base: 0,
    size: 0,
    len: 0,
    start: [0; SLOTS],
    end: [0; SLOTS],
};

impl LongValues {
    /// Forgets the previous message's values.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// The noted values, as `(start, end)` offsets.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.start[..self.len]
            .iter()
            .copied()
            .zip(self.end[..self.len].iter().copied())
    }

    /// The record for the views of `input`, the message whose scan filled
    /// this; [`Record::NONE`] when no long value was noted. While the record
    /// lives, this cannot be cleared (it is borrowed).
    #[inline]
    pub(crate) fn record(&mut self, input: &[u8]) -> Record<'_> {
        if self.len == 0 {
            return Record::NONE;
        }
        self.base = input.as_ptr().addr();
        self.size = input.len();
        Record(Some(self))
    }

    /// Where `b` starts in the message, if it lies inside it.
    #[inline]
    fn offset_of(&self, b: &[u8]) -> Option<usize> {
        let off = b.as_ptr().addr().checked_sub(self.base)?;
        (b.len() <= self.size && off <= self.size - b.len()).then_some(off)
    }

    /// Notes the value `start..end` if it is [`LONG`] or longer (once: a value
    /// the scanner validates again after its compact path declined is noted
    /// again); when the record is full, it replaces the shortest entry if it is
    /// longer.
    #[inline(always)]
    pub(crate) fn note(&mut self, start: usize, end: usize) {
        if end - start >= LONG {
            self.note_long(start, end);
        }
    }

    #[cold]
    #[inline(never)]
    fn note_long(&mut self, start: usize, end: usize) {
        if self.start[..self.len].contains(&start) {
            return;
        }
        let i = if self.len < SLOTS {
            self.len += 1;
            self.len - 1
        } else {
            let mut i = 0;
            for j in 1..SLOTS {
                if self.end[j] - self.start[j] < self.end[i] - self.start[i] {
                    i = j;
                }
            }
            if end - start <= self.end[i] - self.start[i] {
                return;
            }
            i
        };
        self.start[i] = start;
        self.end[i] = end;
    }
}

/// What a view knows of its message's long values: the message's
/// [`LongValues`], or nothing (then every value is walked). One pointer,
/// `Copy`: carried by every view of a session's message and inherited by the
/// views made from it.
#[derive(Clone, Copy, Default)]
pub(crate) struct Record<'a>(Option<&'a LongValues>);

const _: () = assert!(size_of::<Record<'_>>() == size_of::<usize>());

impl Record<'_> {
    /// No record: every value is walked.
    pub(crate) const NONE: Self = Record(None);

    /// No record, for views of bytes the caller says are validated JSON
    /// (`RawValue::from_validated`) where switchboard's scanner did not check
    /// them: every value is walked, and the serde reader checks the bytes are
    /// UTF-8 before trusting string slices ([`Record::is_foreign`]).
    pub(crate) const FOREIGN: Record<'static> = Record(Some(&FOREIGN));

    /// Whether this is [`Record::FOREIGN`]: the bytes were not validated by
    /// switchboard (a view of them may be not even UTF-8).
    #[inline(always)]
    pub(crate) fn is_foreign(self) -> bool {
        matches!(self.0, Some(long) if long.len == 0)
    }

    /// Whether there is a record to ask (else the callers walk at once).
    #[inline(always)]
    pub(crate) fn is_some(self) -> bool {
        self.0.is_some()
    }

    /// The end (an index of `b`) of the value starting at `b[p]`, if the
    /// message recorded it, `b` lies in the message and the value ends inside
    /// `b`. Only worth asking for values that may be long: `b.len() - p >=
    /// LONG`.
    #[inline]
    pub(crate) fn end(self, b: &[u8], p: usize) -> Option<usize> {
        let long = self.0?;
        let off = long.offset_of(b)?;
        let at = off + p;
        let i = long.start[..long.len].iter().position(|&s| s == at)?;
        Some(long.end[i] - off).filter(|&end| end > p && end <= b.len())
    }

    /// Whether a recorded value starting in `b[from..]` covers at least half
    /// of it: then walking `b[from..]` value by value ([`Record::end`] jumping
    /// that one) beats one walk over all its bytes.
    #[inline]
    pub(crate) fn mostly(self, b: &[u8], from: usize) -> bool {
        let Some(long) = self.0 else {
            return false;
        };
        if b.len().saturating_sub(from) < LONG {
            return false;
        }
        let Some(off) = long.offset_of(b) else {
            return false;
        };
        let (lo, hi) = (off + from, off + b.len());
        long.entries()
            .any(|(s, e)| s >= lo && e <= hi && 2 * (e - s) >= hi - lo)
    }
}

impl core::fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            _ if self.is_foreign() => f.write_str("foreign"),
            Some(long) => f.debug_list().entries(long.entries()).finish(),
            None => f.write_str("none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    fn long_values(entries: &[(usize, usize)]) -> LongValues {
        let mut l = LongValues::default();
        for &(s, e) in entries {
            l.note(s, e);
        }
        l
    }

    #[test]
    fn note_keeps_the_longest() {
        let mut l = LongValues::default();
        l.note(0, LONG - 1);
        assert_eq!(l.entries().count(), 0, "shorter than LONG: not noted");
        for i in 0..SLOTS {
            l.note(10 * i, 10 * i + LONG + i);
        }
        assert_eq!(l.entries().count(), SLOTS);
        // Full: a longer one replaces the shortest (the first), a shorter one
        // does not get in.
        l.note(5000, 5000 + LONG + 100);
        l.note(5000, 5000 + LONG + 100); // again: not twice
        l.note(9000, 9000 + LONG);
        let mut lens: Vec<_> = l.entries().map(|(s, e)| e - s).collect();
        lens.sort();
        let mut want: Vec<_> = (1..SLOTS).map(|i| LONG + i).collect();
        want.push(LONG + 100);
        assert_eq!(lens, want);
        l.clear();
        assert_eq!(l.entries().count(), 0);
    }

    /// The record answers for views inside the message it was made for, by
    /// offsets of their own slices, and only with ends inside them; views of
    /// other bytes, and views without a record, get no answer.
    #[test]
    fn lookups_within_the_message_and_the_slice() {
        let input = vec![b' '; 4 * LONG + 300];
        let mut long = long_values(&[(10, 10 + LONG), (100, 2 * LONG + 200)]);
        let rec = long.record(&input);
        assert!(rec.is_some());
        assert_eq!(rec.end(&input, 10), Some(10 + LONG));
        assert_eq!(rec.end(&input, 100), Some(2 * LONG + 200));
        assert_eq!(rec.end(&input, 11), None, "not a start");
        // A sub-slice: the same message, indices of the sub-slice.
        assert_eq!(rec.end(&input[5..], 5), Some(5 + LONG));
        assert_eq!(rec.end(&input[5..], 10), None);
        // An end past the slice is not handed out.
        assert_eq!(rec.end(&input[..LONG], 10), None);
        // Other bytes with the same offsets: not the message.
        let other = input.clone();
        assert_eq!(rec.end(&other, 10), None);
        assert!(!rec.mostly(&other, 100));
        // A slice running past the message's end is not inside it.
        let wider = vec![b' '; input.len() + 1];
        let mut for_prefix = long_values(&[(10, 10 + LONG)]);
        let prefix = for_prefix.record(&wider[..input.len()]);
        assert_eq!(prefix.end(&wider[..input.len()], 10), Some(10 + LONG));
        assert_eq!(prefix.end(&wider, 10), None);
        // Half of the rest covered: from 100, 2 * LONG + 100 of 4 * LONG + 200;
        // from 0, under half.
        assert!(rec.mostly(&input, 100));
        assert!(!rec.mostly(&input, 0));
        assert!(!rec.mostly(&input, 101), "no entry starts in 101..");
        assert!(!rec.mostly(&input, input.len() + 5), "past the end");
        // No record: nothing, anywhere.
        assert!(!Record::NONE.is_some());
        assert_eq!(Record::NONE.end(&input, 10), None);
        assert!(!Record::NONE.mostly(&input, 100));
        // Nothing noted: no record to carry.
        let mut empty = LongValues::default();
        assert!(!empty.record(&input).is_some());
        // Foreign bytes: marked, and no answer either.
        assert!(Record::FOREIGN.is_foreign());
        assert!(!Record::NONE.is_foreign() && !rec.is_foreign());
        assert_eq!(Record::FOREIGN.end(&input, 10), None);
        assert!(!Record::FOREIGN.mostly(&input, 100));
    }

    /// A valid JSON string (quotes included) of at least `len` bytes, of the
    /// pieces `kind` picks: 0 plain ASCII, 1 with escapes, 2 with UTF-8 of every
    /// length, 3 all of them.
    fn json_string(next: &mut impl FnMut() -> usize, len: usize, kind: usize) -> Vec<u8> {
        let plain: [&[u8]; 3] = [b"a", b"0123456789abcdef", b"fn main() { x }"];
        let escaped: [&[u8]; 5] = [b"\\n", b"\\\"", b"\\\\", b"\\u00e9", b"\\uD83D\\uDE00"];
        let utf8: [&[u8]; 3] = [
            "\u{e9}".as_bytes(),
            "\u{20ac}".as_bytes(),
            "\u{1f600}".as_bytes(),
        ];
        let mut out = vec![b'"'];
        while out.len() + 1 < len {
            let piece = match (kind, next() % 3) {
                (1, 0) | (3, 1) => escaped[next() % escaped.len()],
                (2, 0) | (3, 2) => utf8[next() % utf8.len()],
                _ => plain[next() % plain.len()],
            };
            out.extend_from_slice(piece);
        }
        out.push(b'"');
        out
    }

    /// Every string token of `input` (`start..end`, quotes included) of
    /// [`LONG`] bytes or more: a walk that knows only quotes and backslashes.
    fn long_strings(input: &[u8]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut i = 0;
        while i < input.len() {
            if input[i] == b'"' {
                let start = i;
                i += 1;
                while input[i] != b'"' {
                    i += if input[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                if i - start >= LONG {
                    found.push((start, i));
                }
            } else {
                i += 1;
            }
        }
        found
    }

    /// Generated requests and batches whose params hold long strings (plain,
    /// escaped, UTF-8; flat, nested at several depths, last in the message, with
    /// and without whitespace) and short ones: messages, with the long
    /// strings' count.
    fn messages() -> Vec<Vec<u8>> {
        let mut next = crate::test_rng::lcg(0x10c6_u64);
        let mut out = Vec::new();
        // Under Miri, a few: the walks over kilobyte strings are slow there.
        let rounds = if cfg!(miri) { 3 } else { 60 };
        for round in 0..rounds {
            let mut s = |extra: usize| {
                let kind = next() % 4;
                let len = LONG - 3 + extra + next() % 6;
                json_string(&mut next, len, kind)
            };
            let (a, b, c) = (s(0), s(40), s(3000));
            let text = |v: &[u8]| String::from_utf8(v.to_vec()).unwrap();
            let (a, b, c) = (text(&a), text(&b), text(&c));
            let params = [
                format!("[{a}]"),
                format!("[{a},1,\"x\"]"),
                format!("[\"x\",{a},{b}]"),
                format!(r#"{{"content":{a}}}"#),
                format!(r#"{{"a":1,"content":{a},"b":true,"c":{b}}}"#),
                format!(
                    r#"{{"name":"t","arguments":{{"path":"p","content":{a},"more":[1,{b},{{"x":{c}}}]}}}}"#
                ),
                format!(r#"[[{a}],{{"k":[{{"k":{b}}}]}},[[[{c}]]]]"#),
                format!(r#"{{"short":"x","last":{c}}}"#),
            ];
            let p = &params[round % params.len()];
            let ws = round % 3 == 1;
            let p = if ws {
                p.replace(",", " ,\n ").replace(":", " : ")
            } else {
                p.clone()
            };
            let req = |id: usize| {
                format!(r#"{{"jsonrpc":"2.0","method":"walk","params":{p},"id":{id}}}"#)
            };
            out.push(req(1).into_bytes());
            if round % 4 == 3 {
                out.push(format!("[{},{}]", req(2), req(3)).into_bytes());
            }
        }
        if cfg!(miri) {
            return out;
        }
        // More long strings than slots, of distinct lengths: the longest kept.
        let many: Vec<String> = (0..SLOTS + 4)
            .map(|i| String::from_utf8(json_string(&mut next, LONG + 7 * i, i % 4)).unwrap())
            .collect();
        out.push(
            format!(
                r#"{{"jsonrpc":"2.0","method":"walk","params":[{}],"id":9}}"#,
                many.join(",")
            )
            .into_bytes(),
        );
        out
    }

    /// What the scanner noted for `input`: through the parser (compact path
    /// first), or the general path alone.
    fn noted(input: &[u8], general: bool) -> Vec<(usize, usize)> {
        let mut long = LongValues::default();
        if general {
            struct Drop0;
            impl crate::parse::scan::ElemSink for Drop0 {
                fn clear(&mut self) {}
                fn push(&mut self, _: crate::parse::scan::ObjSpans) {}
            }
            let mut stack = [0u64; 3];
            let mut top = crate::parse::scan::ObjSpans::default();
            let r = crate::parse::scan::Scanner::new(input, 128, &mut stack, &mut long)
                .general_only()
                .scan_message(&mut top, &mut Drop0, 10);
            assert!(r.is_ok());
        } else {
            let mut parser = crate::Parser::new();
            let m = parser.parse_noting(input, Some(&mut long));
            assert!(!matches!(m, crate::Message::Error(_)));
        }
        let mut entries: Vec<_> = long.entries().collect();
        entries.sort();
        entries
    }

    /// The scanner notes exactly the long strings of a message (the longest
    /// [`SLOTS`] when there are more), on the compact and the general path, and
    /// nothing in messages shorter than [`LONG`].
    #[test]
    fn scanner_notes_the_long_strings() {
        let mut seen = 0;
        for m in messages() {
            let mut want = long_strings(&m);
            if want.len() > SLOTS {
                want.sort_by_key(|&(s, e)| core::cmp::Reverse(e - s));
                want.truncate(SLOTS);
            }
            want.sort();
            for general in [false, true] {
                assert_eq!(noted(&m, general), want, "{}", String::from_utf8_lossy(&m));
            }
            seen += want.len();
        }
        assert!(seen > if cfg!(miri) { 2 } else { 60 }, "{seen}");
        let short = br#"{"jsonrpc":"2.0","method":"m","params":{"a":[1,"x"]},"id":1}"#;
        assert!(noted(short, false).is_empty());
    }

    /// What a handler reads of a value, by every view that skips values:
    /// counts, iteration, `next_delimited`, the bytes of each value.
    fn digest(v: crate::RawValue<'_>, out: &mut String) {
        use crate::Kind;
        use core::fmt::Write;
        match v.kind() {
            Kind::Array => {
                let it = v.array_iter().unwrap();
                let _ = write!(out, "[{}:", it.clone().count());
                let mut rest = it.clone();
                for e in it {
                    let _ = write!(out, "{}/", rest.clone().count());
                    rest.next();
                    digest(e, out);
                    out.push(',');
                }
                out.push(']');
            }
            Kind::Object => {
                let it = v.object_iter().unwrap();
                let _ = write!(out, "{{{}:", it.clone().count());
                for (k, x) in it {
                    let _ = write!(out, "{}=", k.raw().len());
                    digest(x, out);
                    out.push(',');
                }
                let mut m = v.object_iter().unwrap();
                while let Some((_, x)) = m.next_delimited() {
                    let _ = write!(out, "{}|", x.as_bytes().len());
                }
                out.push('}');
            }
            _ => {
                let b = v.as_bytes();
                let _ = write!(out, "{}#{}#{}", b.len(), b[0], b[b.len() - 1]);
            }
        }
        let _ = write!(out, "@{}", v.as_bytes().len());
    }

    /// [`digest`] of a call's params, of what `index` and `get` find, and of
    /// what the typed deserializer reads of them.
    fn digest_params(p: crate::Params<'_>) -> String {
        let mut out = String::new();
        digest(p.raw(), &mut out);
        let _ = core::fmt::Write::write_fmt(
            &mut out,
            format_args!(";{};{};", p.iter().count(), p.members().count()),
        );
        for i in 0..p.iter().count() {
            out.push_str(&p.index(i).map_or(0, |v| v.as_bytes().len()).to_string());
            out.push(',');
        }
        for (k, _) in p.members() {
            let name = String::from_utf8(k.raw().to_vec()).unwrap();
            out.push_str(&p.get(&name).map_or(0, |v| v.as_bytes().len()).to_string());
            out.push(',');
        }
        // Typed: every value ignored (skipped), and every value read.
        let ignored = if p.is_array() {
            p.parse::<Vec<serde::de::IgnoredAny>>().map(|v| v.len())
        } else {
            p.parse::<std::collections::BTreeMap<&str, serde::de::IgnoredAny>>()
                .map(|m| m.len())
        };
        let value = p.parse::<serde_json::Value>().map(|v| v.to_string().len());
        let _ = core::fmt::Write::write_fmt(&mut out, format_args!(";{ignored:?};{value:?}"));
        out
    }

    thread_local! {
        /// Whether the last `walk` call's params carried a record.
        static SAW_RECORD: Cell<bool> = const { Cell::new(false) };
        /// The ticks ([`crate::parse::ops`]) the last `count` call's walks took.
        static TICKS: Cell<u64> = const { Cell::new(0) };
    }

    /// A session's handlers walking params that hold long strings read what
    /// they read without the record (the parser alone, whose views carry
    /// none); their params carry the record exactly when the message holds a
    /// long string.
    #[test]
    fn handlers_read_the_same_with_the_record() {
        let router = crate::Router::builder()
            .method("walk", |call, out| {
                let params = call.params().unwrap();
                SAW_RECORD.set(params.carries_record());
                out.str(&digest_params(params))
            })
            .build()
            .unwrap();
        let mut session = crate::Session::new(router);
        let mut parser = crate::Parser::new();
        let mut with_record = 0;
        for m in messages() {
            let expected = match parser.parse(&m) {
                crate::Message::Request(r) => {
                    assert!(!r.params().unwrap().carries_record());
                    format!(
                        r#"{{"jsonrpc":"2.0","result":{},"id":{}}}"#,
                        serde_json::to_string(&digest_params(r.params().unwrap())).unwrap(),
                        String::from_utf8_lossy(r.id().as_bytes())
                    )
                }
                crate::Message::Batch(b) => {
                    let answers: Vec<String> = b
                        .iter()
                        .map(|item| match item {
                            crate::Item::Request(r) => format!(
                                r#"{{"jsonrpc":"2.0","result":{},"id":{}}}"#,
                                serde_json::to_string(&digest_params(r.params().unwrap())).unwrap(),
                                String::from_utf8_lossy(r.id().as_bytes())
                            ),
                            _ => panic!("a request"),
                        })
                        .collect();
                    format!("[{}]", answers.join(","))
                }
                _ => panic!("a request or a batch"),
            };
            SAW_RECORD.set(false);
            let got = session.handle(&m).expect("an answer");
            assert_eq!(
                String::from_utf8_lossy(got),
                expected,
                "{}",
                String::from_utf8_lossy(&m)
            );
            assert_eq!(SAW_RECORD.get(), !long_strings(&m).is_empty());
            with_record += usize::from(SAW_RECORD.get());
        }
        assert!(
            with_record > if cfg!(miri) { 1 } else { 10 },
            "{with_record}"
        );
    }

    /// What a handler counting around a long string does: the members or
    /// elements of its params (counted, iterated, read typed with each value
    /// ignored), or of its `arguments` (counted, iterated: a view made from
    /// the params).
    fn count_around(p: crate::Params<'_>) -> [usize; 3] {
        use serde::de::IgnoredAny;
        use std::collections::BTreeMap;
        if let Some(args) = p.get("arguments") {
            let members = args.object_iter().unwrap();
            return [members.clone().count(), members.fold(0, |n, _| n + 1), 0];
        }
        if p.is_array() {
            let typed = p.parse::<Vec<IgnoredAny>>().unwrap().len();
            return [p.iter().count(), p.iter().fold(0, |n, _| n + 1), typed];
        }
        let typed = p.parse::<BTreeMap<&str, IgnoredAny>>().unwrap().len();
        [
            p.members().count(),
            p.members().fold(0, |n, _| n + 1),
            typed,
        ]
    }

    /// The record saves the walks it is for: counting and iterating the
    /// members and elements around long strings (of the params and of a view
    /// made from them), and the typed deserializer ignoring them, in a
    /// session's handler (in a batch), cost a few ticks, where the same reads
    /// of the parser's views (no record) walk every byte of the strings; the
    /// answers are the same.
    #[test]
    fn the_record_saves_the_walks_over_long_strings() {
        let long = |c: char| format!("\"{}\"", c.to_string().repeat(4 * LONG));
        let (a, b, c) = (long('a'), long('b'), long('c'));
        let calls = [
            format!(r#"{{"name":"t","arguments":{{"path":"p","content":{a},"n":2}}}}"#),
            format!(r#"[1, {b}, "x"]"#),
            format!(r#"{{"path":"p","content":{c},"n":2}}"#),
        ]
        .map(|p| format!(r#"{{"jsonrpc":"2.0","method":"count","params":{p},"id":1}}"#));
        let batch = format!("[{}]", calls.join(","));
        let router = crate::Router::builder()
            .method("count", |call, out| {
                crate::parse::ops::take();
                let got = count_around(call.params().unwrap());
                TICKS.set(TICKS.get() + crate::parse::ops::take());
                out.str(&format!("{got:?}"))
            })
            .build()
            .unwrap();
        let mut session = crate::Session::new(router);
        TICKS.set(0);
        let got = String::from_utf8(session.handle(batch.as_bytes()).unwrap().to_vec()).unwrap();
        let with_record = TICKS.get();

        let mut parser = crate::Parser::new();
        let mut want = Vec::new();
        let mut without = 0;
        for m in &calls {
            let crate::Message::Request(r) = parser.parse(m.as_bytes()) else {
                panic!("a request")
            };
            crate::parse::ops::take();
            want.push(count_around(r.params().unwrap()));
            without += crate::parse::ops::take();
        }
        assert_eq!(want, [[3, 3, 0], [3, 3, 3], [3, 3, 3]]);
        let answers: Vec<String> = want
            .iter()
            .map(|w| format!(r#"{{"jsonrpc":"2.0","result":"{w:?}","id":1}}"#))
            .collect();
        assert_eq!(got, format!("[{}]", answers.join(",")));
        // Without the record, each of the eight walks over a string of 4 LONG
        // bytes ticks at least once a 64 bytes.
        assert!(without >= 8 * (4 * LONG as u64) / 64, "{without}");
        assert!(with_record * 20 < without, "{with_record} vs {without}");
    }
}
