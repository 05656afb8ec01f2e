//! Linear time, asserted on operation counts (see [`super::ops`]): for each
//! hostile shape, the scanner's, unescaper's and params accessors' work at 8n is
//! at most about 8 times the work at n, and bounded per input byte. A rescan, a
//! quadratic duplicate check or a backtracking fallback would break these bounds;
//! wall time is never measured.

use super::ops;
use super::*;

/// Sizes compared: the work at `BIG` may grow at most as much as the input did
/// from `SMALL` (plus slack for fixed costs).
const SMALL: usize = 1_000;
const BIG: usize = 8_000;

/// Parses `input` with limits wide enough for it, touches everything a handler
/// could (params elements, members, a lookup that misses, method name), and
/// returns the operations counted.
fn ops_for(input: &[u8]) -> u64 {
    let mut cfg = ParserConfig::new();
    cfg.max_depth(BIG * 2 + 16)
        .max_batch_len(BIG * 2)
        .max_message_bytes(input.len() + 1);
    let mut parser = Parser::with_config(cfg);
    ops::take();
    let msg = parser.parse(input);
    let touch = |params: Option<Params<'_>>, method: Method<'_>| {
        let _ = method.lookup_key();
        if let Some(p) = params {
            let _ = p.iter().count();
            let _ = p.members().count();
            let _ = p.get("absent");
            // Duplicate check over every member (the typed path runs it first).
            let _ = p.parse::<serde::de::IgnoredAny>();
        }
    };
    let touch_item = |item: Item<'_>| match item {
        Item::Request(r) => touch(r.params(), r.method()),
        Item::Notification(n) => touch(n.params(), n.method()),
        _ => {}
    };
    match msg {
        Message::Request(r) => touch(r.params(), r.method()),
        Message::Notification(n) => touch(n.params(), n.method()),
        Message::Batch(b) => b.iter().for_each(touch_item),
        _ => {}
    }
    ops::take()
}

/// Asserts linear growth for `make(n)`; returns the kind of message at `BIG` so
/// callers can check the shape was what they meant.
fn assert_linear(name: &str, make: impl Fn(usize) -> Vec<u8>) -> String {
    let (small, big) = (make(SMALL), make(BIG));
    let (a, b) = (ops_for(&small), ops_for(&big));
    let ratio = b as f64 / a.max(1) as f64;
    let per_byte = b as f64 / big.len() as f64;
    // Inputs grow by about BIG / SMALL (a little more where numbers in names get
    // longer): the work may grow as much as the input, plus slack for fixed costs.
    let scale = big.len() as f64 / small.len() as f64;
    assert!(
        ratio <= scale * 1.1,
        "{name}: {a} ops for {} bytes, {b} for {} bytes: ops grew {ratio:.2}x, input {scale:.2}x (superlinear)",
        small.len(),
        big.len()
    );
    assert!(
        per_byte <= 4.0,
        "{name}: {b} ops for {} bytes ({per_byte:.2} per byte)",
        big.len()
    );
    assert!(a > 0 && b > a, "{name}: the counter saw no work ({a}, {b})");
    let mut parser = Parser::with_config(
        *ParserConfig::new()
            .max_depth(BIG * 2 + 16)
            .max_batch_len(BIG * 2),
    );
    match parser.parse(&big) {
        Message::Request(_) => "request".to_string(),
        Message::Notification(_) => "notification".to_string(),
        Message::Response(_) => "response".to_string(),
        Message::Batch(b) => format!("batch of {}", b.len()),
        Message::Error(e) => format!("error {}", e.code().as_i32()),
    }
}

fn request_with_params(params: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params},"id":1}}"#).into_bytes()
}

