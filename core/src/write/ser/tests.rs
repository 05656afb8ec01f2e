//! Differential tests: every value must come out byte for byte as
//! `serde_json::to_vec` writes it, and every error with `serde_json`'s message.

use std::collections::BTreeMap;
use std::fmt;

use proptest::prelude::*;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::to_vec_into;

/// Serializes `v` both ways and compares; appends after a prefix to check that
/// nothing before the value is touched. Returns the JSON text (or the error).
fn same<T: Serialize + ?Sized>(v: &T) -> Result<String, String> {
    let theirs = serde_json::to_vec(v);
    let mut ours = b"prefix".to_vec();
    let r = to_vec_into(&mut ours, v);
    assert!(ours.starts_with(b"prefix"));
    match (theirs, r) {
        (Ok(theirs), Ok(())) => {
            let ours = &ours[b"prefix".len()..];
            assert_eq!(
                String::from_utf8_lossy(ours),
                String::from_utf8_lossy(&theirs),
            );
            Ok(String::from_utf8(theirs).expect("JSON is UTF-8"))
        }
        (Err(theirs), Err(e)) => {
            assert_eq!(e.to_string(), theirs.to_string());
            Err(theirs.to_string())
        }
        (theirs, ours) => panic!("serde_json: {theirs:?}, ours: {ours:?}"),
    }
}

fn ok<T: Serialize + ?Sized>(v: &T) -> String {
    same(v).expect("serializes")
}

fn err<T: Serialize + ?Sized>(v: &T) -> String {
    same(v).expect_err("fails")
}

// ---------------------------------------------------------------------------------
// Generated `serde_json::Value` trees.

/// Characters that exercise every escaping rule.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        2 => (0u8..0x20).prop_map(char::from),
        1 => Just('"'),
        1 => Just('\\'),
        1 => Just('/'),
        1 => Just('\u{7f}'),
        1 => Just('é'),
        1 => Just('😀'),
        1 => Just('\u{2028}'),
        1 => Just('\u{ffff}'),
        1 => any::<char>(),
    ]
}

fn any_string() -> impl Strategy<Value = String> {
    // Up to 150 characters: past the SIMD kernels' 16-, 32- and 64-byte steps.
    prop_oneof![
        proptest::collection::vec(any_char(), 0..12),
        proptest::collection::vec(any_char(), 0..150),
    ]
    .prop_map(String::from_iter)
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        any::<u64>().prop_map(f64::from_bits),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            0.1,
            1e300,
            -1e300,
            5e-324,
            1e16,
            1e15,
            1e-5,
            1e-7,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
    ]
}

