//! Property tests.
//!
//! 1. Differential: `Parser::validate` agrees with an independent reference verdict
//!    (`switchboard_tests::reference_accepts`, built on `serde_json`) on generated
//!    JSON texts (random whitespace, every escape, `\uXXXX`, surrogate pairs, lone
//!    surrogates, all of Unicode, numbers of every shape, nesting around the depth
//!    limit) and on mutations of them (inserted, deleted, replaced bytes, including
//!    invalid UTF-8, and truncation). `Parser::parse` gives -32700 exactly when
//!    `validate` refuses, for the same reason.
//! 2. Round trip: for generated JSON-RPC requests, notifications and batches, the
//!    method, id and params views give back exactly what was generated.
//!
//! The known divergences between `serde_json` and RFC 8259 + SPEC.md, and how the
//! reference handles each, are pinned by `serde_json_facts` below.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use serde::de::IgnoredAny;
use serde_json::Value;
use switchboard::{Code, Item, Message, Params, Parser, Reason};
use switchboard_tests::reference_accepts;

fn config(cases: u32) -> Config {
    // No regression files: a failure prints its minimal input, to be added to a table test.
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------
// What serde_json does, pinned: the reference verdict relies on each of these.
// ---------------------------------------------------------------------------------

#[test]
fn serde_json_facts() {
    let ignored = |s: &[u8]| serde_json::from_slice::<IgnoredAny>(s).is_ok();
    let ignored_str = |s: &str| serde_json::from_str::<IgnoredAny>(s).is_ok();
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));

    // 1. `from_slice::<IgnoredAny>` skips strings without checking UTF-8, so the
    //    reference checks UTF-8 itself (SPEC.md: invalid UTF-8 anywhere is -32700).
    assert!(ignored(b"[\"\xff\"]"));
    assert!(ignored(b"[\"\xed\xa0\x80\"]")); // an encoded surrogate
    assert!(serde_json::from_slice::<Value>(b"[\"\xff\"]").is_err());
    assert!(!reference_accepts(b"[\"\xff\"]"));

    // 2. Lone surrogate escapes: accepted when ignored, refused when decoded into a
    //    String or a Value. SPEC.md calls them valid JSON, so IgnoredAny is the faithful
    //    target; the round-trip property keeps them out of strings it decodes with serde.
    assert!(ignored_str(r#"["\ud800", "\udc00x", "\ud800\u0041"]"#));
    assert!(serde_json::from_str::<String>(r#""\ud800""#).is_err());
    assert!(serde_json::from_str::<Value>(r#""\udc00""#).is_err());
    assert!(reference_accepts(br#""\ud800""#));

    // 3. Depth: IgnoredAny skips iteratively, with no limit at all; Value and typed
    //    targets stop at 128 levels already (serde_json's limit is "fewer than 128"),
    //    while SPEC.md accepts exactly 128. The reference counts depth itself.
    assert!(ignored_str(&deep(10_000)));
    assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
    assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
    assert!(reference_accepts(deep(128).as_bytes()));
    assert!(!reference_accepts(deep(129).as_bytes()));

    // 4. Numbers: IgnoredAny checks the grammar only; Value and f64 refuse numbers
    //    out of f64 range ("number out of range"), which SPEC.md passes through
    //    untouched. RawValue (feature raw_value) also keeps them.
    for n in [
        "1e400",
        "-1e400",
        "123123e100000",
        &"9".repeat(500),
        "1e-99999",
    ] {
        assert!(ignored_str(n), "{n}");
        assert!(
            serde_json::from_str::<&serde_json::value::RawValue>(n).is_ok(),
            "{n}"
        );
    }
    assert!(serde_json::from_str::<Value>("1e400").is_err());
    assert!(serde_json::from_str::<f64>("1e400").is_err());
    for n in [
        "01", "1.", ".1", "-", "1e", "1e+", "+1", "0x1", "1.e1", "-01", "Infinity", "NaN",
    ] {
        assert!(!ignored_str(n), "{n}");
    }

    // 5. Byte-order mark: refused (U+FEFF is not JSON whitespace), as SPEC.md wants.
    assert!(!ignored_str("\u{feff}{}"));
    assert!(!ignored(b"\xEF\xBB\xBF{}"));

    // 6. Whitespace: only the four JSON ones, around and after the value.
    assert!(ignored_str(" \t\r\n{} \t\r\n"));
    for bad in ["{}\u{0b}", "\u{0c}{}", "{}\u{a0}", "{} x", "{}{}", "", "  "] {
        assert!(!ignored_str(bad), "{bad:?}");
    }

    // 7. Control characters must be escaped; DEL need not be.
    assert!(!ignored_str("\"\u{1f}\""));
    assert!(ignored_str("\"\u{7f}\""));
}

// ---------------------------------------------------------------------------------
// Generated JSON.
// ---------------------------------------------------------------------------------

/// A deterministic source of rendering choices (whitespace, escape styles), seeded
/// by proptest so that every case is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// One unit of a generated string.
#[derive(Clone, Debug)]
enum Unit {
    /// A character, written raw or escaped (the renderer chooses).
    Char(char),
    /// An escaped lone surrogate, `\uD800`..`\uDFFF` (valid JSON per SPEC.md).
    Lone(u16),
}

/// A generated string value. A high `Lone` is never directly followed by a low
/// `Lone` (that would be a valid pair, not two lone surrogates).
#[derive(Clone, Debug)]
struct JStr(Vec<Unit>);

impl JStr {
    /// The decoded value, with U+FFFD for each lone surrogate (as `Method` shows it).
    fn decoded(&self) -> String {
        self.0
            .iter()
            .map(|u| match u {
                Unit::Char(c) => *c,
                Unit::Lone(_) => '\u{FFFD}',
            })
            .collect()
    }

    fn has_lone(&self) -> bool {
        self.0.iter().any(|u| matches!(u, Unit::Lone(_)))
    }

    /// Writes `"…"`, choosing for each character among the spellings JSON allows.
    fn render(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        out.push(b'"');
        for u in &self.0 {
            match *u {
                Unit::Lone(s) => push_u_escape(rng, s, out),
                Unit::Char(c) => render_char(rng, c, out),
            }
        }
        out.push(b'"');
    }
}

fn push_u_escape(rng: &mut Rng, unit: u16, out: &mut Vec<u8>) {
    let hex = if rng.one_in(2) {
        format!("\\u{unit:04x}")
    } else {
        format!("\\u{unit:04X}")
    };
    let hex = if rng.one_in(4) {
        mixed_case(rng, &hex)
    } else {
        hex
    };
    out.extend_from_slice(hex.as_bytes());
}

fn mixed_case(rng: &mut Rng, s: &str) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| {
            if i > 1 && rng.one_in(2) {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

fn render_char(rng: &mut Rng, c: char, out: &mut Vec<u8>) {
    let short = match c {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        '/' if rng.one_in(2) => Some("\\/"),
        _ => None,
    };
    let must_escape = matches!(c, '"' | '\\') || (c as u32) < 0x20;
    match short {
        Some(s) if must_escape || rng.one_in(2) => out.extend_from_slice(s.as_bytes()),
        _ if must_escape || rng.one_in(4) => {
            let mut units = [0u16; 2];
            for &unit in c.encode_utf16(&mut units).iter() {
                push_u_escape(rng, unit, out);
            }
        }
        _ => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// A generated JSON value; numbers are kept as their token.
#[derive(Clone, Debug)]
enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(JStr),
    Arr(Vec<Json>),
    Obj(Vec<(JStr, Json)>),
}

fn ws(rng: &mut Rng, out: &mut Vec<u8>) {
    if rng.one_in(3) {
        for _ in 0..=rng.below(3) {
            out.push(b" \t\n\r"[rng.below(4) as usize]);
        }
    }
}

impl Json {
    fn render(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.extend_from_slice(b"null"),
            Json::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Json::Num(n) => out.extend_from_slice(n.as_bytes()),
            Json::Str(s) => s.render(rng, out),
            Json::Arr(items) => {
                out.push(b'[');
                ws(rng, out);
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                        ws(rng, out);
                    }
                    v.render(rng, out);
                    ws(rng, out);
                }
                out.push(b']');
            }
            Json::Obj(members) => {
                out.push(b'{');
                ws(rng, out);
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                        ws(rng, out);
                    }
                    k.render(rng, out);
                    ws(rng, out);
                    out.push(b':');
                    ws(rng, out);
                    v.render(rng, out);
                    ws(rng, out);
                }
                out.push(b'}');
            }
        }
    }

    fn to_bytes(&self, rng: &mut Rng) -> Vec<u8> {
        let mut out = Vec::new();
        self.render(rng, &mut out);
        out
    }

    /// The value serde_json should read from any rendering (no lone surrogates, tame
    /// numbers: see `serde_json_facts`). Duplicate keys: the last wins, as in serde_json.
    fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Num(n) => serde_json::from_str(n).expect("tame number"),
            Json::Str(s) => Value::String(s.decoded()),
            Json::Arr(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Obj(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.decoded(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

fn char_strategy() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => proptest::char::range(' ', '~'),
        2 => prop::sample::select(vec!['"', '\\', '/', '\u{0}', '\u{8}', '\u{c}', '\n', '\r', '\t', '\u{1f}', '\u{7f}']),
        2 => prop::sample::select(vec!['é', '€', '😀', '\u{2028}', '\u{feff}', '\u{fffd}', '\u{ffff}', '\u{10ffff}', '\u{e000}', '\u{d7ff}']),
        2 => any::<char>(),
    ]
}

fn jstr_strategy(max_len: usize, lone: bool) -> impl Strategy<Value = JStr> {
    let unit = if lone {
        prop_oneof![
            8 => char_strategy().prop_map(Unit::Char),
            1 => (0xD800u16..=0xDFFF).prop_map(Unit::Lone),
        ]
        .boxed()
    } else {
        char_strategy().prop_map(Unit::Char).boxed()
    };
    prop::collection::vec(unit, 0..max_len).prop_map(|mut units| {
        // Two lone halves in a row that form a pair are not lone: drop the second.
        let mut i = 1;
        while i < units.len() {
            match (&units[i - 1], &units[i]) {
                (Unit::Lone(0xD800..=0xDBFF), Unit::Lone(0xDC00..=0xDFFF)) => {
                    units.remove(i);
                }
                _ => i += 1,
            }
        }
        JStr(units)
    })
}

/// Numbers of every shape the grammar allows, including ones no f64 holds.
fn number_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,12})?([eE][+-]?[0-9]{1,5})?",
        1 => "-?[1-9][0-9]{300,400}",
        1 => prop::sample::select(vec!["0", "-0", "0.0", "-0.0e-0", "1E+2", "1e400", "-1e-400", "9007199254740993", "18446744073709551616", "-9223372036854775809"]).prop_map(String::from),
    ]
}

/// Numbers serde_json reads into a `Value` (see `serde_json_facts`, fact 4).
fn tame_number_strategy() -> impl Strategy<Value = String> {
    "-?(0|[1-9][0-9]{0,17})(\\.[0-9]{1,8})?([eE][+-]?[0-9]{1,2})?"
}

fn json_strategy(lone: bool, numbers: BoxedStrategy<String>) -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        numbers.prop_map(Json::Num),
        jstr_strategy(12, lone).prop_map(Json::Str),
    ];
    leaf.prop_recursive(6, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Arr),
            prop::collection::vec((jstr_strategy(8, lone), inner), 0..6).prop_map(Json::Obj),
        ]
    })
}

