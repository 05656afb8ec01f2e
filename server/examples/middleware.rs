//! RPC middleware (the `Middleware` trait): per-method authorization and a
//! per-connection rate limit, refusing calls with JSON-RPC errors before their
//! handlers run, and an audit of every call's outcome. Served over TCP with
//! the duplex driver (newline-delimited JSON-RPC, one driver per connection).
//!
//! ```text
//! cargo run -p switchboard-server --example middleware
//! ```
//!
//! It binds 127.0.0.1 on a free port, makes its own calls on two connections,
//! checks the answers and exits 0.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use switchboard::middleware::{Done, Middleware};
use switchboard::{Call, Router, RpcError};
use switchboard_server::duplex::{Duplex, DuplexConfig};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Put on a connection by `login` (the connection's extensions live as long
/// as it does).
struct Admin;

/// Methods only a logged-in connection may call: -32001 otherwise.
struct AdminOnly(&'static [&'static str]);

impl Middleware for AdminOnly {
    fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
        let name = call.method().lookup_key().unwrap_or("");
        if !self.0.contains(&name) {
            return Ok(());
        }
        let admin = call
            .connection()
            .is_some_and(|c| c.extensions().get::<Admin>().is_some());
        if admin {
            Ok(())
        } else {
            Err(RpcError::new(-32001, "unauthorized")
                .with_data(&serde_json::json!({ "method": name })))
        }
    }
}

/// At most `max` calls of `method` per `window` on each connection: -32005
/// past it.
struct RateLimit {
    method: &'static str,
    max: u32,
    window: Duration,
    /// Per connection id: when its window began, and its calls in it.
    windows: Mutex<HashMap<u64, (Instant, u32)>>,
}

impl Middleware for RateLimit {
    fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
        if call.method().lookup_key() != Some(self.method) {
            return Ok(());
        }
        let conn = call.connection().map_or(0, |c| c.id());
        let now = Instant::now();
        let mut windows = self.windows.lock().expect("not poisoned");
        let (started, calls) = windows.entry(conn).or_insert((now, 0));
        if now.duration_since(*started) >= self.window {
            (*started, *calls) = (now, 0);
        }
        if *calls >= self.max {
            return Err(RpcError::new(-32005, "rate limited"));
        }
        *calls += 1;
        Ok(())
    }
}

/// Counts every call that got through the layers before it, and its errors
/// (refusals by those layers included), by outcome.
#[derive(Default)]
struct Audit {
    calls: AtomicU64,
    errors: AtomicU64,
}

/// The layer, sharing its counts with `main`.
struct AuditLayer(Arc<Audit>);

impl Middleware for AuditLayer {
    fn after(&self, done: &Done<'_>) {
        let audit = &self.0;
        audit.calls.fetch_add(1, Ordering::Relaxed);
        if let Some(code) = done.outcome().error_code() {
            audit.errors.fetch_add(1, Ordering::Relaxed);
            println!("    audit: {} failed with {code}", done.method());
        }
    }
}

fn router(audit: Arc<Audit>) -> Arc<Router> {
    Router::builder()
        .typed("search", |(q,): (String,)| Ok(format!("results for {q}")))
        .typed_with("login", |(password,): (String,), call| {
            if password != "opensesame" {
                return Err(RpcError::new(-32002, "wrong password"));
            }
            let conn = call
                .connection()
                .ok_or(RpcError::new(-32002, "no connection"))?;
            conn.extensions().insert(Admin);
            Ok(true)
        })
        .method("purge", |_, out| out.str("purged"))
        // `before` in this order, `after` in the reverse: the audit sees the
        // refusals of the two layers added after it.
        .middleware(AuditLayer(audit))
        .middleware(AdminOnly(&["purge"]))
        .middleware(RateLimit {
            method: "search",
            max: 3,
            window: Duration::from_secs(60),
            windows: Mutex::default(),
        })
        .build()
        .expect("valid registrations")
}

/// A client connection: NDJSON lines both ways.
struct Client {
    lines: Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let (read, write) = TcpStream::connect(addr).await.unwrap().into_split();
        Client {
            lines: BufReader::new(read).lines(),
            write,
        }
    }

    async fn call(&mut self, request: &str) -> String {
        self.write.write_all(request.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        let answer = self.lines.next_line().await.unwrap().expect("an answer");
        println!("--> {request}\n<-- {answer}");
        answer
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let audit = Arc::new(Audit::default());
    let router = router(audit.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // One duplex driver per connection (each its own `Connection`, whose id
    // and extensions the middleware reads).
    let server = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            let (read, write) = stream.into_split();
            let driver = Duplex::new(router.clone(), DuplexConfig::default());
            tokio::spawn(driver.serve(read, write));
        }
    });

    let mut a = Client::connect(addr).await;
    let purge = r#"{"jsonrpc":"2.0","method":"purge","id":1}"#;
    assert_eq!(
        a.call(purge).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"unauthorized","data":{"method":"purge"}},"id":1}"#
    );
    let login = r#"{"jsonrpc":"2.0","method":"login","params":["opensesame"],"id":2}"#;
    assert_eq!(
        a.call(login).await,
        r#"{"jsonrpc":"2.0","result":true,"id":2}"#
    );
    assert_eq!(
        a.call(purge).await,
        r#"{"jsonrpc":"2.0","result":"purged","id":1}"#
    );

    let search = r#"{"jsonrpc":"2.0","method":"search","params":["rust"],"id":3}"#;
    for _ in 0..3 {
        assert_eq!(
            a.call(search).await,
            r#"{"jsonrpc":"2.0","result":"results for rust","id":3}"#
        );
    }
    assert_eq!(
        a.call(search).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32005,"message":"rate limited"},"id":3}"#
    );

    // Another connection: not logged in, and a rate limit of its own.
    let mut b = Client::connect(addr).await;
    assert!(b.call(purge).await.contains("-32001"));
    assert!(b.call(search).await.contains("results for rust"));

    assert_eq!(audit.calls.load(Ordering::Relaxed), 9);
    assert_eq!(audit.errors.load(Ordering::Relaxed), 3);
    server.abort();
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The example runs to completion: its own assertions pass.
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
