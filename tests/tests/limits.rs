//! The limits of SPEC.md: depth, message size, batch length, batches switched off,
//! and inputs that are huge without breaking a limit (long numbers, many escapes).
//!
//! The deep-nesting tests run on the test harness's own thread, whose stack is small
//! (2 MiB unless `RUST_MIN_STACK` says otherwise): a recursive parser would overflow it.

use switchboard::{Code, Item, Message, Parser, ParserConfig, Reason};
use switchboard_tests::json_depth;

const REQ_HEAD: &str = r#"{"jsonrpc":"2.0","method":"m","params":"#;
const REQ_TAIL: &str = r#","id":1}"#;

/// `n` nested arrays around nothing: `[[[]]]`.
fn arrays(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

/// `n` nested objects around `1`: `{"a":{"a":1}}`.
fn objects(n: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n))
}

/// `n` levels alternating array and object, with siblings at every level (empty
/// containers among them, except at the innermost level, which they would deepen).
fn mixed(n: usize) -> String {
    let (mut open, mut close) = (String::new(), String::new());
    for level in 0..n {
        let innermost = level + 1 == n;
        match (level % 2 == 0, innermost) {
            (true, false) => open.push_str(r#"[0,"[",{},"#),
            (true, true) => open.push_str(r#"[0,"[",true,"#),
            (false, false) => open.push_str(r#"{"k":1,"}":[],"v":"#),
            (false, true) => open.push_str(r#"{"k":1,"}":"]","v":"#),
        }
        close.insert_str(
            0,
            if level % 2 == 0 {
                ",null]"
            } else {
                r#","z":true}"#
            },
        );
    }
    let s = format!("{open}\"core\"{close}");
    debug_assert_eq!(json_depth(s.as_bytes()), n);
    s
}

/// A request whose params are `params`.
fn request_with(params: &str) -> String {
    format!("{REQ_HEAD}{params}{REQ_TAIL}")
}

#[track_caller]
fn expect_error(parser: &mut Parser, input: &[u8], reason: Reason, limit: Option<usize>) {
    match parser.parse(input) {
        Message::Error(e) => {
            assert_eq!(e.reason(), reason, "{e}");
            assert_eq!(e.code(), reason.code());
            assert_eq!(e.limit(), limit, "{e}");
            assert!(e.id().is_null());
            if let Some(l) = limit {
                assert!(
                    e.data().to_string().contains(&format!("\"limit\":{l}")),
                    "{}",
                    e.data()
                );
            }
        }
        other => panic!("expected {reason:?}, got {other:?}"),
    }
}

#[track_caller]
fn expect_too_deep(parser: &mut Parser, input: &[u8]) {
    let limit = parser.config().get_max_depth();
    expect_error(parser, input, Reason::TooDeep, Some(limit));
    let e = parser
        .validate(input)
        .expect_err("validate accepted too deep input");
    assert_eq!(
        (e.code(), e.reason(), e.limit()),
        (Code::ParseError, Reason::TooDeep, Some(limit))
    );
}

#[test]
fn hundred_thousand_levels_are_too_deep_without_stack_overflow() {
    let mut p = Parser::new();
    let n = 100_000;
    for input in [
        "[".repeat(n),
        arrays(n),
        r#"{"a":"#.repeat(n),
        objects(n),
        mixed(n),
        request_with(&arrays(n)),
        request_with(&objects(n)),
        format!("[{}]", request_with(&mixed(n))),
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","id":1,"x":{}}}"#,
            arrays(n)
        ),
    ] {
        expect_too_deep(&mut p, input.as_bytes());
    }
    // The deepest depth the configuration allows, fully valid, is walked without
    // recursion as well: by the scanner and by the params views.
    let cap = ParserConfig::MAX_DEPTH_CAP;
    let mut cfg = ParserConfig::new();
    cfg.max_depth(cap);
    let mut p = Parser::with_config(cfg);
    assert_eq!(p.config().get_max_depth(), cap);
    assert_eq!(p.validate(arrays(cap).as_bytes()), Ok(()));
    assert_eq!(p.validate(mixed(cap).as_bytes()), Ok(()));
    expect_too_deep(&mut p, arrays(cap + 1).as_bytes());
    expect_too_deep(&mut p, objects(cap + 1).as_bytes());
    let inner = mixed(cap - 1);
    let input = request_with(&inner);
    let Message::Request(req) = p.parse(input.as_bytes()) else {
        panic!("deep params refused")
    };
    let params = req.params().unwrap();
    assert_eq!(params.as_bytes(), inner.as_bytes());
    let elems: Vec<_> = params.iter().map(|v| v.as_bytes().len()).collect();
    assert_eq!(elems.len(), 5); // 0, "[", {}, the nested value, null
    assert_eq!(
        elems[3],
        inner.len() - r#"[0,"[",{},"#.len() - ",null]".len()
    );
    expect_too_deep(&mut p, request_with(&mixed(cap)).as_bytes());
}

#[test]
fn depth_128_passes_and_129_fails() {
    let mut p = Parser::new();
    for (pass, fail) in [
        (arrays(128), arrays(129)),
        (objects(128), objects(129)),
        (mixed(128), mixed(129)),
        (
            "[".repeat(128) + "1" + &"]".repeat(128),
            "[".repeat(129) + "1" + &"]".repeat(129),
        ),
    ] {
        assert_eq!(p.validate(pass.as_bytes()), Ok(()), "{}", &pass[..20]);
        assert!(
            !matches!(p.parse(pass.as_bytes()), Message::Error(e) if e.code() == Code::ParseError)
        );
        expect_too_deep(&mut p, fail.as_bytes());
    }
    // A request object is level 1, its params level 2: params may nest 127 levels.
    let input = request_with(&arrays(127));
    assert!(
        matches!(p.parse(input.as_bytes()), Message::Request(r) if r.params().unwrap().as_bytes() == arrays(127).as_bytes())
    );
    expect_too_deep(&mut p, request_with(&arrays(128)).as_bytes());
    let input = request_with(&objects(127));
    assert!(matches!(p.parse(input.as_bytes()), Message::Request(_)));
    expect_too_deep(&mut p, request_with(&objects(128)).as_bytes());
    // In a batch the request is level 2 and its params level 3.
    let input = format!("[{}]", request_with(&arrays(126)));
    assert!(
        matches!(p.parse(input.as_bytes()), Message::Batch(b) if matches!(b.get(0), Some(Item::Request(_))))
    );
    expect_too_deep(
        &mut p,
        format!("[{}]", request_with(&arrays(127))).as_bytes(),
    );
    // Unknown members and ids count too.
    let input = format!(
        r#"{{"jsonrpc":"2.0","method":"m","x":{},"id":1}}"#,
        objects(127)
    );
    assert!(matches!(p.parse(input.as_bytes()), Message::Request(_)));
    let input = format!(
        r#"{{"jsonrpc":"2.0","method":"m","x":{},"id":1}}"#,
        objects(128)
    );
    expect_too_deep(&mut p, input.as_bytes());
    let input = format!(r#"{{"jsonrpc":"2.0","method":"m","id":{}}}"#, arrays(128));
    expect_too_deep(&mut p, input.as_bytes());
}

#[test]
fn configurable_depth() {
    for limit in [1, 2, 3, 4, 63, 64, 65, 127, 129, 1000] {
        let mut cfg = ParserConfig::new();
        cfg.max_depth(limit);
        let mut p = Parser::with_config(cfg);
        assert_eq!(
            p.validate(arrays(limit).as_bytes()),
            Ok(()),
            "limit {limit}"
        );
        assert_eq!(p.validate(mixed(limit).as_bytes()), Ok(()), "limit {limit}");
        expect_too_deep(&mut p, arrays(limit + 1).as_bytes());
        expect_too_deep(&mut p, objects(limit + 1).as_bytes());
        expect_too_deep(&mut p, mixed(limit + 1).as_bytes());
    }
    // 0 is clamped to 1: one level still passes.
    let mut cfg = ParserConfig::new();
    cfg.max_depth(0);
    let mut p = Parser::with_config(cfg);
    assert_eq!(p.config().get_max_depth(), 1);
    assert!(matches!(
        p.parse(br#"{"jsonrpc":"2.0","method":"m","id":1}"#),
        Message::Request(_)
    ));
    expect_too_deep(
        &mut p,
        br#"{"jsonrpc":"2.0","method":"m","params":[],"id":1}"#,
    );
    expect_too_deep(&mut p, br#"[{"jsonrpc":"2.0","method":"m","id":1}]"#);
    // Beyond the cap is clamped to the cap.
    let mut cfg = ParserConfig::new();
    cfg.max_depth(usize::MAX);
    assert_eq!(cfg.get_max_depth(), ParserConfig::MAX_DEPTH_CAP);
}

/// A request of exactly `len` bytes: `{"jsonrpc":"2.0","method":"m","params":["xxx…"],"id":1}`.
fn request_of_len(len: usize) -> Vec<u8> {
    let frame = request_with(r#"[""]"#).len();
    let mut s = String::with_capacity(len);
    s.push_str(REQ_HEAD);
    s.push_str("[\"");
    s.extend(std::iter::repeat_n('x', len - frame));
    s.push_str("\"]");
    s.push_str(REQ_TAIL);
    assert_eq!(s.len(), len);
    s.into_bytes()
}

#[test]
fn message_size_limit() {
    let limit = ParserConfig::DEFAULT_MAX_MESSAGE_BYTES;
    assert_eq!(limit, 8 << 20);
    let mut p = Parser::new();
    let input = request_of_len(limit);
    match p.parse(&input) {
        Message::Request(r) => {
            assert_eq!(
                r.params().unwrap().as_bytes().len(),
                limit - REQ_HEAD.len() - REQ_TAIL.len()
            );
            assert_eq!(
                r.params()
                    .unwrap()
                    .index(0)
                    .unwrap()
                    .as_raw_str()
                    .unwrap()
                    .len(),
                limit - request_with(r#"[""]"#).len()
            );
        }
        other => panic!("8 MiB request refused: {other:?}"),
    }
    assert_eq!(p.validate(&input), Ok(()));
    // One byte more, even harmless whitespace, is refused before parsing.
    let mut over = input.clone();
    over.push(b' ');
    expect_error(&mut p, &over, Reason::TooLarge, Some(limit));
    let e = p.validate(&over).unwrap_err();
    assert_eq!(
        (e.code(), e.reason(), e.limit()),
        (Code::InvalidRequest, Reason::TooLarge, Some(limit))
    );
    // Refused before parsing: the size wins over invalid JSON.
    let garbage = vec![b'['; limit + 1];
    expect_error(&mut p, &garbage, Reason::TooLarge, Some(limit));
    assert!(
        matches!(p.parse(&garbage[..limit]), Message::Error(e) if e.code() == Code::ParseError)
    );

    // A configured limit is honored the same way.
    let mut cfg = ParserConfig::new();
    cfg.max_message_bytes(100);
    let mut p = Parser::with_config(cfg);
    assert!(matches!(p.parse(&request_of_len(100)), Message::Request(_)));
    assert_eq!(p.validate(&request_of_len(100)), Ok(()));
    expect_error(&mut p, &request_of_len(101), Reason::TooLarge, Some(100));
    assert_eq!(
        p.validate(&request_of_len(101)).unwrap_err().limit(),
        Some(100)
    );
    // Larger than the default works when configured.
    let mut cfg = ParserConfig::new();
    cfg.max_message_bytes(limit + 1);
    let mut p = Parser::with_config(cfg);
    assert!(matches!(p.parse(&over), Message::Request(_)));
    // Clamped to the documented cap.
    cfg.max_message_bytes(usize::MAX);
    assert_eq!(
        cfg.get_max_message_bytes(),
        ParserConfig::MAX_MESSAGE_BYTES_CAP
    );
}

fn batch_of(n: usize) -> Vec<u8> {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"m{i}","id":{i}}}"#))
        .collect();
    format!("[{}]", items.join(",")).into_bytes()
}

#[track_caller]
fn expect_batch(p: &mut Parser, input: &[u8], n: usize) {
    match p.parse(input) {
        Message::Batch(b) => {
            assert_eq!(b.len(), n);
            assert_eq!(b.iter().len(), n);
            for (i, item) in b.iter().enumerate() {
                let Item::Request(r) = item else {
                    panic!("item {i}: {item:?}")
                };
                assert_eq!(r.method().as_str(), format!("m{i}"));
                assert_eq!(r.id().as_str(), i.to_string());
            }
        }
        other => panic!("expected a batch of {n}, got {other:?}"),
    }
}

#[test]
fn batch_length_limit() {
    let mut p = Parser::new();
    assert_eq!(p.config().get_max_batch_len(), 1000);
    expect_batch(&mut p, &batch_of(1000), 1000);
    expect_error(&mut p, &batch_of(1001), Reason::BatchTooLong, Some(1000));
    expect_error(&mut p, &batch_of(5000), Reason::BatchTooLong, Some(1000));
    // The same parser still takes a full batch after refusing a long one.
    expect_batch(&mut p, &batch_of(1000), 1000);
    // Invalid JSON anywhere, even past the limit, is one -32700.
    let mut bad = batch_of(1001);
    let at = bad.len() - 2;
    bad.insert(at, b',');
    assert!(matches!(p.parse(&bad), Message::Error(e) if e.code() == Code::ParseError));
    expect_error(&mut p, b"[]", Reason::EmptyBatch, None);

    let mut cfg = ParserConfig::new();
    cfg.max_batch_len(3);
    let mut p = Parser::with_config(cfg);
    expect_batch(&mut p, &batch_of(1), 1);
    expect_batch(&mut p, &batch_of(3), 3);
    expect_error(&mut p, &batch_of(4), Reason::BatchTooLong, Some(3));
    expect_error(&mut p, b"[1,2,3,4]", Reason::BatchTooLong, Some(3));
    let mut cfg = ParserConfig::new();
    cfg.max_batch_len(20_000);
    let mut p = Parser::with_config(cfg);
    expect_batch(&mut p, &batch_of(20_000), 20_000);
}

#[test]
fn batches_disabled() {
    let mut cfg = ParserConfig::new();
    cfg.allow_batches(false);
    let mut p = Parser::with_config(cfg);
    assert!(!p.config().get_allow_batches());
    expect_error(&mut p, &batch_of(1), Reason::BatchesDisabled, None);
    expect_error(&mut p, &batch_of(1001), Reason::BatchesDisabled, None);
    expect_error(&mut p, b"[1]", Reason::BatchesDisabled, None);
    let e = match p.parse(b"[1]") {
        Message::Error(e) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.data().to_string(), r#"{"reason":"batches are disabled"}"#);
    // `[]` is not a batch at all; either way it is one -32600 with a null id.
    assert!(
        matches!(p.parse(b"[]"), Message::Error(e) if e.code() == Code::InvalidRequest && e.id().is_null())
    );
    // Invalid JSON is still -32700, single messages still work.
    assert!(matches!(p.parse(b"[{]"), Message::Error(e) if e.code() == Code::ParseError));
    assert!(matches!(
        p.parse(br#"{"jsonrpc":"2.0","method":"m","id":1}"#),
        Message::Request(_)
    ));
    // Switching them back on.
    cfg.allow_batches(true);
    let mut p = Parser::with_config(cfg);
    expect_batch(&mut p, &batch_of(2), 2);
}

#[test]
fn huge_numbers_pass_through_untouched() {
    let mut p = Parser::new();
    let digits: String = (0..10_000)
        .map(|i| char::from(b'1' + (i % 9) as u8))
        .collect();
    let numbers = [
        digits.clone(),
        format!("-{digits}"),
        format!("0.{digits}"),
        format!("{digits}.{digits}e-{digits}"),
        format!("-{digits}E+{digits}"),
        "1e99999".to_string(),
        "-0.0e-0".to_string(),
    ];
    for n in &numbers {
        assert_eq!(p.validate(n.as_bytes()), Ok(()));
        let input =
            format!(r#"{{"jsonrpc":"2.0","method":"m","params":[{n},{{"n":{n}}}],"id":{n}}}"#);
        let Message::Request(r) = p.parse(input.as_bytes()) else {
            panic!("refused: {}", &n[..10])
        };
        assert_eq!(
            r.id().as_bytes(),
            n.as_bytes(),
            "ids are echoed byte for byte"
        );
        assert!(r.id().is_number());
        let params = r.params().unwrap();
        assert_eq!(params.index(0).unwrap().as_bytes(), n.as_bytes());
        assert_eq!(
            params
                .index(1)
                .unwrap()
                .object_iter()
                .unwrap()
                .next()
                .unwrap()
                .1
                .as_bytes(),
            n.as_bytes()
        );
        assert_eq!(params.iter().count(), 2);
        let input = format!(r#"{{"jsonrpc":"2.0","result":{n},"id":{n}}}"#);
        let Message::Response(r) = p.parse(input.as_bytes()) else {
            panic!("response refused")
        };
        assert_eq!(r.result().unwrap().as_bytes(), n.as_bytes());
    }
    // Big but not a number: still -32700 at the right place.
    let bad = format!("[{digits}.]");
    let e = p.validate(bad.as_bytes()).unwrap_err();
    assert_eq!(e.reason(), Reason::InvalidNumber);
    let bad = format!("[0{digits}]");
    assert_eq!(
        p.validate(bad.as_bytes()).unwrap_err().reason(),
        Reason::InvalidNumber
    );
}

#[test]
fn hundred_thousand_escapes() {
    let mut p = Parser::new();
    // 100 000 escapes of every kind, and the decoded text they stand for.
    let kinds: [(&str, &str); 10] = [
        (r"\n", "\n"),
        (r#"\""#, "\""),
        (r"\\", "\\"),
        (r"\/", "/"),
        (r"\b", "\u{8}"),
        (r"\t", "\t"),
        (r"\u00e9", "é"),
        (r"\u20AC", "€"),
        (r"\ud83d\ude00", "😀"),
        (r"\u0041", "A"),
    ];
    let (mut escaped, mut decoded) = (String::new(), String::new());
    for i in 0..100_000 {
        let (e, d) = kinds[i % kinds.len()];
        escaped.push_str(e);
        decoded.push_str(d);
    }
    let string = format!("\"{escaped}\"");
    assert_eq!(p.validate(string.as_bytes()), Ok(()));

    let input =
        format!(r#"{{"jsonrpc":"2.0","method":{string},"params":[{string}],"id":{string}}}"#);
    let Message::Request(r) = p.parse(input.as_bytes()) else {
        panic!("refused")
    };
    assert_eq!(r.method().as_str(), decoded);
    assert!(r.method().is_exact());
    assert_eq!(r.method(), decoded.as_str());
    assert_eq!(r.id().as_bytes(), string.as_bytes());
    let first = r.params().unwrap().index(0).unwrap();
    assert_eq!(first.as_bytes(), string.as_bytes());
    assert!(first.str_eq(&decoded));
    assert_eq!(first.parse::<String>().unwrap(), decoded);
    // As a member name of named params.
    let input = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{{string}:1}},"id":1}}"#);
    let Message::Request(r) = p.parse(input.as_bytes()) else {
        panic!("refused")
    };
    assert_eq!(r.params().unwrap().get(&decoded).unwrap().as_bytes(), b"1");
    // One bad escape at the very end is still found.
    let bad = format!("\"{escaped}\\x\"");
    assert_eq!(
        p.validate(bad.as_bytes()).unwrap_err().reason(),
        Reason::InvalidEscape
    );
}
