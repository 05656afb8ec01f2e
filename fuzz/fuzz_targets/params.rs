//! The params accessors and typed extraction, on arbitrary bytes placed as `params`:
//! elements, members, `get`, `index` and the `RawValue` accessors against the
//! serde_json reference; `parse::<T>()` for a few `T`, duplicate names refused.
#![no_main]

use std::cell::RefCell;
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use switchboard::{Kind, Message, Parser, RawValue};
use switchboard_fuzz::reference;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

#[derive(serde::Deserialize, Debug)]
#[allow(dead_code)]
struct Sub {
    minuend: f64,
    subtrahend: f64,
    #[serde(default)]
    note: Option<String>,
}

/// Equal, floats within one unit in the last place.
fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
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

fn check_value(v: RawValue<'_>) {
    let raw = v.as_str();
    assert_eq!(raw.as_bytes(), v.as_bytes(), "a validated value is UTF-8");
    let first = raw.as_bytes()[0];
    let kind = match first {
        b'n' => Kind::Null,
        b't' | b'f' => Kind::Bool,
        b'"' => Kind::String,
        b'[' => Kind::Array,
        b'{' => Kind::Object,
        _ => Kind::Number,
    };
    assert_eq!(v.kind(), kind);
    assert_eq!(v.as_bool(), serde_json::from_str::<bool>(raw).ok());
    if kind == Kind::Number {
        // An integer token (no fraction, no exponent; `-0` included) that fits.
        let int = (!raw.contains(['.', 'e', 'E']))
            .then(|| raw.parse::<i128>().ok())
            .flatten();
        assert_eq!(
            v.as_i64(),
            int.and_then(|i| i64::try_from(i).ok()),
            "as_i64 of {raw}"
        );
        let unsigned = int.filter(|_| !raw.starts_with('-')); // `-0` is not "non-negative"
        assert_eq!(
            v.as_u64(),
            unsigned.and_then(|i| u64::try_from(i).ok()),
            "as_u64 of {raw}"
        );
        if let Some(f) = v.as_f64() {
            assert!(f.is_finite());
        }
    }
    if kind == Kind::String {
        let decoded = reference::unescape(raw);
        if !raw.contains('\\') {
            assert_eq!(v.as_plain_str(), decoded.as_deref(), "{raw}");
        } else {
            assert_eq!(v.as_plain_str(), None);
        }
        if let Some(d) = &decoded {
            assert!(v.str_eq(d), "str_eq({d:?}) of {raw}");
            assert!(!v.str_eq(&format!("{d}x")));
        }
    } else {
        assert_eq!(v.as_plain_str(), None);
        assert!(!v.str_eq(""));
    }
}

fuzz_target!(|data: &[u8]| {
    let mut msg = br#"{"jsonrpc":"2.0","method":"m","id":1,"params":"#.to_vec();
    msg.extend_from_slice(data);
    msg.push(b'}');
    PARSER.with_borrow_mut(|parser| {
        let Message::Request(req) = parser.parse(&msg) else {
            return;
        };
        let Some(p) = req.params() else { return };
        let raw = p.as_str();
        assert_eq!(raw.trim_matches([' ', '\t', '\n', '\r']), raw);

        // Positional params.
        let elems: Vec<&[u8]> = p.iter().map(|v| v.as_bytes()).collect();
        match reference::elements(raw) {
            Some(want) => {
                assert!(p.is_array());
                let want: Vec<&[u8]> = want.iter().map(|s| s.as_bytes()).collect();
                assert_eq!(elems, want, "elements of {raw}");
                for (i, v) in p.iter().enumerate() {
                    assert_eq!(p.index(i), Some(v));
                    check_value(v);
                }
                assert_eq!(p.members().count(), 0);
            }
            None => assert!(elems.is_empty()),
        }

        // Named params.
        let members: Vec<(&[u8], &[u8])> =
            p.members().map(|(k, v)| (k.raw(), v.as_bytes())).collect();
        let mut dup = false;
        let mut all_decodable = true;
        if let Some(want) = reference::members(raw) {
            assert!(p.is_object());
            let want_raw: Vec<(&[u8], &[u8])> = want
                .iter()
                .map(|(k, v)| (&k.as_bytes()[1..k.len() - 1], v.as_bytes()))
                .collect();
            assert_eq!(members, want_raw, "members of {raw}");
            let mut seen = HashMap::new();
            for (k, v) in &want {
                let Some(name) = reference::unescape(k) else {
                    all_decodable = false;
                    continue;
                };
                let first = *seen.entry(name.clone()).or_insert(*v);
                if first.as_ptr() != v.as_ptr() {
                    dup = true;
                }
                let got = p.get(&name).map(|x| x.as_bytes());
                assert_eq!(got, Some(first.as_bytes()), "get({name:?}) in {raw}");
            }
            for (_, v) in p.members() {
                check_value(v);
            }
        } else {
            assert!(members.is_empty());
        }

        // Typed extraction.
        let value = p.parse::<serde_json::Value>();
        if dup {
            let e = value.expect_err("a duplicate name must be refused");
            assert!(e.is_duplicate(), "{e}");
        } else if all_decodable {
            let want = serde_json::from_str::<serde_json::Value>(raw);
            // switchboard's deserializer (over the validated bytes) and
            // serde_json's give the same verdict; values equal but for the
            // last place of a float (serde_json's default float parsing is
            // not always correctly rounded).
            match (&value, &want) {
                (Ok(a), Ok(b)) => assert!(close(a, b), "{a} vs {b} for {raw}"),
                (Err(e), Err(_)) => assert!(!e.is_duplicate(), "no duplicate in {raw}: {e}"),
                _ => panic!("parse {value:?} vs serde_json {want:?} for {raw}"),
            }
            for (got, want) in [
                (
                    p.parse::<Vec<i64>>().is_ok(),
                    serde_json::from_str::<Vec<i64>>(raw).is_ok(),
                ),
                (
                    p.parse::<(i64, i64)>().is_ok(),
                    serde_json::from_str::<(i64, i64)>(raw).is_ok(),
                ),
                (
                    p.parse::<Sub>().is_ok(),
                    serde_json::from_str::<Sub>(raw).is_ok(),
                ),
                (
                    p.parse::<Option<Vec<String>>>().is_ok(),
                    serde_json::from_str::<Option<Vec<String>>>(raw).is_ok(),
                ),
            ] {
                assert_eq!(got, want, "typed verdicts differ for {raw}");
            }
        }
        let _ = p.parse::<Vec<i64>>();
        let _ = p.parse::<(i64, i64)>();
        let _ = p.parse::<Sub>();
        let _ = p.parse::<HashMap<String, &serde_json::value::RawValue>>();
        let _ = p.parse::<Vec<&str>>();
        let _ = p.parse::<Option<Vec<String>>>();
    });
});
