//! Conformance: every example of the JSON-RPC 2.0 specification (section 7) and
//! every row of SPEC.md's decisions table, through the classifier.

use switchboard::{Field, Id, Item, Message, Parser, ParserConfig, Reason};

/// What a message (or batch element) is, in a form that is easy to compare.
#[derive(Debug, PartialEq)]
enum V {
    Req {
        method: String,
        id: String,
        params: Option<String>,
    },
    Notif {
        method: String,
        params: Option<String>,
    },
    Resp {
        id: String,
        ok: bool,
    },
    Err {
        code: i32,
        reason: Reason,
        id: String,
    },
    Batch(Vec<V>),
}

fn item(i: Item<'_>) -> V {
    match i {
        Item::Request(r) => V::Req {
            method: r.method().as_str().into(),
            id: r.id().as_str().into(),
            params: r.params().map(|p| p.as_str().into()),
        },
        Item::Notification(n) => V::Notif {
            method: n.method().as_str().into(),
            params: n.params().map(|p| p.as_str().into()),
        },
        Item::Response(r) => V::Resp {
            id: r.id().as_str().into(),
            ok: r.result().is_some(),
        },
        Item::Error(e) => {
            // Every error carries a machine-readable data object.
            let data: serde_json::Value = serde_json::from_str(&e.data().to_string()).unwrap();
            assert_eq!(data["reason"], e.reason().as_str(), "{data}");
            if let Some(f) = e.reason().field() {
                assert_eq!(data["field"], f.name());
            }
            V::Err {
                code: e.code().as_i32(),
                reason: e.reason(),
                id: e.id().as_str().into(),
            }
        }
    }
}

fn classify_with(config: ParserConfig, input: &[u8]) -> V {
    let mut p = Parser::with_config(config);
    let v = classify_in(&mut p, input);
    // The same parser gives the same verdict again (state is reset per message).
    assert_eq!(classify_in(&mut p, input), v);
    v
}

fn classify_in(p: &mut Parser, input: &[u8]) -> V {
    match p.parse(input) {
        Message::Request(r) => item(Item::Request(r)),
        Message::Notification(n) => item(Item::Notification(n)),
        Message::Response(r) => item(Item::Response(r)),
        Message::Error(e) => item(Item::Error(e)),
        Message::Batch(b) => {
            assert!(!b.is_empty());
            V::Batch(b.iter().map(item).collect())
        }
    }
}

fn classify(input: &str) -> V {
    classify_with(ParserConfig::new(), input.as_bytes())
}

fn req(method: &str, id: &str, params: Option<&str>) -> V {
    V::Req {
        method: method.into(),
        id: id.into(),
        params: params.map(Into::into),
    }
}

fn notif(method: &str, params: Option<&str>) -> V {
    V::Notif {
        method: method.into(),
        params: params.map(Into::into),
    }
}

fn err(reason: Reason, id: &str) -> V {
    V::Err {
        code: reason.code().as_i32(),
        reason,
        id: id.into(),
    }
}