fn any_json() -> impl Strategy<Value = Json> {
    json_strategy(true, number_strategy().boxed())
}

fn tame_json() -> impl Strategy<Value = Json> {
    json_strategy(false, tame_number_strategy().boxed())
}

/// `levels` containers (arrays or objects, by `rng`) around `inner`.
fn wrap(inner: &[u8], levels: usize, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(inner.len() + levels * 8);
    let mut closers = Vec::with_capacity(levels);
    for _ in 0..levels {
        if rng.one_in(2) {
            out.push(b'[');
            if rng.one_in(4) {
                out.extend_from_slice(b"0,");
            }
            closers.push(b']');
        } else {
            out.extend_from_slice(br#"{"k":"#);
            closers.push(b'}');
        }
        ws(rng, &mut out);
    }
    out.extend_from_slice(inner);
    while let Some(c) = closers.pop() {
        ws(rng, &mut out);
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------
// Mutations.
// ---------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Mutation {
    Insert(Index, u8),
    Delete(Index),
    Replace(Index, u8),
    Truncate(Index),
    /// A byte-order mark (UTF-8, or UTF-16's) in front.
    PrependBom(&'static [u8]),
}

fn byte_strategy() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(b"{}[],:\"\\/ \t\n\r0123456789-+.eEtrufalsn".to_vec()),
        2 => prop::sample::select(vec![0x00, 0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xbb, 0xf0, 0xf4, 0xf5, 0xff]),
        2 => any::<u8>(),
    ]
}

fn mutation_strategy() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<Index>(), byte_strategy()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        3 => any::<Index>().prop_map(Mutation::Delete),
        4 => (any::<Index>(), byte_strategy()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        1 => prop::sample::select(vec![&b"\xEF\xBB\xBF"[..], b"\xFE\xFF", b"\xFF\xFE"]).prop_map(Mutation::PrependBom),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        match *m {
            Mutation::Insert(ref i, b) => {
                let at = i.index(bytes.len() + 1);
                bytes.insert(at, b);
            }
            Mutation::Delete(ref i) if !bytes.is_empty() => {
                bytes.remove(i.index(bytes.len()));
            }
            Mutation::Replace(ref i, b) if !bytes.is_empty() => {
                let at = i.index(bytes.len());
                bytes[at] = b;
            }
            Mutation::Truncate(ref i) => bytes.truncate(i.index(bytes.len() + 1)),
            Mutation::PrependBom(bom) => {
                bytes.splice(0..0, bom.iter().copied());
            }
            _ => {}
        }
    }
    bytes
}

