//! Zero allocations: after warm-up, handling each message shape through raw
//! handlers allocates nothing. Its own test binary, with a counting allocator.

use switchboard::connection::{CancelRule, Connection, ConnectionConfig};
use switchboard::{Router, RpcError, Session};
use switchboard_tests::counting::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn handling_allocates_nothing_after_warm_up() {
    let router = switchboard_server::demo::register(Router::builder(), Default::default())
        .method("app_error", |_, _| {
            Err(RpcError::new(7, "nope").with_data_json(r#"{"why":"static"}"#))
        })
        .method("echo", |call, out| {
            out.raw_json(call.params().map_or(&b"null"[..], |p| p.as_bytes()))
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);

    let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let batch = |n: usize| format!("[{}]", vec![call; n].join(","));
    let big_params = format!(
        r#"{{"jsonrpc":"2.0","method":"echo","params":{{"blob":"{}","n":[1,2,3]}},"id":"big"}}"#,
        "x".repeat(4096)
    );
    let messages: Vec<(&str, String)> = vec![
        ("positional", call.into()),
        ("named", r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":3}"#.into()),
        ("escaped method", r#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[1,2],"id":"\u0041"}"#.into()),
        ("eth", r#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}"#.into()),
        ("string result", r#"{"jsonrpc":"2.0","method":"get_data","id":9}"#.into()),
        ("4 KB params", big_params),
        ("notification", r#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#.into()),
        ("unknown notification", r#"{"jsonrpc":"2.0","method":"nope"}"#.into()),
        ("batch of 10", batch(10)),
        ("batch of 100", batch(100)),
        ("spec batch", r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]},{"foo":"boo"},{"jsonrpc":"2.0","method":"foo.get","id":"5"}]"#.into()),
        ("response", r#"{"jsonrpc":"2.0","result":19,"id":1}"#.into()),
        ("parse error", r#"{"jsonrpc":"2.0","method":"foobar, "params":"bar","baz]"#.into()),
        ("too deep", format!("{}{}", "[".repeat(200), "]".repeat(200))),
        ("invalid request", r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#.into()),
        ("wrong version", r#"{"jsonrpc":"1.0","method":"x","id":1}"#.into()),
        ("duplicate", r#"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#.into()),
        ("id type", r#"{"jsonrpc":"2.0","method":"a","id":[1]}"#.into()),
        ("params type", r#"{"jsonrpc":"2.0","method":"a","params":1,"id":1}"#.into()),
        ("empty batch", "[]".into()),
        ("non-object batch", "[1,2,3]".into()),
        ("method not found", r#"{"jsonrpc":"2.0","method":"nope","id":1}"#.into()),
        ("invalid params", r#"{"jsonrpc":"2.0","method":"subtract","params":["a"],"id":1}"#.into()),
        ("application error", r#"{"jsonrpc":"2.0","method":"app_error","id":1}"#.into()),
        ("empty", "".into()),
        ("too large", " ".repeat((8 << 20) + 1)),
    ];
    // The counter works: a fresh session allocates.
    assert!(allocations(|| drop(Session::new(switchboard_server::demo::router()))).1 > 0);
    // Warm up with every shape (the buffers grow to their high-water marks).
    for (_, m) in &messages {
        let _ = session.handle(m.as_bytes());
    }
    let mut invalid_utf8 = br#"{"jsonrpc":"2.0","method":"m"#.to_vec();
    invalid_utf8.extend_from_slice(b"\xC0\xAF\",\"id\":1}");
    let _ = session.handle(&invalid_utf8);
    for (name, m) in &messages {
        let ((), n) = allocations(|| {
            std::hint::black_box(session.handle(m.as_bytes()));
        });
        assert_eq!(n, 0, "{name}: {n} allocations");
    }
    let ((), n) = allocations(|| {
        std::hint::black_box(session.handle(&invalid_utf8));
    });
    assert_eq!(n, 0, "invalid UTF-8");

    // The same on a connection, as its driver handles messages: sync handlers
    // inline, a cancel rule set, the client's responses matched against the
    // pending table (unmatched here), cancel notifications for unknown calls.
    let router = switchboard_server::demo::register(Router::builder(), Default::default())
        .method("app_error", |_, _| {
            Err(RpcError::new(7, "nope").with_data_json(r#"{"why":"static"}"#))
        })
        .method("echo", |call, out| {
            out.raw_json(call.params().map_or(&b"null"[..], |p| p.as_bytes()))
        })
        .cancel_notification(CancelRule::new("$/cancelRequest", "id"))
        .build()
        .unwrap();
    let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
    let mut session = Session::new(router);
    session.attach(conn.clone());
    let cancel = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":77}}"#;
    let mut shapes: Vec<(&str, &str)> = messages
        .iter()
        .map(|(name, m)| (*name, m.as_str()))
        .collect();
    shapes.push(("cancel for an unknown call", cancel));
    for (_, m) in &shapes {
        let _ = session.handle_concurrent(m.as_bytes());
    }
    for (name, m) in &shapes {
        let ((), n) = allocations(|| {
            let h = session.handle_concurrent(m.as_bytes());
            assert!(h.calls.is_none(), "{name}");
            std::hint::black_box(h.response);
        });
        assert_eq!(n, 0, "{name} on a connection: {n} allocations");
    }
    assert!(conn.unmatched_responses() > 0);
}