fn code(v: &V) -> i32 {
    match v {
        V::Err { code, .. } => *code,
        other => panic!("expected an error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// JSON-RPC 2.0 specification, section 7 "Examples"
// ---------------------------------------------------------------------------

#[test]
fn spec_positional_parameters() {
    let v = classify(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#);
    assert_eq!(v, req("subtract", "1", Some("[42, 23]")));
    let v = classify(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#);
    assert_eq!(v, req("subtract", "2", Some("[23, 42]")));
}

#[test]
fn spec_named_parameters() {
    let v = classify(
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
    );
    assert_eq!(
        v,
        req(
            "subtract",
            "3",
            Some(r#"{"subtrahend": 23, "minuend": 42}"#)
        )
    );
    let v = classify(
        r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
    );
    assert_eq!(
        v,
        req(
            "subtract",
            "4",
            Some(r#"{"minuend": 42, "subtrahend": 23}"#)
        )
    );
}

#[test]
fn spec_notifications() {
    let v = classify(r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#);
    assert_eq!(v, notif("update", Some("[1,2,3,4,5]")));
    assert_eq!(
        classify(r#"{"jsonrpc": "2.0", "method": "foobar"}"#),
        notif("foobar", None)
    );
}

#[test]
fn spec_non_existent_method_is_a_request_for_the_router() {
    let v = classify(r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#);
    assert_eq!(v, req("foobar", "\"1\"", None));
}

#[test]
fn spec_invalid_json() {
    let v = classify(r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#);
    assert_eq!(code(&v), -32700);
    assert!(matches!(v, V::Err { ref id, .. } if id == "null"));
}

#[test]
fn spec_invalid_request_object() {
    let v = classify(r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#);
    assert_eq!(v, err(Reason::MethodNotString, "null"));
}

#[test]
fn spec_batch_invalid_json() {
    let v = classify(
        r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]"#,
    );
    assert_eq!(code(&v), -32700);
}

#[test]
fn spec_empty_array() {
    assert_eq!(classify("[]"), err(Reason::EmptyBatch, "null"));
    assert_eq!(classify(" [ \n ] "), err(Reason::EmptyBatch, "null"));
}

#[test]
fn spec_invalid_batch_but_not_empty() {
    assert_eq!(
        classify("[1]"),
        V::Batch(vec![err(Reason::NotAnObject, "null")])
    );
}

#[test]
fn spec_invalid_batch() {
    let e = || err(Reason::NotAnObject, "null");
    assert_eq!(classify("[1,2,3]"), V::Batch(vec![e(), e(), e()]));
}

#[test]
fn spec_rpc_call_batch() {
    let v = classify(
        r#"[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"#,
    );
    assert_eq!(
        v,
        V::Batch(vec![
            req("sum", "\"1\"", Some("[1,2,4]")),
            notif("notify_hello", Some("[7]")),
            req("subtract", "\"2\"", Some("[42,23]")),
            err(Reason::MissingVersion, "null"),
            req("foo.get", "\"5\"", Some(r#"{"name": "myself"}"#)),
            req("get_data", "\"9\"", None),
        ])
    );
}

#[test]
fn spec_rpc_call_batch_all_notifications() {
    let v = classify(
        r#"[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]"#,
    );
    assert_eq!(
        v,
        V::Batch(vec![
            notif("notify_sum", Some("[1,2,4]")),
            notif("notify_hello", Some("[7]"))
        ])
    );
}

#[test]
fn spec_response_examples_are_responses() {
    let ok = |id: &str| V::Resp {
        id: id.into(),
        ok: true,
    };
    let bad = |id: &str| V::Resp {
        id: id.into(),
        ok: false,
    };
    assert_eq!(
        classify(r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#),
        ok("1")
    );
    assert_eq!(
        classify(r#"{"jsonrpc": "2.0", "result": -19, "id": 2}"#),
        ok("2")
    );
    assert_eq!(
        classify(r#"{"jsonrpc": "2.0", "result": null, "id": 9}"#),
        ok("9")
    );
    assert_eq!(
        classify(
            r#"{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}"#
        ),
        bad("\"1\"")
    );
    assert_eq!(
        classify(
            r#"{"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": null}"#
        ),
        bad("null")
    );
    assert_eq!(
        classify(
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"x":1}},"id":null}"#
        ),
        bad("null")
    );
}

// ---------------------------------------------------------------------------
// SPEC.md, "Our decisions where the specification is silent", row by row
// ---------------------------------------------------------------------------

#[test]
fn decision_invalid_request_echoes_a_valid_unique_id() {
    let v = classify(r#"{"jsonrpc":"2.0","method":1,"id":"abc"}"#);
    assert_eq!(v, err(Reason::MethodNotString, "\"abc\""));
    assert_eq!(
        classify(r#"{"jsonrpc":"1.0","method":"m","id":7}"#),
        err(Reason::WrongVersion, "7")
    );
    assert_eq!(
        classify(r#"{"method":"m","id":7}"#),
        err(Reason::MissingVersion, "7")
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","id":7}"#),
        err(Reason::MissingMethod, "7")
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":"m","params":3,"id":7}"#),
        err(Reason::ParamsNotStructured, "7")
    );
    // A duplicated id is not unique: null.
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":1,"id":7,"id":8}"#),
        err(Reason::Duplicate(Field::Id), "null")
    );
    // jsonrpc must be exactly the string "2.0".
    for bad in [r#"2.0"#, r#""2.00""#, r#""2.0 ""#, r#"null"#, r#"2"#] {
        let v = classify(&format!(r#"{{"jsonrpc":{bad},"method":"m","id":1}}"#));
        assert_eq!(v, err(Reason::WrongVersion, "1"), "{bad}");
    }
    assert_eq!(
        classify(r#"{"jsonrpc":"\u0032.0","method":"m","id":1}"#),
        req("m", "1", None)
    );
}

#[test]
fn decision_id_echo_is_byte_for_byte() {
    for id in [
        "9007199254740993",
        "1.5",
        "1e2",
        "-0",
        "0",
        "-1.25E-7",
        "123456789012345678901234567890",
        r#""a\"b""#,
        r#""\u00e9\ud83d\ude00""#,
        r#""""#,
        "null",
    ] {
        let v = classify(&format!(r#"{{"jsonrpc":"2.0","method":"m","id":{id}}}"#));
        assert_eq!(v, req("m", id, None), "{id}");
        let v = classify(&format!(r#"{{"jsonrpc":"2.0","method":7,"id":{id}}}"#));
        assert_eq!(v, err(Reason::MethodNotString, id), "{id}");
    }
}

#[test]
fn decision_id_object_array_bool_is_invalid_with_null_id() {
    for id in ["{}", r#"{"a":1}"#, "[]", "[1]", "true", "false"] {
        let v = classify(&format!(r#"{{"jsonrpc":"2.0","method":"m","id":{id}}}"#));
        assert_eq!(v, err(Reason::IdWrongType, "null"), "{id}");
    }
}

#[test]
fn decision_params_null_is_absent() {
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":"m","params":null,"id":1}"#),
        req("m", "1", None)
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","method":"m","params":null}"#),
        notif("m", None)
    );
}

#[test]
fn decision_params_scalar_is_invalid() {
    for p in [r#""bar""#, "1", "-2.5", "true", "false"] {
        let v = classify(&format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{p},"id":1}}"#
        ));
        assert_eq!(v, err(Reason::ParamsNotStructured, "1"), "{p}");
    }
}

#[test]
fn decision_duplicate_top_level_members_escaped_spellings_included() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m","id":1}"#,
            Field::Jsonrpc,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#,
            Field::Method,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"a","\u006dethod":"b","id":1}"#,
            Field::Method,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"a","params":[],"para\u006ds":{},"id":1}"#,
            Field::Params,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"a","id":1,"\u0069\u0064":2}"#,
            Field::Id,
        ),
        (r#"{"jsonrpc":"2.0","method":"a","id":1,"id":1}"#, Field::Id),
        (
            r#"{"jsonrpc":"2.0","json\u0072pc":"2.0","method":"m"}"#,
            Field::Jsonrpc,
        ),
        (
            r#"{"jsonrpc":"2.0","result":1,"result":2,"id":1}"#,
            Field::Result,
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"error":{"code":1,"message":"x"},"id":1}"#,
            Field::Error,
        ),
    ];
    for (input, f) in cases {
        assert_eq!(
            classify(input),
            err(Reason::Duplicate(f), "null"),
            "{input}"
        );
    }
    // In a batch, per element.
    let v = classify(
        r#"[{"jsonrpc":"2.0","method":"a","method":"b","id":1},{"jsonrpc":"2.0","method":"c","id":2}]"#,
    );
    assert_eq!(
        v,
        V::Batch(vec![
            err(Reason::Duplicate(Field::Method), "null"),
            req("c", "2", None)
        ])
    );
}

#[test]
fn decision_unknown_extra_members_are_ignored_duplicates_too() {
    let v = classify(
        r#"{"jsonrpc":"2.0","x":1,"method":"m","x":2,"meta":{"a":[]},"id":1,"Method":"no"}"#,
    );
    assert_eq!(v, req("m", "1", None));
    // result/error beside a method are extra members of a request.
    let v = classify(r#"{"jsonrpc":"2.0","method":"m","result":1,"error":2,"id":1}"#);
    assert_eq!(v, req("m", "1", None));
}

#[test]
fn decision_duplicate_named_params_fail_typed_extraction() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Sub {
        minuend: i64,
        subtrahend: i64,
    }
    let mut p = Parser::new();
    for input in [
        r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2,"minuend":3},"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2,"min\u0075end":3},"id":1}"#,
    ] {
        let Message::Request(r) = p.parse(input.as_bytes()) else {
            panic!("{input}")
        };
        let e = r.params().unwrap().parse::<Sub>().unwrap_err();
        assert!(e.is_duplicate(), "{e}");
        // Map-typed targets too, where serde itself would keep the last value.
        let e = r
            .params()
            .unwrap()
            .parse::<std::collections::HashMap<String, i64>>()
            .unwrap_err();
        assert!(e.is_duplicate(), "{e}");
    }
}

#[test]
fn decision_invalid_utf8_anywhere_is_parse_error() {
    let bad: [&[u8]; 9] = [
        b"\xC0\xAF",         // overlong '/'
        b"\xE0\x80\xAF",     // overlong, 3 bytes
        b"\xF0\x80\x80\xAF", // overlong, 4 bytes
        b"\xED\xA0\x80",     // encoded surrogate U+D800
        b"\xED\xBF\xBF",     // encoded surrogate U+DFFF
        b"\xE2\x82",         // truncated
        b"\x80",             // lone continuation
        b"\xF4\x90\x80\x80", // above U+10FFFF
        b"\xFF",             // never valid
    ];
    for b in bad {
        for template in [
            (
                &br#"{"jsonrpc":"2.0","method":"m"#[..],
                &br#"","id":1}"#[..],
            ),
            (
                br#"{"jsonrpc":"2.0","method":"m","params":[""#,
                br#""],"id":1}"#,
            ),
            (br#"{"jsonrpc":"2.0","method":"m","id":1,"x":""#, br#""}"#),
            (br#"{"jsonrpc":"2.0","method":"m","id":1} "#, b""),
        ] {
            let input = [template.0, b, template.1].concat();
            let v = classify_with(ParserConfig::new(), &input);
            assert_eq!(code(&v), -32700, "{input:?}");
        }
    }
    // Valid multi-byte UTF-8 is fine everywhere in strings.
    let v = classify(r#"{"jsonrpc":"2.0","method":"héllo€😀","id":"ü"}"#);
    assert_eq!(v, req("héllo€😀", "\"ü\"", None));
}

#[test]
fn decision_escaped_lone_surrogate_is_valid_but_matches_nothing() {
    let mut p = Parser::new();
    for m in [r#""\ud800""#, r#""x\udc00""#, r#""\ud800\u0041""#] {
        let input = format!(r#"{{"jsonrpc":"2.0","method":{m},"id":1}}"#);
        let Message::Request(r) = p.parse(input.as_bytes()) else {
            panic!("{input}")
        };
        assert!(!r.method().is_exact());
        assert_eq!(r.method().lookup_key(), None);
        assert!(r.method() != "\u{FFFD}");
    }
    // A valid surrogate pair is exact.
    let Message::Request(r) = p.parse(br#"{"jsonrpc":"2.0","method":"\ud83d\ude00","id":1}"#)
    else {
        panic!()
    };
    assert_eq!(r.method(), "😀");
}

#[test]
fn decision_bom_empty_whitespace_trailing_are_parse_errors() {
    let cases: [(&[u8], Reason); 8] = [
        (
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}",
            Reason::ByteOrderMark,
        ),
        (b"", Reason::Empty),
        (b" \t\r\n ", Reason::Empty),
        (
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1} x",
            Reason::TrailingBytes,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}{}",
            Reason::TrailingBytes,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}\0",
            Reason::TrailingBytes,
        ),
        (b"[] []", Reason::TrailingBytes),
        (b"1 2", Reason::TrailingBytes),
    ];
    for (input, reason) in cases {
        assert_eq!(
            classify_with(ParserConfig::new(), input),
            err(reason, "null"),
            "{input:?}"
        );
    }
    // Whitespace around the value is fine.
    let v = classify(" \n{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}\r\n\t ");
    assert_eq!(v, req("m", "1", None));
}

#[test]
fn decision_depth_limit() {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(matches!(classify(&nest(128)), V::Batch(_)));
    assert_eq!(classify(&nest(129)), err(Reason::TooDeep, "null"));
    // Inside params: the request object is level 1, params level 2.
    let params = |n: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{},"id":1}}"#,
            nest(n)
        )
    };
    assert!(matches!(classify(&params(127)), V::Req { .. }));
    assert_eq!(classify(&params(128)), err(Reason::TooDeep, "null"));
    // The data says why, with the limit.
    let mut p = Parser::new();
    let deep = nest(200);
    let Message::Error(e) = p.parse(deep.as_bytes()) else {
        panic!()
    };
    let data: serde_json::Value = serde_json::from_str(&e.data().to_string()).unwrap();
    assert_eq!(data["reason"], "nesting deeper than max_depth");
    assert_eq!(data["limit"], 128);
    assert_eq!(data["offset"], 128);
    // Configurable.
    let mut c = ParserConfig::new();
    c.max_depth(3);
    assert!(matches!(classify_with(c, b"[[[]]]"), V::Batch(_)));
    assert_eq!(classify_with(c, b"[[[[]]]]"), err(Reason::TooDeep, "null"));
}

#[test]
fn decision_batch_limit_and_batches_off() {
    let call = r#"{"jsonrpc":"2.0","method":"m","id":1}"#;
    let batch = |n: usize| format!("[{}]", vec![call; n].join(","));
    let mut c = ParserConfig::new();
    c.max_batch_len(3);
    assert!(matches!(classify_with(c, batch(3).as_bytes()), V::Batch(v) if v.len() == 3));
    assert_eq!(
        classify_with(c, batch(4).as_bytes()),
        err(Reason::BatchTooLong, "null")
    );
    let mut p = Parser::with_config(c);
    let four = batch(4);
    let Message::Error(e) = p.parse(four.as_bytes()) else {
        panic!()
    };
    assert_eq!(
        e.data().to_string(),
        r#"{"reason":"batch longer than max_batch_len","limit":3}"#
    );
    // Invalid JSON still wins over the length limit.
    assert_eq!(
        code(&classify_with(
            c,
            format!("{},", &batch(5)[..batch(5).len() - 1]).as_bytes()
        )),
        -32700
    );

    let mut off = ParserConfig::new();
    off.allow_batches(false);
    assert_eq!(
        classify_with(off, batch(1).as_bytes()),
        err(Reason::BatchesDisabled, "null")
    );
    assert_eq!(
        classify_with(off, b"[1]"),
        err(Reason::BatchesDisabled, "null")
    );
    assert_eq!(code(&classify_with(off, b"[1,]")), -32700);
    // A single call still works with batches off.
    assert_eq!(classify_with(off, call.as_bytes()), req("m", "1", None));
}

#[test]
fn decision_message_size_limit_refused_before_parsing() {
    let mut c = ParserConfig::new();
    c.max_message_bytes(40);
    let ok = br#"{"jsonrpc":"2.0","method":"m","id":1}"#;
    assert_eq!(classify_with(c, ok), req("m", "1", None));
    // Over the limit: refused even though it is not even JSON.
    let big = [b'x'; 41];
    assert_eq!(classify_with(c, &big), err(Reason::TooLarge, "null"));
    let mut p = Parser::with_config(c);
    let Message::Error(e) = p.parse(&big) else {
        panic!()
    };
    assert_eq!(e.limit(), Some(40));
    assert_eq!(ParserConfig::new().get_max_message_bytes(), 8 << 20);
}

#[test]
fn decision_response_objects() {
    // Well-formed: a Response, never answered.
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","result":{"a":[1]},"id":"x"}"#),
        V::Resp {
            id: "\"x\"".into(),
            ok: true
        }
    );
    // Malformed: -32600.
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","result":1}"#),
        err(Reason::ResponseWithoutId, "null")
    );
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":5}"#),
        err(Reason::ResultAndError, "5")
    );
    assert_eq!(
        classify(r#"{"result":1,"id":5}"#),
        err(Reason::MissingVersion, "5")
    );
    for bad in [
        r#""oops""#,
        "{}",
        r#"{"code":"1","message":"m"}"#,
        r#"{"code":1}"#,
        r#"{"code":1e3,"message":"m"}"#,
        r#"{"code":1,"message":2}"#,
    ] {
        let v = classify(&format!(r#"{{"jsonrpc":"2.0","error":{bad},"id":5}}"#));
        assert_eq!(v, err(Reason::MalformedErrorObject, "5"), "{bad}");
    }
    // In a batch, per element.
    let v = classify(r#"[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","method":"m"}]"#);
    assert_eq!(
        v,
        V::Batch(vec![
            V::Resp {
                id: "1".into(),
                ok: true
            },
            notif("m", None)
        ])
    );
}

#[test]
fn decision_numbers_in_params_pass_through_untouched() {
    let params = r#"[9007199254740993, 1.5e+300, -0.0, 1E400, 123456789012345678901234567890.5]"#;
    let v = classify(&format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{params},"id":1}}"#
    ));
    assert_eq!(v, req("m", "1", Some(params)));
    let mut p = Parser::new();
    let input = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params},"id":1}}"#);
    let Message::Request(r) = p.parse(input.as_bytes()) else {
        panic!()
    };
    let elems: Vec<_> = r.params().unwrap().iter().map(|e| e.as_str()).collect();
    assert_eq!(
        elems,
        [
            "9007199254740993",
            "1.5e+300",
            "-0.0",
            "1E400",
            "123456789012345678901234567890.5"
        ]
    );
    assert_eq!(
        r.params().unwrap().index(3).unwrap().as_f64(),
        None,
        "1E400 is not a finite f64"
    );
}

#[test]
fn decision_method_names_compared_after_unescaping() {
    let v = classify(r#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[42,23],"id":1}"#);
    assert_eq!(v, req("subtract", "1", Some("[42,23]")));
    // Case-sensitive.
    let mut p = Parser::new();
    let Message::Request(r) = p.parse(br#"{"jsonrpc":"2.0","method":"Subtract","id":1}"#) else {
        panic!()
    };
    assert!(r.method() != "subtract");
    // Member names are case-sensitive too: "Method" is an unknown member.
    assert_eq!(
        classify(r#"{"jsonrpc":"2.0","Method":"m","id":1}"#),
        err(Reason::MissingMethod, "1")
    );
}

#[test]
fn non_object_messages_and_elements() {
    for input in ["1", "\"x\"", "null", "true", "-0.5e3"] {
        assert_eq!(classify(input), err(Reason::NotAnObject, "null"), "{input}");
    }
    let v = classify(r#"[[], {}, "x", null]"#);
    assert_eq!(
        v,
        V::Batch(vec![
            err(Reason::NotAnObject, "null"),
            err(Reason::MissingVersion, "null"),
            err(Reason::NotAnObject, "null"),
            err(Reason::NotAnObject, "null"),
        ])
    );
}

#[test]
fn params_views() {
    let mut p = Parser::new();
    let input = br#"{"jsonrpc":"2.0","method":"m","params":{"a" : [1, {"x":"}"}], "b\u0063":"d\"e", "n":null},"id":1}"#;
    let Message::Request(r) = p.parse(input) else {
        panic!()
    };
    let params = r.params().unwrap();
    assert!(params.is_object() && !params.is_array());
    assert_eq!(params.get("a").unwrap().as_str(), r#"[1, {"x":"}"}]"#);
    assert_eq!(params.get("bc").unwrap().as_str(), r#""d\"e""#);
    assert!(params.get("bc").unwrap().str_eq("d\"e"));
    assert!(params.get("n").unwrap().is_null());
    assert_eq!(params.get("z"), None);
    assert_eq!(params.members().count(), 3);
    assert_eq!(params.iter().count(), 0);
    let inner: Vec<_> = params
        .get("a")
        .unwrap()
        .array_iter()
        .unwrap()
        .map(|v| v.as_str())
        .collect();
    assert_eq!(inner, ["1", r#"{"x":"}"}"#]);
    let Message::Request(r) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":[ ],"id":Id}"#)
    else {
        // `Id` is not JSON: this must be a parse error, checked below.
        let mut q = Parser::new();
        let Message::Request(r) = q.parse(br#"{"jsonrpc":"2.0","method":"m","params":[ ],"id":1}"#)
        else {
            panic!()
        };
        assert_eq!(r.params().unwrap().iter().count(), 0);
        assert_eq!(Id::NULL.as_bytes(), b"null");
        return;
    };
    panic!("accepted invalid JSON: {r:?}");
}