/// `validate` against the reference, and `parse` against `validate`.
fn check_against_reference(parser: &mut Parser, bytes: &[u8]) -> Result<(), TestCaseError> {
    let ours = parser.validate(bytes);
    let reference = reference_accepts(bytes);
    prop_assert_eq!(
        ours.is_ok(),
        reference,
        "validate {:?} but reference {} for {:?}",
        ours,
        reference,
        String::from_utf8_lossy(bytes)
    );
    if let Err(e) = ours {
        prop_assert_eq!(e.code(), Code::ParseError);
        prop_assert!(e.offset().is_some_and(|o| o <= bytes.len()), "{:?}", e);
    }
    let parsed = match parser.parse(bytes) {
        Message::Error(e) if e.code() == Code::ParseError => Some((e.reason(), e.offset())),
        _ => None,
    };
    prop_assert_eq!(
        parsed,
        ours.err().map(|e| (e.reason(), e.offset())),
        "parse and validate differ"
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn generated_json_is_valid(json in any_json(), seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut text = Vec::new();
        ws(&mut rng, &mut text);
        json.render(&mut rng, &mut text);
        ws(&mut rng, &mut text);
        let mut parser = Parser::new();
        prop_assert!(reference_accepts(&text), "the generator made invalid JSON");
        prop_assert_eq!(parser.validate(&text), Ok(()), "{:?}", String::from_utf8_lossy(&text));
        check_against_reference(&mut parser, &text)?;
    }

    #[test]
    fn mutated_json_agrees_with_reference(
        json in any_json(),
        seed in any::<u64>(),
        mutations in prop::collection::vec(mutation_strategy(), 1..4),
    ) {
        let mut rng = Rng(seed);
        let text = mutate(json.to_bytes(&mut rng), &mutations);
        check_against_reference(&mut Parser::new(), &text)?;
    }
}

proptest! {
    #![proptest_config(config(600))]

    #[test]
    fn nesting_around_the_limit_agrees_with_reference(
        json in any_json(),
        levels in prop_oneof![0usize..140, 120usize..135],
        seed in any::<u64>(),
        mutations in prop::collection::vec(mutation_strategy(), 0..2),
    ) {
        let mut rng = Rng(seed);
        let inner = json.to_bytes(&mut rng);
        let text = mutate(wrap(&inner, levels, &mut rng), &mutations);
        check_against_reference(&mut Parser::new(), &text)?;
    }
}

// ---------------------------------------------------------------------------------
// JSON-RPC round trip.
// ---------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum GenId {
    Str(JStr),
    Num(String),
    Null,
}

