//! The specification's examples and SPEC.md's decisions end to end through
//! `Session::handle` with the demo methods; every response is checked against the
//! Response object rules.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use switchboard::{ParserConfig, Router, RpcError, Session};
use switchboard_server::demo;

/// Checks one Response object against the specification.
fn check_response(v: &Value) {
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(o.get("jsonrpc"), Some(&json!("2.0")), "{v}");
    assert!(o.contains_key("id"), "no id: {v}");
    let id = &o["id"];
    assert!(id.is_string() || id.is_number() || id.is_null(), "{v}");
    assert_eq!(
        o.contains_key("result") as u8 + o.contains_key("error") as u8,
        1,
        "{v}"
    );
    if let Some(e) = o.get("error") {
        assert!(e["code"].is_i64(), "{v}");
        assert!(e["message"].is_string(), "{v}");
        let code = e["code"].as_i64().unwrap();
        if (-32768..=-32000).contains(&code) {
            assert!(
                e["data"].is_object(),
                "core errors carry a data object: {v}"
            );
        }
    }
    assert_eq!(o.len(), 3, "{v}");
}

/// Handles `input`; returns the parsed response after checking its shape.
fn handle(session: &mut Session, input: &str) -> Option<Value> {
    let out = session.handle(input.as_bytes())?;
    let v: Value = serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "response is not JSON ({e}): {}",
            String::from_utf8_lossy(out)
        )
    });
    match &v {
        Value::Array(items) => {
            assert!(!items.is_empty(), "never an empty array");
            items.iter().for_each(check_response);
        }
        other => check_response(other),
    }
    Some(v)
}

fn demo_session() -> Session {
    Session::new(demo::router())
}

fn raw(session: &mut Session, input: &str) -> Option<String> {
    session
        .handle(input.as_bytes())
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
}

#[test]
fn spec_examples_end_to_end() {
    let mut s = demo_session();
    let cases = switchboard_tests::spec_examples();
    for (input, want) in &cases {
        assert_eq!(&handle(&mut s, input), want, "{input}");
    }
}

#[test]
fn spec_error_examples_end_to_end() {
    let mut s = demo_session();
    let v = handle(
        &mut s,
        r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
    )
    .unwrap();
    assert_eq!(v["error"]["code"], -32700);
    assert_eq!(v["error"]["message"], "Parse error");
    assert_eq!(v["id"], Value::Null);
    let v = handle(
        &mut s,
        r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
    )
    .unwrap();
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["id"], Value::Null);
    let v = handle(&mut s, "[\n  {\"jsonrpc\": \"2.0\", \"method\": \"sum\", \"params\": [1,2,4], \"id\": \"1\"},\n  {\"jsonrpc\": \"2.0\", \"method\"\n]").unwrap();
    assert_eq!(v["error"]["code"], -32700, "one single object: {v}");
    let v = handle(&mut s, "[]").unwrap();
    assert!(v.is_object(), "[] gets a single object");
    assert_eq!(v["error"]["code"], -32600);
    let v = handle(&mut s, "[1]").unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["error"]["code"], -32600);
    let v = handle(&mut s, "[1,2,3]").unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|r| r["error"]["code"] == -32600 && r["id"].is_null())
    );
}

#[test]
fn spec_batch_end_to_end() {
    let mut s = demo_session();
    let v = handle(
        &mut s,
        r#"[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"#,
    )
    .unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 5);
    assert_eq!(items[0], json!({"jsonrpc": "2.0", "result": 7, "id": "1"}));
    assert_eq!(items[1], json!({"jsonrpc": "2.0", "result": 19, "id": "2"}));
    assert_eq!(items[2]["error"]["code"], -32600);
    assert_eq!(items[2]["id"], Value::Null);
    assert_eq!(items[3]["error"]["code"], -32601);
    assert_eq!(items[3]["id"], "5");
    assert_eq!(
        items[4],
        json!({"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"})
    );
}

