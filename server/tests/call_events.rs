//! The core's per-call events (feature `tracing`, on for this crate): one per
//! call at `debug` with the method, outcome, code and duration, over HTTP, the
//! duplex driver and the blocking stdio loop; a panic or a -32603 at `warn`,
//! also when `debug` is off. A subscriber of the test's own captures them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use switchboard::{Router, RpcError, Session};
use switchboard_server::duplex::{Duplex, DuplexConfig};
use switchboard_server::http::Switchboard;
use switchboard_server::stdio::{Framing, serve};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Metadata, Subscriber, span};

/// One event as captured: its level and fields (`message` included).
#[derive(Clone, Debug)]
struct Seen {
    level: Level,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Captures the events on target `switchboard::call` up to `max`.
#[derive(Clone)]
struct Capture {
    max: Level,
    seen: Arc<Mutex<Vec<Seen>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::from_level(self.max))
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() != "switchboard::call" {
            return;
        }
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.seen.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            fields,
        });
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

fn router() -> Arc<Router> {
    Router::builder()
        .typed("subtract", |(a, b): (i64, i64)| Ok(a - b))
        .typed("fail", |(): ()| -> Result<(), _> {
            Err(RpcError::new(-32603, "the database went away"))
        })
        .typed("explode", |(): ()| -> Result<(), RpcError> {
            panic!("a bug")
        })
        .typed_async("later", |(ms,): (u64,)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok("done")
        })
        .typed_async("explode_later", |(): ()| async move {
            tokio::task::yield_now().await;
            if true {
                panic!("a bug, later");
            }
            Ok(())
        })
        .build()
        .unwrap()
}

/// Runs `f` on a current-thread runtime with `max`'s capture as the default
/// subscriber (spawned tasks run on the same thread, under it too).
fn captured<F: Future<Output = ()>>(max: Level, f: impl FnOnce() -> F) -> Vec<Seen> {
    let capture = Capture {
        max,
        seen: Arc::default(),
    };
    let seen = capture.seen.clone();
    tracing::subscriber::with_default(capture, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f());
    });
    seen.lock().unwrap().clone()
}

/// The event for `method`: exactly one.
fn one<'a>(seen: &'a [Seen], method: &str) -> &'a Seen {
    let of: Vec<_> = seen
        .iter()
        .filter(|s| s.get("method") == Some(method))
        .collect();
    assert_eq!(of.len(), 1, "events for {method}: {seen:#?}");
    of[0]
}

fn post(body: &'static str) -> hyper::Request<Full<bytes::Bytes>> {
    hyper::Request::post("/")
        .header("content-type", "application/json")
        .body(Full::new(bytes::Bytes::from_static(body.as_bytes())))
        .unwrap()
}

#[test]
fn every_http_call_has_its_event() {
    let seen = captured(Level::DEBUG, || async {
        let service = Switchboard::new(router());
        for body in [
            r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
            r#"{"jsonrpc":"2.0","method":"fail","id":2}"#,
            r#"{"jsonrpc":"2.0","method":"explode","id":3}"#,
            r#"{"jsonrpc":"2.0","method":"later","params":[1],"id":4}"#,
            r#"{"jsonrpc":"2.0","method":"nope","id":5}"#,
        ] {
            let answer = service.respond(post(body)).await;
            answer.into_body().collect().await.unwrap();
        }
    });
    let ok = one(&seen, "subtract");
    assert_eq!(ok.level, Level::DEBUG);
    assert_eq!(ok.get("outcome"), Some("ok"));
    assert_eq!(ok.get("code"), None);
    assert!(ok.get("micros").is_some(), "{ok:?}");
    let fail = one(&seen, "fail");
    assert_eq!(fail.level, Level::WARN);
    assert_eq!(fail.get("outcome"), Some("error"));
    assert_eq!(fail.get("code"), Some("-32603"));
    let explode = one(&seen, "explode");
    assert_eq!(explode.level, Level::WARN);
    assert_eq!(explode.get("outcome"), Some("panicked"));
    assert_eq!(explode.get("code"), Some("-32603"));
    let later = one(&seen, "later");
    assert_eq!(later.level, Level::DEBUG);
    assert_eq!(later.get("outcome"), Some("ok"));
    // An unregistered method is not a call of a method (middleware does not see
    // it either): no event, no client-chosen name in the logs.
    assert_eq!(seen.len(), 4, "{seen:#?}");
}

#[test]
fn duplex_and_stdio_calls_have_their_events() {
    let seen = captured(Level::DEBUG, || async {
        let (client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(server);
        let serving =
            tokio::spawn(Duplex::new(router(), DuplexConfig::default()).serve(read, write));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = BufReader::new(client_read).lines();
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"later\",\"params\":[5],\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"explode_later\",\"id\":2}\n")
            .await
            .unwrap();
        lines.next_line().await.unwrap().unwrap();
        lines.next_line().await.unwrap().unwrap();
        client_write.shutdown().await.unwrap();
        serving.await.unwrap().unwrap();

        // The blocking loop: a session of its own, same events.
        let mut session = Session::new(router());
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[1,2]}\n";
        serve(&mut session, Framing::Ndjson, &input[..], std::io::sink()).unwrap();
    });
    let later = one(&seen, "later");
    assert_eq!(later.get("outcome"), Some("ok"));
    let micros: u64 = later.get("micros").unwrap().parse().unwrap();
    assert!(micros >= 5_000, "{later:?}"); // to the future's end
    let explode = one(&seen, "explode_later");
    assert_eq!(explode.level, Level::WARN);
    assert_eq!(explode.get("outcome"), Some("panicked"));
    let notification = one(&seen, "subtract");
    assert_eq!(notification.get("outcome"), Some("ok"));
}

#[test]
fn without_debug_only_the_server_side_failures() {
    let seen = captured(Level::WARN, || async {
        let service = Switchboard::new(router());
        for body in [
            r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
            r#"{"jsonrpc":"2.0","method":"subtract","params":["x"],"id":2}"#,
            r#"{"jsonrpc":"2.0","method":"explode","id":3}"#,
        ] {
            service.respond(post(body)).await;
        }
        let (mut client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(server);
        let serving =
            tokio::spawn(Duplex::new(router(), DuplexConfig::default()).serve(read, write));
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"later\",\"params\":[0],\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"explode_later\",\"id\":2}\n")
            .await
            .unwrap();
        client.shutdown().await.unwrap();
        serving.await.unwrap().unwrap();
    });
    let explode = one(&seen, "explode");
    assert_eq!(explode.level, Level::WARN);
    assert_eq!(explode.get("micros"), None); // not timed
    let later = one(&seen, "explode_later");
    assert_eq!(later.get("outcome"), Some("panicked"));
    assert_eq!(seen.len(), 2, "{seen:#?}");
}