#[derive(Clone, Debug)]
enum GenParams {
    Null,
    Arr(Vec<Json>),
    Obj(Vec<(JStr, Json)>),
}

#[derive(Clone, Debug)]
struct GenCall {
    method: JStr,
    id: Option<GenId>,
    params: Option<GenParams>,
    /// Unknown members: ignored by the classifier.
    extras: Vec<(JStr, Json)>,
}

/// What the renderer wrote, to compare the views with.
struct Rendered {
    text: Vec<u8>,
    id: Option<Vec<u8>>,
    params: Option<Vec<u8>>,
    /// Positional elements, or `(key inside the quotes, value)` for named params.
    elems: Vec<(Option<Vec<u8>>, Vec<u8>)>,
}

const RPC_NAMES: [&str; 6] = ["jsonrpc", "method", "params", "id", "result", "error"];

fn call_strategy() -> impl Strategy<Value = GenCall> {
    let id = prop_oneof![
        jstr_strategy(10, false).prop_map(GenId::Str),
        number_strategy().prop_map(GenId::Num),
        Just(GenId::Null),
    ];
    let params = prop_oneof![
        Just(GenParams::Null),
        prop::collection::vec(tame_json(), 0..6).prop_map(GenParams::Arr),
        prop::collection::vec((jstr_strategy(6, false), tame_json()), 0..6)
            .prop_map(GenParams::Obj),
    ];
    let extra_key = jstr_strategy(8, true).prop_filter("an RPC member name", |k| {
        !RPC_NAMES.contains(&k.decoded().as_str())
    });
    (
        jstr_strategy(16, true),
        prop::option::weighted(0.8, id),
        prop::option::weighted(0.8, params),
        prop::collection::vec((extra_key, tame_json()), 0..3),
    )
        .prop_map(|(method, id, params, extras)| GenCall {
            method,
            id,
            params,
            extras,
        })
}