#[test]
fn ids_are_echoed_byte_for_byte() {
    let mut s = demo_session();
    for id in [
        "9007199254740993",
        "1.5",
        "1e2",
        "-0",
        r#""a\"b\u00e9""#,
        "null",
        "0.0000001",
        r#""""#,
    ] {
        let out = raw(
            &mut s,
            &format!(r#"{{"jsonrpc":"2.0","method":"get_data","id":{id}}}"#),
        )
        .unwrap();
        assert!(out.ends_with(&format!(r#","id":{id}}}"#)), "{out}");
        let out = raw(
            &mut s,
            &format!(r#"{{"jsonrpc":"2.0","method":"nope","id":{id}}}"#),
        )
        .unwrap();
        assert!(out.ends_with(&format!(r#","id":{id}}}"#)), "{out}");
        let out = raw(
            &mut s,
            &format!(r#"{{"jsonrpc":"2.0","method":7,"id":{id}}}"#),
        )
        .unwrap();
        assert!(out.ends_with(&format!(r#","id":{id}}}"#)), "{out}");
    }
    // Exact bytes for the spec's first example.
    let out = raw(
        &mut s,
        r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    )
    .unwrap();
    assert_eq!(out, r#"{"jsonrpc":"2.0","result":19,"id":1}"#);
}

#[test]
fn demo_methods() {
    let mut s = demo_session();
    let call = |s: &mut Session, m: &str, p: &str| {
        handle(
            s,
            &format!(r#"{{"jsonrpc":"2.0","method":"{m}","params":{p},"id":1}}"#),
        )
        .unwrap()
    };
    assert_eq!(call(&mut s, "sum", "[1,2,4]")["result"], 7);
    assert_eq!(call(&mut s, "sum", "[]")["result"], 0);
    assert_eq!(call(&mut s, "sum", "[1.5,2]")["result"], 3.5);
    assert_eq!(
        call(&mut s, "sum", "[9223372036854775807,1]")["result"],
        9223372036854775808.0
    );
    assert_eq!(
        call(&mut s, "subtract", "[-9223372036854775808,1]")["result"],
        -9223372036854775809.0
    );
    assert_eq!(call(&mut s, "subtract", "[0.5,0.25]")["result"], 0.25);
    // divide: exact integers, floats, and its two error examples.
    assert_eq!(call(&mut s, "divide", "[42,6]")["result"], 7);
    assert_eq!(call(&mut s, "divide", "[7,2]")["result"], 3.5);
    assert_eq!(
        call(&mut s, "divide", r#"{"divisor":4,"dividend":-2}"#)["result"],
        -0.5
    );
    assert_eq!(
        call(&mut s, "divide", "[-9223372036854775808,-1]")["result"],
        9223372036854775808.0
    );
    let zero = call(&mut s, "divide", "[1,0]");
    assert_eq!(zero["error"]["code"], demo::DIVISION_BY_ZERO);
    assert_eq!(zero["error"]["message"], "Division by zero");
    assert_eq!(call(&mut s, "divide", "[1,0.0]")["error"]["code"], -32000);
    let inf = call(&mut s, "divide", "[1e308,1e-308]");
    assert_eq!(inf["error"]["code"], -32603, "{inf}");
    assert_eq!(call(&mut s, "divide", "[1]")["error"]["code"], -32602);
    assert_eq!(
        call(&mut s, "divide", r#"{"dividend":1}"#)["error"]["code"],
        -32602
    );
    assert_eq!(
        call(
            &mut s,
            "eth_getBalance",
            r#"["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]"#
        )["result"],
        demo::BALANCE
    );
    // Named params in any order, names compared after unescaping.
    assert_eq!(
        call(&mut s, "subtract", r#"{"subtrahend":23,"m\u0069nuend":42}"#)["result"],
        19
    );
    for (m, p) in [
        ("subtract", "[1e400,1]"),
        ("subtract", "[1.7e308,-1.7e308]"),
        ("subtract", "[1]"),
        ("subtract", "[1,2,3]"),
        ("subtract", r#"["1",2]"#),
        ("subtract", r#"{"minuend":1}"#),
        ("subtract", r#"{"minuend":1,"subtrahend":2,"x":3}"#),
        ("subtract", r#"{"minuend":1,"minuend":2}"#),
        ("subtract", r#"{"minuend":1,"subtrahend":2,"minuend":3}"#),
        ("subtract", r#"{"subtrahend":2,"subtrahend":2}"#),
        ("subtract", "null"),
        ("sum", "[1e999]"),
        ("sum", "[1.7e308,1.7e308]"),
        ("sum", r#"{"a":1}"#),
        ("sum", r#"[1,"2"]"#),
        ("eth_getBalance", r#"["0x12","latest"]"#),
        (
            "eth_getBalance",
            r#"["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"]"#,
        ),
        (
            "eth_getBalance",
            r#"["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","tomorrow"]"#,
        ),
    ] {
        let v = call(&mut s, m, p);
        assert_eq!(v["error"]["code"], -32602, "{m} {p}: {v}");
        assert_eq!(v["error"]["data"]["field"], "params", "{m} {p}: {v}");
    }
}

#[test]
fn notifications_are_never_answered_even_errors() {
    let mut s = demo_session();
    for input in [
        r#"{"jsonrpc":"2.0","method":"nope"}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":["x"]}"#,
        r#"{"jsonrpc":"2.0","method":"update","params":null}"#,
        r#"[{"jsonrpc":"2.0","method":"nope"},{"jsonrpc":"2.0","method":"sum","params":[1]}]"#,
    ] {
        assert_eq!(raw(&mut s, input), None, "{input}");
    }
    // A request to a notification method is answered null once it ran.
    let v = handle(&mut s, r#"{"jsonrpc":"2.0","method":"update","id":3}"#).unwrap();
    assert_eq!(v["result"], Value::Null);
}

#[test]
fn responses_are_never_answered_and_reach_the_sink() {
    let mut s = demo_session();
    assert_eq!(raw(&mut s, r#"{"jsonrpc":"2.0","result":19,"id":1}"#), None);
    assert_eq!(
        raw(
            &mut s,
            r#"[{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":1}]"#
        ),
        None
    );
    assert_eq!(s.dropped_responses(), 2);
    // Malformed responses get -32600.
    let v = handle(&mut s, r#"{"jsonrpc":"2.0","result":19}"#).unwrap();
    assert_eq!(v["error"]["code"], -32600);

    let seen = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    let router = Router::builder()
        .response_sink(move |r| {
            assert_eq!(r.id().as_bytes(), b"7");
            seen2.fetch_add(1, Ordering::Relaxed);
        })
        .build()
        .unwrap();
    let mut s = Session::new(router);
    assert_eq!(
        raw(&mut s, r#"{"jsonrpc":"2.0","result":null,"id":7}"#),
        None
    );
    assert_eq!(seen.load(Ordering::Relaxed), 1);
    assert_eq!(s.dropped_responses(), 0);
}

#[test]
fn limits_and_batches_off() {
    let mut c = ParserConfig::new();
    c.max_batch_len(2).max_message_bytes(200);
    let mut s = Session::new(
        demo::register(Router::builder(), Default::default())
            .config(c)
            .build()
            .unwrap(),
    );
    let call = r#"{"jsonrpc":"2.0","method":"get_data","id":1}"#;
    let v = handle(&mut s, &format!("[{call},{call}]")).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    let v = handle(&mut s, &format!("[{call},{call},{call}]")).unwrap();
    assert!(v.is_object());
    assert_eq!(v["error"]["data"]["limit"], 2);
    let v = handle(&mut s, &" ".repeat(201)).unwrap();
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["limit"], 200);

    let mut off = ParserConfig::new();
    off.allow_batches(false);
    let mut s = Session::new(
        demo::register(Router::builder(), Default::default())
            .config(off)
            .build()
            .unwrap(),
    );
    let v = handle(&mut s, &format!("[{call}]")).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "batches are disabled");
    assert_eq!(handle(&mut s, call).unwrap()["result"], json!(["hello", 5]));
}

#[test]
fn rpc_discover_describes_the_methods() {
    let mut s = demo_session();
    let v = handle(
        &mut s,
        r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#,
    )
    .unwrap();
    let doc = &v["result"];
    assert_eq!(doc["openrpc"], "1.3.2");
    let names: Vec<&str> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for m in [
        "subtract",
        "sum",
        "divide",
        "get_data",
        "eth_getBalance",
        "update",
        "notify_hello",
        "notify_sum",
    ] {
        assert!(names.contains(&m), "{m} missing from {names:?}");
    }
    let sub = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "subtract")
        .unwrap();
    assert_eq!(sub["params"][0]["name"], "minuend");
    assert_eq!(sub["result"]["schema"]["type"], "number");
}

#[test]
fn build_errors() {
    use switchboard::BuildError;
    let ok = |_: &switchboard::Call<'_>, out: &mut switchboard::ResultWriter<'_>| out.null();
    assert_eq!(
        Router::builder()
            .method("a", ok)
            .method("a", ok)
            .build()
            .unwrap_err(),
        BuildError::Duplicate("a".into())
    );
    assert_eq!(
        Router::builder()
            .method("a", ok)
            .notification("a", |_| {})
            .build()
            .unwrap_err(),
        BuildError::Duplicate("a".into())
    );
    assert_eq!(
        Router::builder().method("", ok).build().unwrap_err(),
        BuildError::EmptyName
    );
    assert_eq!(
        Router::builder().method("rpc.x", ok).build().unwrap_err(),
        BuildError::Reserved("rpc.x".into())
    );
    assert_eq!(
        Router::builder()
            .method("rpc.discover", ok)
            .build()
            .unwrap_err(),
        BuildError::Reserved("rpc.discover".into())
    );
    assert!(matches!(
        Router::builder()
            .method("a", ok)
            .schema("a", Some("{"), None)
            .build(),
        Err(BuildError::InvalidSchema(_))
    ));
    assert!(matches!(
        Router::builder().schema("zz", None, None).build(),
        Err(BuildError::UnknownMethod(_))
    ));
}

#[test]
fn handler_panics_answer_internal_error_and_the_session_survives() {
    let router = Router::builder()
        .method("boom", |_, out| {
            out.str("partial")?;
            panic!("handler bug")
        })
        .method("ok", |_, out| out.i64(1))
        .method("app", |_, _| {
            Err(RpcError::new(42, "insufficient funds").with_data_json(r#"{"need":5}"#))
        })
        .method("twice", |_, out| {
            out.i64(1)?;
            out.i64(2)
        })
        .typed("typed", |(a, b): (u8, u8)| Ok(a as u16 + b as u16))
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let v = handle(&mut s, r#"{"jsonrpc":"2.0","method":"boom","id":1}"#).unwrap();
    assert_eq!(v["error"]["code"], -32603);
    let v = handle(
        &mut s,
        r#"[{"jsonrpc":"2.0","method":"boom","id":1},{"jsonrpc":"2.0","method":"ok","id":2}]"#,
    )
    .unwrap();
    assert_eq!(v[0]["error"]["code"], -32603);
    assert_eq!(v[1]["result"], 1);
    assert_eq!(raw(&mut s, r#"{"jsonrpc":"2.0","method":"boom"}"#), None);
    let v = handle(&mut s, r#"{"jsonrpc":"2.0","method":"app","id":1}"#).unwrap();
    assert_eq!(
        v["error"],
        json!({"code": 42, "message": "insufficient funds", "data": {"need": 5}})
    );
    let v = handle(&mut s, r#"{"jsonrpc":"2.0","method":"twice","id":1}"#).unwrap();
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(
        handle(
            &mut s,
            r#"{"jsonrpc":"2.0","method":"typed","params":[200,100],"id":1}"#
        )
        .unwrap()["result"],
        300
    );
    for p in ["[300,1]", "[1]", r#"{"a":1}"#, "null", r#"["x",1]"#] {
        let v = handle(
            &mut s,
            &format!(r#"{{"jsonrpc":"2.0","method":"typed","params":{p},"id":1}}"#),
        )
        .unwrap();
        assert_eq!(v["error"]["code"], -32602, "{p}: {v}");
        assert_eq!(v["error"]["data"]["field"], "params");
        assert!(v["error"]["data"]["detail"].is_string());
    }
}

#[test]
fn one_router_many_threads_same_answers() {
    let router = demo::router();
    let inputs: Vec<String> = (0..200)
        .map(|i| match i % 5 {
            0 => format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},{}],"id":{i}}}"#, i / 2),
            1 => format!(r#"[{{"jsonrpc":"2.0","method":"sum","params":[{i},1],"id":"{i}"}},{{"jsonrpc":"2.0","method":"update"}}]"#),
            2 => format!(r#"{{"jsonrpc":"2.0","method":"nope{i}","id":{i}}}"#),
            3 => format!(r#"{{"jsonrpc":"2.0","method":"get_data","id":{i}"#),
            _ => r#"{"jsonrpc":"2.0","method":"notify_hello"}"#.to_string(),
        })
        .collect();
    let answer_all = |router: Arc<Router>| {
        let mut s = Session::new(router);
        inputs
            .iter()
            .map(|i| s.handle(i.as_bytes()).map(<[u8]>::to_vec))
            .collect::<Vec<_>>()
    };
    let expected = answer_all(router.clone());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| answer_all(router.clone())))
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), expected);
        }
    });
}

#[test]
fn raw_json_results_lose_surrounding_whitespace_so_ndjson_stays_one_line() {
    let router = Router::builder()
        .method("spaced", |_, out| out.raw_json(b" \n\t[1, 2]\r\n "))
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let out = raw(&mut s, r#"{"jsonrpc":"2.0","method":"spaced","id":1}"#).unwrap();
    assert_eq!(out, r#"{"jsonrpc":"2.0","result":[1, 2],"id":1}"#);
}
