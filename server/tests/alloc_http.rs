//! Allocations per HTTP call in switchboard's part of the path: `Switchboard::respond`
//! on a warm per-connection service, the request already built (hyper's parsing is
//! hyper's). Its own test binary, with a counting allocator.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use switchboard_server::{demo, http::Switchboard};
use switchboard_tests::counting::{Counting, so_far};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn request(body: &'static str) -> Request<Full<Bytes>> {
    Request::builder()
        .method("POST")
        .header("content-type", "application/json")
        .header("content-length", body.len())
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap()
}

#[test]
fn a_warm_call_allocates_only_the_response_headers() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let svc = Switchboard::new(demo::router()).connection();
    let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let note = r#"{"jsonrpc":"2.0","method":"update","params":[1]}"#;
    for _ in 0..3 {
        rt.block_on(svc.respond(request(call)));
        rt.block_on(svc.respond(request(note)));
    }
    for (body, most) in [(call, 2), (note, 0)] {
        let req = request(body);
        // Counted inside the task: `block_on` itself boxes a large future, hyper's
        // connection task holds it inline.
        let (n, resp) = rt.block_on(async {
            let before = so_far();
            let resp = svc.respond(req).await;
            (so_far() - before, resp)
        });
        drop(resp);
        eprintln!("{n} allocation(s) for {body}");
        // The response's header map (two allocations, the `http` crate's); the body
        // reuses the previous response's buffer; a 204 allocates nothing.
        assert!(n <= most, "{n} allocations for {body}");
    }
}