/// Writes a member name, sometimes with needless escapes (`"\u006dethod"`).
fn render_name(rng: &mut Rng, name: &str, out: &mut Vec<u8>) {
    let escape_some = rng.one_in(3);
    out.push(b'"');
    for b in name.bytes() {
        if escape_some && rng.one_in(3) {
            push_u_escape(rng, b.into(), out);
        } else {
            out.push(b);
        }
    }
    out.push(b'"');
}

fn render_call(call: &GenCall, rng: &mut Rng) -> Rendered {
    let mut members: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let name = |rng: &mut Rng, n: &str| {
        let mut out = Vec::new();
        render_name(rng, n, &mut out);
        out
    };
    let version = if rng.one_in(4) {
        br#""2\u002E0""#.to_vec()
    } else {
        br#""2.0""#.to_vec()
    };
    members.push((name(rng, "jsonrpc"), version));
    let mut method = Vec::new();
    call.method.render(rng, &mut method);
    members.push((name(rng, "method"), method));
    let mut rendered_id = None;
    if let Some(id) = &call.id {
        let mut out = Vec::new();
        match id {
            GenId::Str(s) => s.render(rng, &mut out),
            GenId::Num(n) => out.extend_from_slice(n.as_bytes()),
            GenId::Null => out.extend_from_slice(b"null"),
        }
        rendered_id = Some(out.clone());
        members.push((name(rng, "id"), out));
    }
    let (mut rendered_params, mut elems) = (None, Vec::new());
    if let Some(params) = &call.params {
        let mut out = Vec::new();
        match params {
            GenParams::Null => out.extend_from_slice(b"null"),
            GenParams::Arr(items) => {
                out.push(b'[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    ws(rng, &mut out);
                    let e = v.to_bytes(rng);
                    out.extend_from_slice(&e);
                    elems.push((None, e));
                    ws(rng, &mut out);
                }
                out.push(b']');
            }
            GenParams::Obj(ms) => {
                out.push(b'{');
                for (i, (k, v)) in ms.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    ws(rng, &mut out);
                    let key = {
                        let mut o = Vec::new();
                        k.render(rng, &mut o);
                        o
                    };
                    out.extend_from_slice(&key);
                    ws(rng, &mut out);
                    out.push(b':');
                    ws(rng, &mut out);
                    let e = v.to_bytes(rng);
                    out.extend_from_slice(&e);
                    elems.push((Some(key[1..key.len() - 1].to_vec()), e));
                    ws(rng, &mut out);
                }
                out.push(b'}');
            }
        }
        if !matches!(params, GenParams::Null) {
            rendered_params = Some(out.clone());
        }
        members.push((name(rng, "params"), out));
    }
    for (k, v) in &call.extras {
        let mut key = Vec::new();
        k.render(rng, &mut key);
        members.push((key, v.to_bytes(rng)));
    }
    // Any member order.
    for i in (1..members.len()).rev() {
        members.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut text = vec![b'{'];
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            text.push(b',');
        }
        ws(rng, &mut text);
        text.extend_from_slice(k);
        ws(rng, &mut text);
        text.push(b':');
        ws(rng, &mut text);
        text.extend_from_slice(v);
        ws(rng, &mut text);
    }
    text.push(b'}');
    Rendered {
        text,
        id: rendered_id,
        params: rendered_params,
        elems,
    }
}

