//! `rpc.discover` built from types (feature `schemars`): positional, named,
//! nested, unit and other params shapes; the document served through a
//! session; `discover(false)`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use switchboard::{BuildError, Router, RpcError, Session};

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Draw {
    #[serde(rename = "from")]
    start: Point,
    to: Point,
    #[serde(default)]
    width: u32,
}

#[derive(Serialize, JsonSchema)]
struct Drawn {
    length: f64,
}

fn doc(router: &Router) -> Value {
    serde_json::from_slice(router.discover_document()).unwrap()
}

fn method<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {doc}"))
}

#[test]
fn described_methods_carry_their_types_schemas() {
    let router = Router::builder()
        .typed_described("add", |(a, b): (i64, i64)| Ok(a + b))
        .typed_described("draw", |d: Draw| {
            Ok(Drawn {
                length: (d.to.x - d.start.x).hypot(d.to.y - d.start.y),
            })
        })
        .typed_described("sum", |v: Vec<u32>| Ok(v.iter().sum::<u32>()))
        .typed_described("ping", |(): ()| Ok("pong"))
        .typed("plain", |(): ()| Ok(1))
        .build()
        .unwrap();
    let d = doc(&router);

    let add = method(&d, "add");
    assert_eq!(add["paramStructure"], "by-position");
    assert_eq!(
        add["params"],
        json!([
            {"name": "arg0", "schema": {"type": "integer", "format": "int64"}, "required": true},
            {"name": "arg1", "schema": {"type": "integer", "format": "int64"}, "required": true},
        ])
    );
    assert_eq!(add["result"]["schema"]["type"], "integer");

    let draw = method(&d, "draw");
    assert_eq!(draw["paramStructure"], "by-name");
    let params = draw["params"].as_array().unwrap();
    let by_name = |n: &str| params.iter().find(|p| p["name"] == n).unwrap();
    assert_eq!(by_name("from")["required"], true);
    assert_eq!(
        by_name("from")["schema"]["$ref"],
        "#/components/schemas/Point"
    );
    assert_eq!(by_name("width")["required"], false);
    assert_eq!(params.len(), 3);
    assert_eq!(
        draw["result"]["schema"]["$ref"],
        "#/components/schemas/Drawn"
    );
    let point = &d["components"]["schemas"]["Point"];
    assert_eq!(point["type"], "object");
    assert_eq!(point["properties"]["x"]["type"], "number");

    let sum = method(&d, "sum");
    assert_eq!(sum["params"], json!([]));
    assert_eq!(sum["x-params-schema"]["type"], "array");
    assert_eq!(sum["x-params-schema"]["items"]["type"], "integer");

    assert_eq!(method(&d, "ping")["params"], json!([]));
    // Undescribed: no params descriptors, no result.
    let plain = method(&d, "plain");
    assert_eq!(plain["params"], json!([]));
    assert!(plain.get("result").is_none());

    // The same document is what `rpc.discover` answers.
    let mut session = Session::new(router.clone());
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#)
        .unwrap();
    let resp: Value = serde_json::from_slice(resp).unwrap();
    assert_eq!(resp["result"], d);
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"draw","params":{"from":{"x":0,"y":0},"to":{"x":3,"y":4}},"id":2}"#)
        .unwrap();
    assert_eq!(resp, br#"{"jsonrpc":"2.0","result":{"length":5.0},"id":2}"#);
}

#[test]
fn discover_can_be_turned_off_and_describing_an_unknown_method_fails() {
    let router = Router::builder()
        .typed_described("add", |(a, b): (i64, i64)| {
            a.checked_add(b).ok_or(RpcError::new(1, "overflow"))
        })
        .discover(false)
        .build()
        .unwrap();
    assert!(router.methods().all(|m| m != "rpc.discover"));
    assert_eq!(
        method(&doc(&router), "add")["paramStructure"],
        "by-position"
    );
    let mut session = Session::new(router);
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#)
        .unwrap();
    assert!(resp.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32601"#));

    let err = Router::builder()
        .describe::<(i64,), i64>("missing")
        .build()
        .unwrap_err();
    assert_eq!(err, BuildError::UnknownMethod("missing".into()));
}
