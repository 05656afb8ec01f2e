//! The playground's functions on the host: the page's examples
//! (`site/examples.json`) answer with the codes they claim, and bad input gets
//! the core's errors (its limits are kept).

use serde_json::Value;
use switchboard_playground::{inspect, respond, respond_n};

fn examples() -> Value {
    serde_json::from_str(include_str!("../site/examples.json")).unwrap()
}

fn answer(input: &[u8]) -> Value {
    serde_json::from_slice(&respond(input).expect("a response")).unwrap()
}

#[test]
fn every_error_example_answers_its_code() {
    let ex = examples();
    let errors = ex["errors"].as_array().unwrap();
    let mut codes: Vec<i64> = Vec::new();
    for e in errors {
        let v = answer(e["request"].as_str().unwrap().as_bytes());
        assert_eq!(v["error"]["code"], e["code"], "{e}: {v}");
        if matches!(e["code"].as_i64(), Some(-32700 | -32600)) {
            assert!(v["id"].is_null(), "{v}");
        }
        codes.push(e["code"].as_i64().unwrap());
    }
    for code in [-32700, -32600, -32601, -32602, -32603] {
        assert!(codes.contains(&code), "{code} has no example");
    }
    assert!(
        codes.iter().any(|c| (-32099..=-32000).contains(c)),
        "no server-defined code"
    );
}

#[test]
fn the_batch_example_gets_three_responses() {
    let ex = examples();
    let v = answer(ex["batch"]["request"].as_str().unwrap().as_bytes());
    assert_eq!(
        v,
        serde_json::json!([
            {"jsonrpc": "2.0", "result": 7, "id": "1"},
            {"jsonrpc": "2.0", "result": 19, "id": "2"},
            {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"},
        ])
    );
}

#[test]
fn every_builder_method_is_a_demo_method() {
    let ex = examples();
    for (name, shapes) in ex["methods"].as_object().unwrap() {
        let msg = serde_json::json!({"jsonrpc": "2.0", "method": name, "params": shapes["positional"], "id": 1});
        let mut msg = msg.as_object().unwrap().clone();
        if shapes["positional"].is_null() {
            msg.remove("params");
        }
        let bytes = serde_json::to_vec(&msg).unwrap();
        match respond(&bytes) {
            // A notification handler: the method exists, so no -32601.
            None => {}
            Some(r) => {
                let v: Value = serde_json::from_slice(&r).unwrap();
                assert!(v.get("result").is_some(), "{name}: {v}");
            }
        }
    }
}

#[test]
fn notifications_and_inspect() {
    assert_eq!(
        respond(br#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#),
        None
    );
    assert_eq!(
        respond(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#).unwrap(),
        br#"{"jsonrpc":"2.0","result":19,"id":1}"#
    );
    assert_eq!(
        inspect(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1.0}"#),
        r#"{"kind":"request","method":"subtract","id":1.0,"params":[42,23]}"#
    );
    assert_eq!(
        respond_n(br#"{"jsonrpc":"2.0","method":"get_data","id":1}"#, 3),
        br#"{"jsonrpc":"2.0","result":["hello",5],"id":1}"#.len()
    );
}

#[test]
fn bad_input_gets_the_cores_errors() {
    // Deep nesting: -32700, no stack overflow.
    let deep = "[".repeat(100_000);
    assert_eq!(answer(deep.as_bytes())["error"]["code"], -32700);
    // Invalid UTF-8.
    let v = answer(b"{\"jsonrpc\":\"2.0\",\"method\":\"sub\xfftract\",\"id\":1}");
    assert!(
        v["error"]["code"] == -32700 || v["error"]["code"] == -32600,
        "{v}"
    );
    // Over the default message size limit (8 MiB).
    let limit = switchboard::ParserConfig::new().get_max_message_bytes();
    let huge = format!("[{}1]", "1,".repeat(limit / 2));
    let v = answer(huge.as_bytes());
    assert!(v["error"].is_object(), "{v}");
    assert!(
        v["error"]["data"].to_string().contains(&limit.to_string()),
        "{v}"
    );
}