fn check_params(
    call: &GenCall,
    r: &Rendered,
    params: Option<Params<'_>>,
) -> Result<(), TestCaseError> {
    let expected = match &call.params {
        None | Some(GenParams::Null) => {
            prop_assert!(params.is_none(), "absent or null params must give None");
            return Ok(());
        }
        Some(GenParams::Arr(items)) => Json::Arr(items.clone()),
        Some(GenParams::Obj(ms)) => Json::Obj(ms.clone()),
    };
    let params = params.expect("params present");
    prop_assert_eq!(Some(params.as_bytes()), r.params.as_deref());
    let reread: Value = serde_json::from_slice(params.as_bytes()).expect("params re-parse");
    prop_assert_eq!(reread, expected.to_value());
    match &call.params {
        Some(GenParams::Arr(items)) => {
            prop_assert!(params.is_array() && !params.is_object());
            let got: Vec<&[u8]> = params.iter().map(|v| v.as_bytes()).collect();
            let want: Vec<&[u8]> = r.elems.iter().map(|(_, v)| v.as_slice()).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(params.members().count(), 0);
            for (i, item) in items.iter().enumerate() {
                let v = params.index(i).expect("index");
                prop_assert_eq!(
                    serde_json::from_slice::<Value>(v.as_bytes()).unwrap(),
                    item.to_value()
                );
                if let Json::Str(s) = item {
                    prop_assert!(v.str_eq(&s.decoded()));
                }
            }
            prop_assert!(params.index(items.len()).is_none());
        }
        Some(GenParams::Obj(ms)) => {
            prop_assert!(params.is_object() && !params.is_array());
            prop_assert_eq!(params.iter().count(), 0);
            let got: Vec<(&[u8], &[u8])> = params
                .members()
                .map(|(k, v)| (k.raw(), v.as_bytes()))
                .collect();
            let want: Vec<(&[u8], &[u8])> = r
                .elems
                .iter()
                .map(|(k, v)| (k.as_deref().unwrap(), v.as_slice()))
                .collect();
            prop_assert_eq!(got, want);
            for (k, _) in ms {
                let name = k.decoded();
                let first = ms.iter().position(|(k2, _)| k2.decoded() == name).unwrap();
                let v = params.get(&name).expect("get finds a present member");
                prop_assert_eq!(
                    v.as_bytes(),
                    r.elems[first].1.as_slice(),
                    "get({:?}) is the first",
                    name
                );
            }
            let absent = "\u{1}absent";
            prop_assert!(
                ms.iter().any(|(k, _)| k.decoded() == absent) || params.get(absent).is_none()
            );
        }
        _ => unreachable!(),
    }
    Ok(())
}

