//! `switchboard serve --bench`: a subscription for the load tool
//! (`benches/src/bin/ws_load.rs --subscribe N`, `benches/ws.sh`), the peer of
//! the same one in `benches/src/bin/jsonrpsee_server.rs`.
//!
//! `bench_subscribe [COUNT]` answers a subscription id, then sends COUNT
//! notifications `bench_subscription {"subscription": ID, "result": k}` for `k`
//! from 0 to COUNT - 1 as fast as the client reads them: each
//! [`SubscriptionSink::send_async`] waits for room instead of closing the
//! subscription. `bench_unsubscribe [ID]` stops it early.

use switchboard::connection::SubscriptionSink;
use switchboard::{RouterBuilder, RpcError};

/// COUNT when the params give none.
pub(crate) const DEFAULT_COUNT: u64 = 1_000_000;

/// Registers `bench_subscribe` / `bench_unsubscribe` / `bench_subscription`.
pub(crate) fn register(builder: RouterBuilder) -> RouterBuilder {
    builder.subscription(
        "bench_subscribe",
        "bench_unsubscribe",
        "bench_subscription",
        |call, sink| {
            let count = match call.params() {
                None => DEFAULT_COUNT,
                Some(p) => p.index(0).and_then(|v| v.as_u64()).ok_or_else(|| {
                    RpcError::invalid_params("expected [COUNT], a non-negative integer")
                })?,
            };
            let runtime = tokio::runtime::Handle::try_current()
                .map_err(|_| RpcError::internal("no runtime to run the subscription on"))?;
            runtime.spawn(produce(sink, count));
            Ok(())
        },
    )
}

/// Sends `0..count` at the client's pace, until done or closed.
async fn produce(sink: SubscriptionSink, count: u64) {
    for k in 0..count {
        if sink.send_async(&k).await.is_err() {
            return; // unsubscribed, or the client went
        }
    }
    // Done: the sink stays open until the client unsubscribes or goes.
    sink.closed().await;
}

#[cfg(test)]
mod tests {
    use switchboard::connection::{Connection, ConnectionConfig};
    use switchboard::{Router, Session};

    #[tokio::test]
    async fn sends_count_notifications_in_order_at_the_clients_pace() {
        let router = super::register(Router::builder()).build().unwrap();
        // A small capacity: the producer must wait, never overflow.
        let mut config = ConnectionConfig::new();
        config.subscription_capacity(4).queue_capacity(4);
        let (conn, outgoing) = Connection::new(&config);
        let mut session = Session::new(router);
        session.attach(conn.clone());
        let answer = session
            .handle(br#"{"jsonrpc":"2.0","method":"bench_subscribe","params":[100],"id":1}"#)
            .unwrap()
            .to_vec();
        conn.send(answer.clone()).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        let id = v["result"].as_str().unwrap().to_owned();
        assert_eq!(outgoing.recv().await.unwrap(), answer);
        for k in 0..100 {
            let m = outgoing.recv().await.unwrap();
            let want = format!(
                r#"{{"jsonrpc":"2.0","method":"bench_subscription","params":{{"subscription":"{id}","result":{k}}}}}"#
            );
            assert_eq!(String::from_utf8(m).unwrap(), want);
        }
        assert_eq!(conn.subscriptions(), 1);
        assert_eq!(conn.subscriptions_overflowed(), 0);
        let bad = session
            .handle(br#"{"jsonrpc":"2.0","method":"bench_subscribe","params":["x"],"id":2}"#)
            .unwrap();
        assert!(bad.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32602"#));
    }
}