fn any_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![0, 1, u64::MAX, u64::MAX - 1, i64::MAX as u64])
            .prop_map(Value::from),
        prop::sample::select(vec![i64::MIN, i64::MIN + 1, -1]).prop_map(Value::from),
        // Non-finite floats have no `Number`: `Value` holds `null` then.
        any_f64().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any_number(),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::vec((any_string(), inner), 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    // Generated cases take many minutes under Miri (proptest's machinery too); the
    // serializer has no `unsafe`, and the hand-written cases below do run there.
    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; runs in the normal suite")]
    fn values_as_serde_json_writes_them(v in any_value()) {
        let text = ok(&v);
        // And it is JSON (not compared with `v`: serde_json's default float parser
        // may be one ulp off).
        prop_assert!(serde_json::from_str::<Value>(&text).is_ok());
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; runs in the normal suite")]
    fn strings_as_serde_json_writes_them(s in any_string()) {
        ok(&s);
        ok(&[&s, &s]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; runs in the normal suite")]
    fn floats_as_serde_json_writes_them(f in any_f64(), g in any::<u32>().prop_map(f32::from_bits)) {
        ok(&f);
        ok(&g);
        ok(&(f, g, Some(f), [g]));
        // As map keys: quoted, or an error when not finite.
        let _ = same(&Pairs(vec![(f, 1)]));
        let _ = same(&Pairs(vec![(g, 1)]));
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; runs in the normal suite")]
    fn integers_as_serde_json_writes_them(a in any::<i64>(), b in any::<u64>(), c in any::<i128>(), d in any::<u128>()) {
        ok(&(a, b, c, d, a as i8, a as i16, a as i32, b as u8, b as u16, b as u32));
        ok(&Pairs(vec![(a, 1)]));
        ok(&Pairs(vec![(b, 1)]));
        ok(&Pairs(vec![(c, 1)]));
        ok(&Pairs(vec![(d, 1)]));
    }

    #[test]
    #[cfg_attr(miri, ignore = "minutes under Miri; runs in the normal suite")]
    fn bytes_and_chars_as_serde_json_writes_them(b in proptest::collection::vec(any::<u8>(), 0..40), c in any_char()) {
        ok(&Bytes(&b));
        ok(&c);
        ok(&Pairs(vec![(c, c)]));
    }
}

// ---------------------------------------------------------------------------------
// Hand-written types: every case of serde's data model.

/// A map written from pairs (keys need not be `Ord`: floats).
struct Pairs<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Pairs<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// `&[u8]` through `serialize_bytes` (a plain slice serializes as a sequence).
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize)]
struct Newtype(u32);

#[derive(Serialize)]
struct TupleStruct(i8, &'static str, Option<bool>);

#[derive(Serialize)]
struct EmptyStruct {}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Unit,
    #[serde(rename = "we\"ird\n")]
    Renamed,
    Newtype(i32),
    Tuple(u8, String),
    EmptyTuple(),
    Struct {
        a: u8,
        b: Option<String>,
    },
    EmptyStruct {},
}

#[derive(Serialize)]
struct Everything<'a> {
    unit: (),
    unit_struct: Unit,
    newtype: Newtype,
    tuple_struct: TupleStruct,
    empty_struct: EmptyStruct,
    tuple: (u8, char, f32, f64),
    empty_tuple: [u8; 0],
    kinds: Vec<Kind>,
    none: Option<u8>,
    some: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    #[serde(rename = "re\"named\t")]
    renamed: bool,
    slice: &'a [u8],
    bytes: Bytes<'a>,
    chars: [char; 5],
    nested: BTreeMap<&'a str, Vec<Option<Kind>>>,
    raw: &'a RawValue,
    boxed_raw: Box<RawValue>,
    raw_list: Vec<Box<RawValue>>,
    opt_raw: Option<&'a RawValue>,
    value: Value,
    #[serde(flatten)]
    flattened: BTreeMap<String, u8>,
    big: (i128, u128, i128, u128),
}

/// A plain struct (no `flatten`, so its fields take `SerializeStruct`), member
/// names around the 16-byte fixed-copy limit, escaped and empty ones.
#[derive(Serialize)]
struct Names {
    a: u8,
    sixteen_bytes_ab: u8,
    seventeen_bytes_a: u8,
    a_member_name_longer_than_sixteen_bytes: u8,
    #[serde(rename = "")]
    empty_name: u8,
    #[serde(rename = "q\"uote")]
    quoted: u8,
    #[serde(rename = "a long name with a \\ backslash")]
    long_escaped: u8,
    #[serde(rename = "é")]
    accented: u8,
}

#[test]
fn struct_member_names() {
    let text = ok(&Names {
        a: 1,
        sixteen_bytes_ab: 16,
        seventeen_bytes_a: 17,
        a_member_name_longer_than_sixteen_bytes: 39,
        empty_name: 0,
        quoted: 2,
        long_escaped: 3,
        accented: 4,
    });
    assert_eq!(
        text,
        r#"{"a":1,"sixteen_bytes_ab":16,"seventeen_bytes_a":17,"a_member_name_longer_than_sixteen_bytes":39,"":0,"q\"uote":2,"a long name with a \\ backslash":3,"é":4}"#
    );
}

fn kinds() -> Vec<Kind> {
    vec![
        Kind::Unit,
        Kind::Renamed,
        Kind::Newtype(-7),
        Kind::Tuple(1, "t\u{1}".into()),
        Kind::EmptyTuple(),
        Kind::Struct {
            a: 2,
            b: Some("x".into()),
        },
        Kind::Struct { a: 3, b: None },
        Kind::EmptyStruct {},
    ]
}

#[test]
fn every_case_of_the_data_model() {
    let raw = RawValue::from_string(r#" { "a" : [1, 2.50, "\u0041"] } "#.into()).unwrap();
    let text = ok(&Everything {
        unit: (),
        unit_struct: Unit,
        newtype: Newtype(7),
        tuple_struct: TupleStruct(-1, "q\"", None),
        empty_struct: EmptyStruct {},
        tuple: (0, '\u{0}', 1.5, -0.0),
        empty_tuple: [],
        kinds: kinds(),
        none: None,
        some: Some("s"),
        skipped: None,
        renamed: true,
        slice: &[0, 1, 255],
        bytes: Bytes(&[0, 1, 255]),
        chars: ['a', '"', '\\', '\n', '😀'],
        nested: BTreeMap::from([
            ("k", vec![None, Some(Kind::Unit)]),
            ("", vec![]),
            ("\u{1f}", vec![Some(Kind::Newtype(1))]),
        ]),
        raw: &raw,
        boxed_raw: RawValue::from_string("[1,\n2]".into()).unwrap(),
        raw_list: vec![
            RawValue::from_string("null".into()).unwrap(),
            RawValue::from_string("\"x\"".into()).unwrap(),
        ],
        opt_raw: Some(&raw),
        value: serde_json::json!({"a": [1, -2, 3.5, null, true, "\u{8}"], "b": {}}),
        flattened: BTreeMap::from([("f1".into(), 1), ("f2".into(), 2)]),
        big: (i128::MIN, u128::MAX, i128::MAX, 0),
    });
    // Spot checks of the layout itself, beyond agreeing with serde_json.
    assert!(text.starts_with(r#"{"unit":null,"unit_struct":null,"newtype":7,"tuple_struct":[-1,"q\"",null],"empty_struct":{},"#));
    assert!(text.contains(r#""kinds":["Unit","we\"ird\n",{"Newtype":-7},{"Tuple":[1,"t\u0001"]},{"EmptyTuple":[]},{"Struct":{"a":2,"b":"x"}},"#));
    assert!(text.contains("\"raw\":{ \"a\" : [1, 2.50, \"\\u0041\"] },\"boxed_raw\":[1,\n2],"));
    assert!(text.contains(r#""bytes":[0,1,255],"#));
}

#[test]
fn top_level_values() {
    ok(&());
    ok(&Unit);
    ok(&Newtype(u32::MAX));
    ok(&None::<u8>);
    ok(&Some(Some(1u8)));
    ok(&true);
    ok(&'\u{7f}');
    ok(&"");
    ok(&f32::NAN);
    ok(&f64::NEG_INFINITY);
    ok(&f32::MIN_POSITIVE);
    ok(&1e-40f32); // subnormal
    ok(&Bytes(&[]));
    ok(&Vec::<u8>::new());
    ok(&BTreeMap::<u8, u8>::new());
    for k in kinds() {
        ok(&k);
        ok(&Some(&k));
    }
    let raw: &RawValue = serde_json::from_str(r#"{"x": [ 1 ]}"#).unwrap();
    assert_eq!(ok(raw), r#"{"x": [ 1 ]}"#);
    ok(&RawValue::from_string("12".into()).unwrap());
}

#[test]
fn map_keys() {
    ok(&BTreeMap::from([(1i8, 'a'), (-2, 'b')]));
    ok(&BTreeMap::from([(u64::MAX, 0), (0, 1)]));
    ok(&BTreeMap::from([(i64::MIN, 0)]));
    ok(&BTreeMap::from([(i128::MIN, 0)]));
    ok(&BTreeMap::from([(u128::MAX, 0)]));
    ok(&BTreeMap::from([('"', 0), ('\n', 1), ('é', 2)]));
    ok(&BTreeMap::from([(true, 0), (false, 1)]));
    ok(&BTreeMap::from([(Kind::Unit, 0), (Kind::Renamed, 1)]));
    ok(&BTreeMap::from([(Some("k"), 0)]));
    ok(&Pairs(vec![(Newtype(5), 0)]));
    ok(&Pairs(vec![(0.5f64, 0), (-0.0, 1), (1e300, 2)]));
    ok(&Pairs(vec![(1.5f32, 0)]));
    ok(&Pairs(vec![(Display("a\"b\n"), 0)]));
    // Keys JSON cannot express: serde_json's errors.
    assert_eq!(err(&Pairs(vec![((), 0)])), "key must be a string");
    assert_eq!(err(&Pairs(vec![(Unit, 0)])), "key must be a string");
    assert_eq!(err(&Pairs(vec![(None::<&str>, 0)])), "key must be a string");
    assert_eq!(err(&Pairs(vec![((1, 2), 0)])), "key must be a string");
    assert_eq!(err(&Pairs(vec![(vec![1], 0)])), "key must be a string");
    assert_eq!(err(&Pairs(vec![(Bytes(b"k"), 0)])), "key must be a string");
    assert_eq!(
        err(&Pairs(vec![(Kind::Newtype(1), 0)])),
        "key must be a string"
    );
    assert_eq!(
        err(&Pairs(vec![(Kind::Tuple(1, "".into()), 0)])),
        "key must be a string"
    );
    assert_eq!(
        err(&Pairs(vec![(Kind::EmptyStruct {}, 0)])),
        "key must be a string"
    );
    assert_eq!(
        err(&Pairs(vec![(BTreeMap::from([(1, 1)]), 0)])),
        "key must be a string"
    );
    assert_eq!(
        err(&Pairs(vec![(EmptyStruct {}, 0)])),
        "key must be a string"
    );
    assert_eq!(
        err(&Pairs(vec![(TupleStruct(0, "", None), 0)])),
        "key must be a string"
    );
    assert!(err(&Pairs(vec![(f64::NAN, 0)])).starts_with("float key must be finite"));
    assert!(err(&Pairs(vec![(f32::INFINITY, 0)])).starts_with("float key must be finite"));
    // The error deep inside a value.
    err(&vec![Some(Pairs(vec![((), 0)]))]);
}

/// A `Display` value written through `collect_str` in several fragments.
struct Display(&'static str);

impl fmt::Display for Display {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in self.0.split_inclusive('"') {
            f.write_str(part)?;
        }
        write!(f, "{}", 42)
    }
}

impl Serialize for Display {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[test]
fn collect_str() {
    assert_eq!(ok(&Display("a\"b\n\u{0}é\\")), r#""a\"b\n\u0000é\\42""#);
    ok(&Display(""));
    ok(&[Display("x"), Display("\"\"")]);
    // Through the standard types that use it.
    ok(&std::net::Ipv4Addr::new(127, 0, 0, 1));
    ok(&std::time::SystemTime::UNIX_EPOCH);
}

/// Errors from `Serialize` implementations, raw values misused, and lengths that
/// do not match what is written.
#[test]
fn errors_and_odd_implementations() {
    struct Fails;
    impl Serialize for Fails {
        fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom(format_args!("no {}", "way")))
        }
    }
    assert_eq!(err(&Fails), "no way");
    assert_eq!(err(&(1, [Some(Fails)])), "no way");

    /// `serde_json`'s raw value token with the wrong field or the wrong content.
    struct FakeRaw(&'static str, u8);
    impl Serialize for FakeRaw {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct(super::RAW_VALUE_TOKEN, 1)?;
            match self.1 {
                0 => st.serialize_field(super::RAW_VALUE_TOKEN, self.0)?,
                1 => st.serialize_field("other", self.0)?,
                2 => st.serialize_field(super::RAW_VALUE_TOKEN, &5)?,
                3 => st.serialize_field(super::RAW_VALUE_TOKEN, &Display("[1,"))?,
                _ => st.serialize_field(super::RAW_VALUE_TOKEN, &Kind::Unit)?,
            }
            st.end()
        }
    }
    assert_eq!(ok(&FakeRaw("[1 ,2]", 0)), "[1 ,2]");
    assert_eq!(err(&FakeRaw("1", 1)), "expected value");
    assert_eq!(err(&FakeRaw("1", 2)), "expected RawValue");
    assert_eq!(ok(&[FakeRaw("", 3)]), "[[1,42]");
    assert_eq!(err(&FakeRaw("1", 4)), "expected RawValue");

    /// Announces `len` elements and writes `n`.
    struct Lies(Option<usize>, usize, bool);
    impl Serialize for Lies {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if self.2 {
                let mut m = s.serialize_map(self.0)?;
                for i in 0..self.1 {
                    m.serialize_entry(&i, &i)?;
                }
                m.end()
            } else {
                let mut q = s.serialize_seq(self.0)?;
                for i in 0..self.1 {
                    q.serialize_element(&i)?;
                }
                q.end()
            }
        }
    }
    for map in [false, true] {
        for len in [None, Some(0), Some(1), Some(5)] {
            for n in 0..3 {
                ok(&Lies(len, n, map));
            }
        }
    }
}

/// A struct (or struct variant) that announces `len` members and writes the
/// first `n` of four (as `skip_serializing_if` does, announcing fewer than the
/// fields it has, or a hand-written implementation that miscounts). A struct's
/// `{` is written with its first member: none written must still give `{}`, an
/// announced 0 `{}` at once (and, as `serde_json` does, members after it).
struct StructLies {
    len: usize,
    n: usize,
    variant: bool,
    values: [&'static str; 4],
}

impl Serialize for StructLies {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStructVariant;
        const NAMES: [&str; 4] = ["a", "seventeen_bytes_a", "", "q\"uote"];
        if self.variant {
            let mut st = s.serialize_struct_variant("E", 3, "V", self.len)?;
            for (name, value) in NAMES.iter().zip(self.values).take(self.n) {
                st.serialize_field(name, value)?;
            }
            st.end()
        } else {
            let mut st = s.serialize_struct("S", self.len)?;
            for (name, value) in NAMES.iter().zip(self.values).take(self.n) {
                st.serialize_field(name, value)?;
            }
            st.end()
        }
    }
}

#[test]
fn structs_whatever_length_they_announce() {
    let values = ["x", "a \"quoted\" value", "", "é"];
    let mut seen = Vec::new();
    for variant in [false, true] {
        for len in 0..=4 {
            for n in 0..=4 {
                let v = StructLies {
                    len,
                    n,
                    variant,
                    values,
                };
                // Alone, and as the first and a later element of an array and
                // member of a struct (what comes before it is left alone).
                let text = ok(&v);
                ok(&[&v]);
                ok(&(1, &v, &v));
                seen.push(text);
            }
        }
    }
    // Spot checks of the layout itself, beyond agreeing with serde_json.
    assert!(seen.contains(&"{}".to_owned()));
    assert!(seen.contains(&r#"{},"a":"x"}"#.to_owned()));
    assert!(seen.contains(&r#"{"a":"x","seventeen_bytes_a":"a \"quoted\" value"}"#.to_owned()));
    assert!(seen.contains(&r#"{"V":{}}"#.to_owned()));
    assert!(
        seen.contains(
            &r#"{"V":{"a":"x","seventeen_bytes_a":"a \"quoted\" value","":"","q\"uote":"é"}}"#
                .to_owned()
        )
    );
}

#[test]
fn appends_without_reallocating_when_there_is_room() {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"result\":");
    let ptr = out.as_ptr();
    to_vec_into(&mut out, &tool_result()).unwrap();
    assert_eq!(out.as_ptr(), ptr);
    assert_eq!(out.capacity(), 512);
}

/// An MCP `tools/call` result.
fn tool_result() -> Value {
    serde_json::json!({"content": [{"type": "text", "text": "get_forecast"}], "structuredContent": {"arguments": 5}, "isError": false})
}

/// `serde_json::Number` as it serializes itself under serde_json's
/// `arbitrary_precision` feature (which a user's dependency can switch on for the
/// whole build): a struct named by serde_json's private token, its digits as the one
/// field. serde_json then writes the digits bare; so must we. (This build has the
/// feature off, so serde_json itself cannot be the reference here.)
struct ArbitraryPrecision(&'static str);

impl Serialize for ArbitraryPrecision {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const TOKEN: &str = "$serde_json::private::Number";
        let mut st = s.serialize_struct(TOKEN, 1)?;
        st.serialize_field(TOKEN, self.0)?;
        st.end()
    }
}

#[test]
fn arbitrary_precision_numbers_are_written_bare() {
    let mut out = Vec::new();
    to_vec_into(
        &mut out,
        &ArbitraryPrecision("123456789012345678901234567890.5"),
    )
    .unwrap();
    assert_eq!(out, b"123456789012345678901234567890.5");
    out.clear();
    let nested = (ArbitraryPrecision("-0"), [ArbitraryPrecision("1e400")]);
    to_vec_into(&mut out, &nested).unwrap();
    assert_eq!(out, b"[-0,[1e400]]");
}
