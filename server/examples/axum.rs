//! switchboard mounted in an axum application, next to other routes, with RPC
//! middleware recording metrics on the `metrics` facade (calls, errors and a
//! latency histogram per method) and a Prometheus `/metrics` page.
//!
//! ```text
//! cargo run --release -p switchboard-server --example axum -- 127.0.0.1:3000
//! curl -s localhost:3000/rpc -H 'content-type: application/json' \
//!      -d '{"jsonrpc":"2.0","method":"transfer","params":{"to":"bob","amount":5},"id":1}'
//! curl -s localhost:3000/metrics
//! ```
//!
//! The JSON-RPC endpoint is `Switchboard`, a tower `Service`, mounted with
//! axum's `route_service`; axum's own routes and layers work around it as
//! around any service.

use std::sync::Arc;

use axum::Router as Axum;
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde::{Deserialize, Serialize};
use switchboard::middleware::{Done, Middleware};
use switchboard::{ResultExt, Router, RpcError};
use switchboard_server::http::Switchboard;

/// Records every call of a registered method on the `metrics` facade:
/// `rpc_calls_total{method}`, `rpc_errors_total{method,code}` and the
/// `rpc_call_seconds{method}` histogram. Which recorder receives them (here
/// Prometheus) is the application's choice.
struct Metrics;

impl Middleware for Metrics {
    fn after(&self, done: &Done<'_>) {
        // The registered name: a client cannot invent labels (unregistered
        // methods never reach middleware).
        let method = done.method().to_owned();
        metrics::counter!("rpc_calls_total", "method" => method.clone()).increment(1);
        if let Some(code) = done.outcome().error_code() {
            metrics::counter!("rpc_errors_total", "method" => method.clone(), "code" => code.to_string())
                .increment(1);
        }
        metrics::histogram!("rpc_call_seconds", "method" => method).record(done.elapsed());
    }
}

#[derive(Deserialize)]
struct Transfer {
    to: String,
    amount: u64,
}

#[derive(Serialize)]
struct Receipt {
    to: String,
    balance: u64,
}

fn rpc_router() -> Arc<Router> {
    Router::builder()
        .typed("transfer", |t: Transfer| {
            let balance = 100u64
                .checked_sub(t.amount)
                .ok_or(RpcError::new(1001, "insufficient funds"))?;
            Ok(Receipt { to: t.to, balance })
        })
        .typed("parse_amount", |(s,): (String,)| {
            s.parse::<u64>().rpc_error(1002)
        })
        .method_async("sleep", |call| async move {
            let (ms,): (u64,) = call.params().map_or(Ok((0,)), |p| p.parse())?;
            tokio::time::sleep(std::time::Duration::from_millis(ms.min(1000))).await;
            Ok(ms)
        })
        .middleware(Metrics)
        .build()
        .expect("valid registrations")
}

/// The application: `/` a page, `/rpc` JSON-RPC, `/metrics` Prometheus text.
fn app(prometheus: PrometheusHandle) -> Axum {
    Axum::new()
        .route("/", get(|| async { "hello from axum; JSON-RPC at /rpc\n" }))
        .route_service("/rpc", Switchboard::new(rpc_router()))
        .route("/metrics", get(move || async move { prometheus.render() }))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or("127.0.0.1:3000".into());
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .expect("no other recorder installed");
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app(prometheus)).await
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    async fn send(app: &Axum, method: &str, uri: &str, body: &str) -> (StatusCode, String) {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    /// The mount answers JSON-RPC next to axum's routes, and the middleware's
    /// counts, errors and histogram reach the Prometheus page.
    #[tokio::test]
    async fn rpc_next_to_other_routes_with_metrics() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        let _guard = metrics::set_default_local_recorder(&recorder);
        let app = app(handle.clone());

        assert_eq!(send(&app, "GET", "/", "").await.0, StatusCode::OK);
        let call =
            r#"{"jsonrpc":"2.0","method":"transfer","params":{"to":"bob","amount":5},"id":1}"#;
        let (status, body) = send(&app, "POST", "/rpc", call).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            r#"{"jsonrpc":"2.0","result":{"to":"bob","balance":95},"id":1}"#
        );
        let over =
            r#"{"jsonrpc":"2.0","method":"transfer","params":{"to":"bob","amount":500},"id":2}"#;
        let (_, body) = send(&app, "POST", "/rpc", over).await;
        assert!(body.contains(r#""code":1001"#), "{body}");
        let bad = r#"{"jsonrpc":"2.0","method":"parse_amount","params":["x"],"id":3}"#;
        let (_, body) = send(&app, "POST", "/rpc", bad).await;
        assert!(
            body.contains(r#""code":1002,"message":"invalid digit found in string""#),
            "{body}"
        );
        let slow = r#"{"jsonrpc":"2.0","method":"sleep","params":[5],"id":4}"#;
        assert!(
            send(&app, "POST", "/rpc", slow)
                .await
                .1
                .contains(r#""result":5"#)
        );
        let unknown = r#"{"jsonrpc":"2.0","method":"nope","id":5}"#;
        assert!(
            send(&app, "POST", "/rpc", unknown)
                .await
                .1
                .contains("-32601")
        );

        let (status, page) = send(&app, "GET", "/metrics", "").await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            page.contains(r#"rpc_calls_total{method="transfer"} 2"#),
            "{page}"
        );
        assert!(
            page.contains(r#"rpc_errors_total{method="transfer",code="1001"} 1"#),
            "{page}"
        );
        assert!(
            page.contains(r#"rpc_calls_total{method="sleep"} 1"#),
            "{page}"
        );
        assert!(
            page.contains(r#"rpc_call_seconds_count{method="sleep"} 1"#),
            "{page}"
        );
        assert!(
            !page.contains("nope"),
            "unregistered methods make no labels: {page}"
        );
    }
}