fn check_method(call: &GenCall, m: switchboard::Method<'_>) -> Result<(), TestCaseError> {
    let decoded = call.method.decoded();
    prop_assert_eq!(m.as_str(), decoded.as_str());
    prop_assert_eq!(m.is_exact(), !call.method.has_lone());
    prop_assert_eq!(m == decoded.as_str(), !call.method.has_lone());
    prop_assert_eq!(
        m.lookup_key(),
        (!call.method.has_lone()).then_some(decoded.as_str())
    );
    prop_assert_eq!(m.is_reserved(), decoded.starts_with("rpc."));
    Ok(())
}

fn check_call(call: &GenCall, r: &Rendered, item: Item<'_>) -> Result<(), TestCaseError> {
    match (item, &call.id) {
        (Item::Request(req), Some(id)) => {
            check_method(call, req.method())?;
            let got = req.id();
            prop_assert_eq!(
                Some(got.as_bytes()),
                r.id.as_deref(),
                "ids are echoed byte for byte"
            );
            match id {
                GenId::Str(s) => {
                    prop_assert!(got.is_string());
                    prop_assert_eq!(
                        serde_json::from_slice::<String>(got.as_bytes()).unwrap(),
                        s.decoded()
                    );
                }
                GenId::Num(n) => {
                    prop_assert!(got.is_number());
                    prop_assert_eq!(got.as_str(), n.as_str());
                    prop_assert!(serde_json::from_slice::<IgnoredAny>(got.as_bytes()).is_ok());
                }
                GenId::Null => prop_assert!(got.is_null()),
            }
            check_params(call, r, req.params())
        }
        (Item::Notification(n), None) => {
            check_method(call, n.method())?;
            check_params(call, r, n.params())
        }
        (other, id) => {
            prop_assert!(
                false,
                "expected a {}, got {:?}",
                if id.is_some() {
                    "request"
                } else {
                    "notification"
                },
                other
            );
            Ok(())
        }
    }
}

fn as_item(msg: Message<'_>) -> Item<'_> {
    match msg {
        Message::Request(r) => Item::Request(r),
        Message::Notification(n) => Item::Notification(n),
        Message::Response(r) => Item::Response(r),
        Message::Error(e) => Item::Error(e),
        Message::Batch(b) => panic!("a single call parsed as a batch: {b:?}"),
    }
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn calls_round_trip(call in call_strategy(), seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let r = render_call(&call, &mut rng);
        prop_assert!(reference_accepts(&r.text));
        let mut parser = Parser::new();
        let item = as_item(parser.parse(&r.text));
        check_call(&call, &r, item)?;
    }
}

/// A batch element: a call, or a value that is not an object.
#[derive(Clone, Debug)]
enum GenElem {
    Call(GenCall),
    NotAnObject(Json),
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn batches_round_trip(
        elems in prop::collection::vec(
            prop_oneof![
                6 => call_strategy().prop_map(GenElem::Call),
                1 => tame_json()
                    .prop_filter("an object", |j| !matches!(j, Json::Obj(_)))
                    .prop_map(GenElem::NotAnObject),
            ],
            1..12,
        ),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let mut text = vec![b'['];
        let mut rendered = Vec::new();
        for (i, e) in elems.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            ws(&mut rng, &mut text);
            let r = match e {
                GenElem::Call(c) => render_call(c, &mut rng),
                GenElem::NotAnObject(j) => {
                    Rendered { text: j.to_bytes(&mut rng), id: None, params: None, elems: Vec::new() }
                }
            };
            text.extend_from_slice(&r.text);
            ws(&mut rng, &mut text);
            rendered.push(r);
        }
        text.push(b']');
        prop_assert!(reference_accepts(&text));

        let mut parser = Parser::new();
        let Message::Batch(batch) = parser.parse(&text) else {
            return Err(TestCaseError::fail(format!("not a batch: {:?}", String::from_utf8_lossy(&text))));
        };
        prop_assert_eq!(batch.len(), elems.len());
        prop_assert_eq!(batch.iter().len(), elems.len());
        for (i, ((e, r), item)) in elems.iter().zip(&rendered).zip(batch.iter()).enumerate() {
            prop_assert_eq!(batch.raw(i), Some(r.text.as_slice()));
            prop_assert_eq!(batch.get(i), Some(item));
            match e {
                GenElem::Call(c) => check_call(c, r, item)?,
                GenElem::NotAnObject(_) => prop_assert!(
                    matches!(item, Item::Error(err) if err.reason() == Reason::NotAnObject && err.id().is_null()),
                    "{:?}", item
                ),
            }
        }
        prop_assert!(batch.get(elems.len()).is_none());
    }
}

