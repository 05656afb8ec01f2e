//! The long strings of the message being handled: where each starts and ends,
//! so that a handler skipping one (iterating past it, counting the members
//! around it) jumps over it instead of walking it again: file contents in an
//! MCP `tools/call` or an LSP `didOpen`, a raw transaction, a base64 blob.
//!
//! The scanner notes every string of [`LONG`] bytes or more it validates (and
//! the rare number that long; the longest [`SLOTS`] kept) in the session's
//! [`LongValues`]; it notes them only in messages of [`LONG`] bytes or
//! more, in copies of its loops that do, so shorter messages pay nothing.
//! Arrays and objects are not noted: keeping their opening offsets costs every
//! container of every long message a store and a compare, more (measured) than
//! the walks it would save on dense JSON. While a [`Session`] dispatches the
//! message, the record is installed in a thread-local ([`install`]) as
//! addresses: the views of the message ([`crate::Params`], [`crate::RawValue`]
//! and their iterators) look a long value up by the address of its first byte
//! ([`recorded_end`]).
//!
//! Why an address is enough, and the record can never mislead: a recorded entry
//! says "the JSON value starting at byte address `a` ends at address `e`",
//! a fact about the bytes there, true for any JSON text in which a value starts
//! at `a` (a value's end follows from its bytes alone). The record is installed
//! only while the message is borrowed by the session (the bytes cannot change
//! or be freed), and removed before the session returns, unwinding included;
//! the lookups only ever bound a skip within the slice they are given. A view
//! made by other means (another parser, a copy, `RawValue::from_validated`)
//! simply finds no entry and walks.
//!
//! [`Session`]: crate::Session

use core::cell::Cell;

/// A value this long (in bytes) or longer is noted.
pub(crate) const LONG: usize = 1024;

/// How many long values the record keeps (the longest ones).
pub(crate) const SLOTS: usize = 8;

/// The scanner's record of one message's long values, as offsets into it. Its
/// owner clears it before a scan whose values it reads.
#[derive(Clone, Debug, Default)]
pub(crate) struct LongValues {
    len: usize,
    start: [usize; SLOTS],
    end: [usize; SLOTS],
}

