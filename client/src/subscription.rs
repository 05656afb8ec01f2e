//! A subscription: the server's notifications for one subscription id.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use crate::{Client, Error, RawResponse, Transport, message};

/// The notifications of one subscription, in the order they came: each one's
/// `params.result` (or its whole `params` when it has no `result`), borrowed
/// from the message it came in. Dropping it unsubscribes (without waiting for
/// the answer); [`Subscription::unsubscribe`] waits for it.
///
/// At most the client's subscription buffer of notifications wait to be read
/// ([`ClientBuilder::subscription_buffer`](crate::ClientBuilder::subscription_buffer)):
/// when a notification finds it full, the subscription is ended: the ones
/// buffered are still read, then [`Error::Lagged`], then the end.
///
/// ```no_run
/// # async fn f() -> Result<(), switchboard_client::Error> {
/// let client = switchboard_client::Client::connect("ws://127.0.0.1:8080/").await?;
/// let mut heads = client.subscribe("eth_subscribe", &["newHeads"], "eth_unsubscribe").await?;
/// while let Some(head) = heads.next().await {
///     println!("{}", head?.as_str());
/// }
/// # Ok(()) }
/// ```
///
/// The same against a server in this process (`switchboard-server` answers
/// WebSocket upgrades on its HTTP port), whose subscription sends three
/// notifications:
///
/// ```
/// use switchboard::Router;
/// use switchboard::connection::block_on;
/// use switchboard_client::Client;
/// use switchboard_server::http::{Switchboard, serve};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let router = Router::builder()
///         .subscription("count_subscribe", "count_unsubscribe", "count", |_call, sink| {
///             std::thread::spawn(move || {
///                 for n in 1..=3 {
///                     let _ = sink.send(&n);
///                 }
///                 block_on(sink.closed()); // until the client unsubscribes
///             });
///             Ok(())
///         })
///         .build()?;
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
///     let url = format!("ws://{}/", listener.local_addr()?);
///     tokio::spawn(serve(listener, Switchboard::new(router), std::future::pending()));
///
///     let client = Client::connect(&url).await?;
///     let mut counts = client.subscribe("count_subscribe", &(), "count_unsubscribe").await?;
///     assert!(counts.id().starts_with("\"0x")); // the id as the server sent it
///     let mut seen = Vec::new();
///     for _ in 0..3 {
///         seen.push(counts.next().await.unwrap()?.parse::<u32>()?);
///     }
///     assert_eq!(seen, [1, 2, 3]);
///     assert_eq!(counts.unsubscribe().await?.as_str(), "true");
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct Subscription {
    client: Client,
    id: RawResponse,
    unsubscribe: String,
    rx: mpsc::Receiver<RawResponse>,
    lagged: Arc<AtomicBool>,
    /// Unsubscribed already (explicitly, or the connection is gone).
    done: bool,
}

impl Subscription {
    pub(crate) fn new(
        client: Client,
        id: RawResponse,
        unsubscribe: &str,
        rx: mpsc::Receiver<RawResponse>,
        lagged: Arc<AtomicBool>,
    ) -> Self {
        Subscription {
            client,
            id,
            unsubscribe: unsubscribe.to_owned(),
            rx,
            lagged,
            done: false,
        }
    }

    /// The subscription id as the server sent it (its JSON text: `"0x1f"`, `7`).
    pub fn id(&self) -> &str {
        self.id.as_str()
    }

    /// The next notification; `None` once the subscription or the connection
    /// has ended.
    ///
    /// # Errors
    /// [`Error::Lagged`] once, after the buffered ones, when the buffer filled.
    pub async fn next(&mut self) -> Option<Result<RawResponse, Error>> {
        match self.rx.recv().await {
            Some(n) => Some(Ok(n)),
            None if self.lagged.swap(false, Ordering::Relaxed) => Some(Err(Error::Lagged)),
            None => None,
        }
    }

    /// The unsubscribe request: the method with `[id]`.
    fn unsubscribe_message(&self, id: u64) -> Vec<u8> {
        let mut buf = Vec::with_capacity(64 + self.unsubscribe.len() + self.id.as_bytes().len());
        // A `str` with `()` params always writes.
        message::start(&mut buf, &self.unsubscribe, &()).expect("no params");
        buf.extend_from_slice(br#","params":["#);
        buf.extend_from_slice(self.id.as_bytes());
        buf.push(b']');
        message::finish_request(&mut buf, id);
        buf
    }

    /// Unsubscribes and waits for the answer (the unsubscribe method's result,
    /// `true` by convention). No notification is yielded after this.
    ///
    /// # Errors
    /// As [`Client::request_raw`].
    pub async fn unsubscribe(mut self) -> Result<RawResponse, Error> {
        self.done = true;
        let Transport::Ws(ws) = &self.client.inner.transport else {
            unreachable!("subscriptions are made over WebSocket only")
        };
        ws.forget(self.id.as_bytes());
        let id = self.client.ids(1);
        let msg = self.unsubscribe_message(id);
        ws.call(id, msg, None, self.client.inner.timeout).await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Transport::Ws(ws) = &self.client.inner.transport {
            ws.forget(self.id.as_bytes());
            let id = self.client.ids(1);
            // Its answer matches no call: counted as unmatched, dropped.
            let _ = ws.send(self.unsubscribe_message(id));
        }
    }
}