// ---------------------------------------------------------------------------------
// 3. Typed extraction: switchboard's deserializer over the validated bytes against
//    serde_json on the same text.
// ---------------------------------------------------------------------------------

/// Equal, floats within one unit in the last place (serde_json's default float
/// parsing is not always correctly rounded; switchboard's is).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => {
                    x == y || (x.to_bits() as i64 - y.to_bits() as i64).abs() <= 1
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| close(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

/// Whether an object at the top of `v`'s text repeats a name (switchboard refuses
/// that, serde_json's maps keep the last).
fn top_level_repeats(json: &Json) -> bool {
    match json {
        Json::Obj(members) => {
            let mut names: Vec<String> = members.iter().map(|(k, _)| k.decoded()).collect();
            names.sort();
            names.windows(2).any(|w| w[0] == w[1]) || members.iter().any(|(k, _)| k.has_lone())
        }
        _ => false,
    }
}

/// The same verdict as serde_json (and a close value) for `T` on `text`.
fn same_as_serde_json<T>(text: &[u8], repeats: bool) -> Result<(), TestCaseError>
where
    T: for<'de> serde::Deserialize<'de> + serde::Serialize + std::fmt::Debug,
{
    let raw = switchboard::RawValue::from_validated(text).expect("not empty");
    let got = raw.parse::<T>();
    let want = serde_json::from_slice::<T>(text);
    let name = std::any::type_name::<T>();
    let shown = String::from_utf8_lossy(text);
    match (&got, &want) {
        (Ok(g), Ok(w)) => {
            let (g, w) = (serde_json::to_value(g), serde_json::to_value(w));
            if let (Ok(g), Ok(w)) = (&g, &w) {
                prop_assert!(close(g, w), "{name} on {shown}: {g} vs {w}");
            }
        }
        (Err(e), Ok(_)) if repeats => prop_assert!(e.is_duplicate(), "{name} on {shown}: {e}"),
        (Err(_), Err(_)) => {}
        _ => prop_assert!(
            false,
            "{name} on {shown}: switchboard {got:?}, serde_json {want:?}"
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn typed_extraction_agrees_with_serde_json(json in any_json(), seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut text = Vec::new();
        ws(&mut rng, &mut text);
        json.render(&mut rng, &mut text);
        ws(&mut rng, &mut text);
        prop_assert_eq!(Parser::new().validate(&text), Ok(()));
        let repeats = top_level_repeats(&json);
        same_as_serde_json::<Value>(&text, repeats)?;
        same_as_serde_json::<Vec<Value>>(&text, repeats)?;
        same_as_serde_json::<(Value, Option<String>)>(&text, repeats)?;
        same_as_serde_json::<std::collections::BTreeMap<String, Value>>(&text, repeats)?;
        same_as_serde_json::<std::collections::BTreeMap<i32, Value>>(&text, repeats)?;
        same_as_serde_json::<String>(&text, repeats)?;
        same_as_serde_json::<Option<f64>>(&text, repeats)?;
        same_as_serde_json::<Vec<i64>>(&text, repeats)?;
        same_as_serde_json::<(u8, bool)>(&text, repeats)?;
        // Only the verdict: `IgnoredAny` does not serialize.
        let raw = switchboard::RawValue::from_validated(&text).expect("not empty");
        let ignored = raw.parse::<IgnoredAny>();
        prop_assert!(ignored.is_ok() || repeats, "{:?}", ignored);
    }
}

/// Inputs the property tests found, kept as a table.
#[test]
fn typed_floats_are_correctly_rounded() {
    for text in [
        "23567334821103664.31e-42",
        "2.2250738585072011e-308",
        "0.1",
        "1e23",
    ] {
        let want: f64 = text.parse().unwrap();
        let raw = switchboard::RawValue::from_validated(text.as_bytes()).expect("not empty");
        let got: f64 = raw.parse().unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        same_as_serde_json::<f64>(text.as_bytes(), false).unwrap();
    }
}