impl LongValues {
    /// Forgets the previous message's values.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Whether no long value was noted.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The noted values, as `(start, end)` offsets.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.start[..self.len]
            .iter()
            .copied()
            .zip(self.end[..self.len].iter().copied())
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

/// The installed record: `[len, start addresses.., end addresses..]`.
const CELLS: usize = 1 + 2 * SLOTS;

thread_local! {
    static INSTALLED: [Cell<usize>; CELLS] = const { [const { Cell::new(0) }; CELLS] };
}

/// The record installed by [`install`], removed when this is dropped.
pub(crate) struct Installed(());

/// Installs `long`, the record of `input`'s long values, on this thread until
/// the returned guard is dropped; `None` (nothing installed) while another
/// record is installed (a session handling a message inside a handler of
/// another: the outer message's record stays, the inner one's values are
/// walked).
///
/// The caller keeps `input` borrowed (unchanged, alive) until it drops the
/// guard, on the thread that installed it (guards are scoped, never held across
/// an `await`).
#[cold]
#[inline(never)]
pub(crate) fn install(input: &[u8], long: &LongValues) -> Option<Installed> {
    let base = input.as_ptr().addr();
    INSTALLED.with(|cells| {
        if cells[0].get() != 0 {
            return None;
        }
        for (i, (start, end)) in long.entries().enumerate() {
            cells[1 + i].set(base + start);
            cells[1 + SLOTS + i].set(base + end);
        }
        cells[0].set(long.len);
        Some(Installed(()))
    })
}

impl Drop for Installed {
    fn drop(&mut self) {
        INSTALLED.with(|cells| cells[0].set(0));
    }
}

/// The end (an index of `b`) of the value starting at `b[p]`, if the message
/// being handled recorded it and it ends inside `b`. Only worth asking for
/// values that may be long: `b.len() - p >= LONG`.
#[inline]
pub(crate) fn recorded_end(b: &[u8], p: usize) -> Option<usize> {
    let base = b.as_ptr().addr();
    let at = base + p;
    INSTALLED.with(|cells| {
        let len = cells[0].get().min(SLOTS);
        (0..len)
            .find(|&i| cells[1 + i].get() == at)
            .map(|i| cells[1 + SLOTS + i].get().wrapping_sub(base))
            .filter(|&end| end > p && end <= b.len())
    })
}

/// Whether a recorded value starting in `b[from..]` covers at least half of
/// it: then walking `b[from..]` value by value ([`recorded_end`] jumping that
/// one) beats one walk over all its bytes.
#[inline]
pub(crate) fn mostly_recorded(b: &[u8], from: usize) -> bool {
    if b.len().saturating_sub(from) < LONG {
        return false;
    }
    let base = b.as_ptr().addr();
    let (lo, hi) = (base + from, base + b.len());
    INSTALLED.with(|cells| {
        let len = cells[0].get().min(SLOTS);
        (0..len).any(|i| {
            let (s, e) = (cells[1 + i].get(), cells[1 + SLOTS + i].get());
            s >= lo && e <= hi && 2 * (e - s) >= hi - lo
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(l.is_empty(), "shorter than LONG: not noted");
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
        assert!(l.is_empty());
    }

    #[test]
    fn lookups_only_while_installed_and_within_the_slice() {
        let input = vec![b' '; 4 * LONG + 300];
        let long = long_values(&[(10, 10 + LONG), (100, 2 * LONG + 200)]);
        assert_eq!(recorded_end(&input, 10), None, "nothing installed yet");
        {
            let _guard = install(&input, &long).expect("nothing installed");
            assert_eq!(recorded_end(&input, 10), Some(10 + LONG));
            assert_eq!(recorded_end(&input, 100), Some(2 * LONG + 200));
            assert_eq!(recorded_end(&input, 11), None, "not a start");
            // A sub-slice: the same addresses, indices of the sub-slice.
            assert_eq!(recorded_end(&input[5..], 5), Some(5 + LONG));
            // An end past the slice is not handed out.
            assert_eq!(recorded_end(&input[..LONG], 10), None);
            // Another buffer with the same offsets: other addresses.
            let other = input.clone();
            assert_eq!(recorded_end(&other, 10), None);
            // A nested install is refused: the outer record stays.
            {
                let inner = long_values(&[(0, LONG)]);
                assert!(install(&other, &inner).is_none());
                assert_eq!(recorded_end(&other, 0), None);
                assert_eq!(recorded_end(&input, 10), Some(10 + LONG));
            }
            assert_eq!(recorded_end(&input, 10), Some(10 + LONG));
            // Half of the rest covered: from 100, 2 * LONG + 100 of 4 * LONG + 200;
            // from 0, under half.
            assert!(mostly_recorded(&input, 100));
            assert!(!mostly_recorded(&input, 0));
            assert!(!mostly_recorded(&input, 101), "no entry starts in 101..");
        }
        assert_eq!(recorded_end(&input, 10), None, "removed with the guard");
        assert!(!mostly_recorded(&input, 100));
    }

    #[test]
    fn removed_when_unwinding() {
        let input = vec![b' '; 2 * LONG];
        let long = long_values(&[(0, LONG)]);
        let r = std::panic::catch_unwind(|| {
            let _guard = install(&input, &long).expect("nothing installed");
            assert_eq!(recorded_end(&input, 0), Some(LONG));
            panic!("handler panics");
        });
        assert!(r.is_err());
        assert_eq!(recorded_end(&input, 0), None);
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

    /// [`digest`] of a call's params, and of what `index` and `get` find.
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
        out
    }

    thread_local! {
        /// Whether the last `walk` call ran with a record installed.
        static SAW_RECORD: Cell<bool> = const { Cell::new(false) };
    }

    /// A session's handlers walking params that hold long strings read what
    /// they read without the record (the parser alone, nothing installed);
    /// the record is installed while they run, exactly when the message holds
    /// a long string, and removed after.
    #[test]
    fn handlers_read_the_same_with_the_record() {
        let router = crate::Router::builder()
            .method("walk", |call, out| {
                SAW_RECORD.set(INSTALLED.with(|c| c[0].get()) > 0);
                out.str(&digest_params(call.params().unwrap()))
            })
            .build()
            .unwrap();
        let mut session = crate::Session::new(router);
        let mut parser = crate::Parser::new();
        let mut with_record = 0;
        for m in messages() {
            let expected = match parser.parse(&m) {
                crate::Message::Request(r) => format!(
                    r#"{{"jsonrpc":"2.0","result":"{}","id":{}}}"#,
                    digest_params(r.params().unwrap()),
                    String::from_utf8_lossy(r.id().as_bytes())
                ),
                crate::Message::Batch(b) => {
                    let answers: Vec<String> = b
                        .iter()
                        .map(|item| match item {
                            crate::Item::Request(r) => format!(
                                r#"{{"jsonrpc":"2.0","result":"{}","id":{}}}"#,
                                digest_params(r.params().unwrap()),
                                String::from_utf8_lossy(r.id().as_bytes())
                            ),
                            _ => panic!("a request"),
                        })
                        .collect();
                    format!("[{}]", answers.join(","))
                }
                _ => panic!("a request or a batch"),
            };
            assert_eq!(INSTALLED.with(|c| c[0].get()), 0);
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
            assert_eq!(
                INSTALLED.with(|c| c[0].get()),
                0,
                "removed after the message"
            );
        }
        assert!(
            with_record > if cfg!(miri) { 1 } else { 10 },
            "{with_record}"
        );
    }
}