#[test]
#[cfg_attr(miri, ignore)] // op counts, not memory safety: thousands of iterations
fn nested_arrays_in_params() {
    let k = assert_linear("nested arrays", |n| {
        request_with_params(&format!("{}{}", "[".repeat(n), "]".repeat(n)))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn nested_objects_in_params() {
    let k = assert_linear("nested objects", |n| {
        request_with_params(&format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n)))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn unclosed_nesting_fails_in_linear_time() {
    let k = assert_linear("unclosed nesting", |n| request_with_params(&"[".repeat(n)));
    assert_eq!(k, "error -32700");
}

#[test]
#[cfg_attr(miri, ignore)]
fn batches_of_compact_requests() {
    let k = assert_linear("batch", |n| {
        let one = r#"{"jsonrpc":"2.0","method":"m","params":[1,2],"id":1}"#;
        format!("[{}]", vec![one; n].join(",")).into_bytes()
    });
    assert_eq!(k, format!("batch of {BIG}"));
}

#[test]
#[cfg_attr(miri, ignore)]
fn batches_the_fast_path_declines_late() {
    // Each element runs the compact path to its last member, then is rescanned by
    // the general path: at most twice per element, never per batch.
    let k = assert_linear("batch, compact path declined", |n| {
        let one = r#"{"jsonrpc":"2.0","method":"m","params":[1,2,3,4],"id":1,"x":[5]}"#;
        format!("[{}]", vec![one; n].join(",")).into_bytes()
    });
    assert_eq!(k, format!("batch of {BIG}"));
}

#[test]
#[cfg_attr(miri, ignore)]
fn batch_with_error_in_last_element() {
    let k = assert_linear("batch, error at the end", |n| {
        let one = r#"{"jsonrpc":"2.0","method":"m","params":[1,2],"id":1}"#;
        let mut s = format!("[{}", vec![one; n].join(","));
        s.push_str(r#",{"jsonrpc":"2.0","method":"m","params":[1,2}]"#);
        s.into_bytes()
    });
    assert_eq!(k, "error -32700");
}

#[test]
#[cfg_attr(miri, ignore)]
fn long_numbers() {
    let k = assert_linear("digits", |n| {
        request_with_params(&format!("[1{}.5e+{}]", "2".repeat(n), "9".repeat(n)))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn long_number_then_garbage() {
    let k = assert_linear("digits then garbage", |n| {
        request_with_params(&format!("[1{}x]", "2".repeat(n)))
    });
    assert_eq!(k, "error -32700");
}

/// Arrays of numbers the walk's masks give up on far in, nested in each other
/// (without the walk's budget of tries, each level's try would read on to the
/// same place again: 100 levels, 100 reads), between arrays the masks take
/// (which give tries back).
#[test]
#[cfg_attr(miri, ignore)]
fn number_arrays_given_up_late() {
    let make = |n: usize| {
        let taken = "[1.5,2.5,3.5,4.5]";
        let nested = format!(
            "{}{}1e5{}",
            "[0,".repeat(100),
            "1,".repeat(500),
            "]".repeat(100)
        );
        let one = format!("{taken},{nested}");
        request_with_params(&format!("[{}]", vec![one.as_str(); n / 50].join(",")))
    };
    let k = assert_linear("number arrays given up late", make);
    assert_eq!(k, "request");
    // Read about once: the token walk's operations (one a token, one a
    // block), not a hundred reads of each level.
    let big = make(BIG);
    let per_byte = ops_for(&big) as f64 / big.len() as f64;
    eprintln!("number arrays given up late: {per_byte:.2} operations a byte");
    assert!(per_byte < 1.5, "{per_byte:.2} operations a byte");
}

#[test]
#[cfg_attr(miri, ignore)]
fn escaped_method_name() {
    // Every key compare and the decode into the names block run over it.
    let k = assert_linear("method escapes", |n| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"{}","id":1}}"#,
            r"\u0041".repeat(n)
        )
        .into_bytes()
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn escaped_keys_at_top_level() {
    let k = assert_linear("escaped unknown keys", |n| {
        let mut s = String::from(r#"{"jsonrpc":"2.0","method":"m","#);
        for i in 0..n {
            s.push_str(&format!(r#""\u0078{i}":{i},"#));
        }
        s.push_str(r#""id":1}"#);
        s.into_bytes()
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn escapes_and_multibyte_text_in_params() {
    let k = assert_linear("string escapes", |n| {
        request_with_params(&format!(
            r#"["{}","{}"]"#,
            r"\n\u00e9\ud83d\ude00".repeat(n),
            "é😀".repeat(n)
        ))
    });
    assert_eq!(k, "request");
}

/// Long text whose blocks pass the block walk's fast check (backslash runs of
/// two blocks and more) between flagged ones (`é`, a `\u` escape): each hand-over
/// to the exact path counts a run back, each run once.
#[test]
#[cfg_attr(miri, ignore)]
fn backslash_runs_in_long_text() {
    let k = assert_linear("backslash runs", |n| {
        let piece = format!(r"x{}é{}\u00e9 text\n", r"\\".repeat(80), r"\\".repeat(50));
        request_with_params(&format!(r#"["{}"]"#, piece.repeat(n / 20)))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn many_named_params() {
    // Members iteration, lookups that miss, and the duplicate check over them all
    // (past 32 members it switches to a hash set).
    let k = assert_linear("named params", |n| {
        let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}":[{i}]"#)).collect();
        request_with_params(&format!("{{{}}}", members.join(",")))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn many_positional_params() {
    let k = assert_linear("positional params", |n| {
        let elems: Vec<String> = (0..n).map(|i| format!(r#"{{"v":"{i}"}}"#)).collect();
        request_with_params(&format!("[{}]", elems.join(",")))
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn whitespace_everywhere() {
    let k = assert_linear("whitespace", |n| {
        let ws = " \t\r\n".repeat(n / 4);
        format!(
            "{ws}{{{ws}\"jsonrpc\"{ws}:{ws}\"2.0\"{ws},{ws}\"method\"{ws}:{ws}\"m\"{ws},{ws}\"params\"{ws}:{ws}[{ws}1{ws},{ws}2{ws}]{ws},{ws}\"id\"{ws}:{ws}1{ws}}}{ws}"
        )
        .into_bytes()
    });
    assert_eq!(k, "request");
}

#[test]
#[cfg_attr(miri, ignore)]
fn duplicate_members_many_times() {
    let k = assert_linear("duplicates", |n| {
        let mut s = String::from(r#"{"jsonrpc":"2.0","method":"m","#);
        for _ in 0..n {
            s.push_str(r#""params":[1],"#);
        }
        s.push_str(r#""id":1}"#);
        s.into_bytes()
    });
    assert_eq!(k, "error -32600");
}

#[test]
fn the_counter_sees_a_rescan() {
    // The instrument itself: parsing the same message twice counts exactly twice
    // the work of once, so a hidden rescan would show in the ratios above.
    let msg = request_with_params("[1,2,3]");
    let once = ops_scan_only(&msg);
    assert!(once > 0);
    let mut parser = Parser::new();
    ops::take();
    let _ = parser.parse(&msg);
    let _ = parser.parse(&msg);
    assert_eq!(ops::take(), 2 * once);
}

/// Operations of the parse alone (no params touched).
fn ops_scan_only(input: &[u8]) -> u64 {
    let mut parser = Parser::new();
    ops::take();
    let _ = parser.parse(input);
    ops::take()
}
