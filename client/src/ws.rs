//! The WebSocket transport (fastwebsockets): one connection, a task that writes
//! what the callers queue, and a task that reads and classifies every message:
//! responses go to the calls awaiting them (by id), notifications to the
//! subscription their `params.subscription` names, and the server's own
//! requests to a [`Session`] (answered -32601 unless the user routed them).
//!
//! An error answer with a null id (the server could not read a message at all,
//! or refused a batch as a whole) names no call: it is counted as unmatched,
//! and the calls of that message fail by their timeout. An answer larger than
//! the client's limit breaks the connection (the frame cannot be skipped):
//! every pending call fails with [`Error::Transport`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use fastwebsockets::{Frame, OpCode, Payload, WebSocketError};
use http_body_util::Empty;
use hyper::header::{AUTHORIZATION, CONNECTION, HOST, UPGRADE};
use hyper::{Request, Uri};
use switchboard::{Item, Message, Notification, Response, Router, Session};
use tokio::sync::{mpsc, oneshot};

use crate::response::{self, RawResponse};
use crate::{Error, within};

/// What the writer task sends.
pub(crate) enum Out {
    /// One message, as a text frame.
    Text(Vec<u8>),
    /// A frame the protocol obliges (pong, the close reply).
    Control(OpCode, Vec<u8>),
    /// Close the connection (the client is gone).
    Close,
}

/// Where a subscription's notifications go.
#[derive(Clone)]
pub(crate) struct Slot {
    pub(crate) tx: mpsc::Sender<RawResponse>,
    /// Set when the buffer was full: the subscription was ended.
    pub(crate) lagged: Arc<AtomicBool>,
}

struct Waiter {
    tx: oneshot::Sender<Result<RawResponse, Error>>,
    /// For a subscribe call: registered under the result (the subscription
    /// id) before the answer is handed over, so that no notification that
    /// follows it is missed.
    sub: Option<Slot>,
}

#[derive(Default)]
struct Book {
    pending: HashMap<u64, Waiter>,
    subs: HashMap<Box<[u8]>, Slot>,
    /// Why the connection is closed, once it is.
    closed: Option<String>,
}

#[derive(Default)]
pub(crate) struct State {
    book: Mutex<Book>,
    unmatched: AtomicU64,
}

impl State {
    fn book(&self) -> MutexGuard<'_, Book> {
        // A panic while holding the lock leaves the maps consistent (each
        // change is one insert or remove).
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fails every pending call and ends every subscription.
    fn close(&self, why: String) {
        let (pending, subs) = {
            let mut b = self.book();
            if b.closed.is_none() {
                b.closed = Some(why.clone());
            }
            (std::mem::take(&mut b.pending), std::mem::take(&mut b.subs))
        };
        for (_, w) in pending {
            let _ = w.tx.send(Err(Error::Transport(why.clone())));
        }
        drop(subs);
    }
}

/// Removes a call's entry when the call ends (answered, timed out, dropped).
struct Pending<'a> {
    state: &'a State,
    id: u64,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.state.book().pending.remove(&self.id);
    }
}

pub(crate) struct Ws {
    out: mpsc::UnboundedSender<Out>,
    state: Arc<State>,
    subscription_buffer: usize,
}

impl Drop for Ws {
    fn drop(&mut self) {
        let _ = self.out.send(Out::Close);
    }
}

/// Runs hyper's connection task on tokio (the handshake's executor).
struct Spawn;

impl<F> hyper::rt::Executor<F> for Spawn
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(fut);
    }
}

fn ws_error(e: WebSocketError) -> Error {
    match e {
        WebSocketError::InvalidStatusCode(status) => Error::Http {
            status,
            body: String::new(),
        },
        other => Error::Transport(other.to_string()),
    }
}

impl Ws {
    pub(crate) async fn connect(
        uri: &Uri,
        token: Option<&str>,
        max_message_bytes: usize,
        subscription_buffer: usize,
        server_requests: Option<Arc<Router>>,
    ) -> Result<Ws, Error> {
        let host = uri
            .host()
            .ok_or_else(|| Error::Unsupported(format!("{uri} has no host")))?;
        let port = uri.port_u16().unwrap_or(80);
        let authority = uri.authority().map_or(host, |a| a.as_str());
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let stream = tokio::net::TcpStream::connect((host, port))
            .await
            .map_err(|e| Error::Transport(format!("connecting to {authority}: {e}")))?;
        let _ = stream.set_nodelay(true);
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut req = Request::get(path)
            .header(HOST, authority)
            .header(UPGRADE, "websocket")
            .header(CONNECTION, "upgrade")
            .header(
                "Sec-WebSocket-Key",
                fastwebsockets::handshake::generate_key(),
            )
            .header("Sec-WebSocket-Version", "13");
        if let Some(t) = token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        let req = req
            .body(Empty::<Bytes>::new())
            .map_err(|e| Error::Unsupported(format!("the handshake request: {e}")))?;
        let (ws, _) = fastwebsockets::handshake::client(&Spawn, req, stream)
            .await
            .map_err(ws_error)?;
        let (mut rd, wr) = ws.split(tokio::io::split);
        rd.set_max_message_size(max_message_bytes);
        let rd = fastwebsockets::FragmentCollectorRead::new(rd);
        let (out, rx) = mpsc::unbounded_channel();
        let state = Arc::new(State::default());
        let router = match server_requests {
            Some(r) => r,
            None => Router::builder().build().expect("an empty router builds"),
        };
        tokio::spawn(write_loop(wr, rx, state.clone()));
        tokio::spawn(read_loop(
            rd,
            out.clone(),
            state.clone(),
            Session::new(router),
        ));
        Ok(Ws {
            out,
            state,
            subscription_buffer,
        })
    }

    /// Queues one message.
    pub(crate) fn send(&self, msg: Vec<u8>) -> Result<(), Error> {
        self.out
            .send(Out::Text(msg))
            .map_err(|_| Error::Transport(self.closed_why()))
    }

    fn closed_why(&self) -> String {
        self.state
            .book()
            .closed
            .clone()
            .unwrap_or_else(|| "the connection is closed".into())
    }

    /// Registers the calls `ids` (a subscribe call with its slot).
    fn register(
        &self,
        ids: impl Iterator<Item = u64>,
        sub: Option<Slot>,
    ) -> Result<Vec<oneshot::Receiver<Result<RawResponse, Error>>>, Error> {
        let mut b = self.state.book();
        if let Some(why) = &b.closed {
            return Err(Error::Transport(why.clone()));
        }
        Ok(ids
            .map(|id| {
                let (tx, rx) = oneshot::channel();
                b.pending.insert(
                    id,
                    Waiter {
                        tx,
                        sub: sub.clone(),
                    },
                );
                rx
            })
            .collect())
    }

    /// Sends the request `msg` (id `id`) and waits for its answer.
    pub(crate) async fn call(
        &self,
        id: u64,
        msg: Vec<u8>,
        sub: Option<Slot>,
        timeout: Option<std::time::Duration>,
    ) -> Result<RawResponse, Error> {
        let rx = self.register(std::iter::once(id), sub)?.pop().expect("one");
        let _pending = Pending {
            state: &self.state,
            id,
        };
        self.send(msg)?;
        within(timeout, async {
            rx.await
                .unwrap_or_else(|_| Err(Error::Transport(self.closed_why())))
        })
        .await
    }

    /// Sends a batch whose requests are `base..base + n`; their answers in order.
    pub(crate) async fn batch(
        &self,
        base: u64,
        n: usize,
        msg: Vec<u8>,
        timeout: Option<std::time::Duration>,
    ) -> Result<Vec<Result<RawResponse, Error>>, Error> {
        let rxs = self.register(base..base + n as u64, None)?;
        let _pending: Vec<Pending<'_>> = (base..base + n as u64)
            .map(|id| Pending {
                state: &self.state,
                id,
            })
            .collect();
        self.send(msg)?;
        within(timeout, async {
            let mut out = Vec::with_capacity(n);
            for rx in rxs {
                out.push(
                    rx.await
                        .unwrap_or_else(|_| Err(Error::Transport(self.closed_why()))),
                );
            }
            Ok(out)
        })
        .await
    }

    /// A new subscription's slot and the receiving end of its buffer.
    pub(crate) fn slot(&self) -> (Slot, mpsc::Receiver<RawResponse>) {
        let (tx, rx) = mpsc::channel(self.subscription_buffer);
        (
            Slot {
                tx,
                lagged: Arc::default(),
            },
            rx,
        )
    }

    /// Stops routing the subscription `id` (its buffer ends once drained).
    pub(crate) fn forget(&self, id: &[u8]) {
        self.state.book().subs.remove(id);
    }

    /// Responses that matched no call (unknown ids, duplicates, late answers).
    pub(crate) fn unmatched(&self) -> u64 {
        self.state.unmatched.load(Ordering::Relaxed)
    }
}

type Stream = tokio::io::WriteHalf<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;
type ReadStream = tokio::io::ReadHalf<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

async fn write_loop(
    mut wr: fastwebsockets::WebSocketWrite<Stream>,
    mut rx: mpsc::UnboundedReceiver<Out>,
    state: Arc<State>,
) {
    async fn one(
        wr: &mut fastwebsockets::WebSocketWrite<Stream>,
        o: Out,
    ) -> Result<bool, WebSocketError> {
        match o {
            Out::Text(m) => wr.write_frame(Frame::text(Payload::Owned(m))).await?,
            Out::Control(op, p) => {
                let close = op == OpCode::Close;
                wr.write_frame(Frame::new(true, op, None, Payload::Owned(p)))
                    .await?;
                if close {
                    return Ok(false);
                }
            }
            Out::Close => {
                wr.write_frame(Frame::close(1000, b"")).await?;
                return Ok(false);
            }
        }
        Ok(true)
    }
    while let Some(o) = rx.recv().await {
        let mut more = one(&mut wr, o).await;
        while let Ok(true) = more {
            match rx.try_recv() {
                Ok(o) => more = one(&mut wr, o).await,
                Err(_) => break,
            }
        }
        let flushed = wr.flush().await;
        match (more, flushed) {
            (Ok(true), Ok(())) => {}
            (Ok(false), _) => break,
            (Err(e), _) | (_, Err(e)) => {
                state.close(format!("writing: {e}"));
                break;
            }
        }
    }
}

async fn read_loop(
    mut rd: fastwebsockets::FragmentCollectorRead<ReadStream>,
    out: mpsc::UnboundedSender<Out>,
    state: Arc<State>,
    mut session: Session,
) {
    let why = loop {
        let mut obliged = |f: Frame<'_>| {
            let sent = out.send(Out::Control(f.opcode, f.payload.to_vec()));
            std::future::ready(sent.map_err(|_| "the writer is gone"))
        };
        let frame = match rd.read_frame(&mut obliged).await {
            Ok(f) => f,
            Err(e) => break format!("the connection broke: {e}"),
        };
        match frame.opcode {
            OpCode::Text | OpCode::Binary => {
                let bytes = match frame.payload {
                    Payload::Bytes(b) => b.freeze(),
                    other => Bytes::from(Vec::from(other)),
                };
                if route(&state, &bytes)
                    && let Some(answer) = session.handle_async(&bytes).await
                {
                    let _ = out.send(Out::Text(answer.to_vec()));
                }
            }
            OpCode::Close => {
                let code = frame
                    .payload
                    .get(..2)
                    .map_or(1005, |c| u16::from_be_bytes([c[0], c[1]]));
                break format!("the server closed the connection ({code})");
            }
            _ => {}
        }
    };
    state.close(why);
}

/// Hands each response and notification of `message` on; whether it holds a
/// request of the server's (for the session to answer).
fn route(state: &State, message: &Bytes) -> bool {
    response::with_parser(|p| match p.parse(message) {
        Message::Response(r) => {
            deliver(state, message, &r);
            false
        }
        Message::Notification(n) => {
            notify(state, message, &n);
            false
        }
        Message::Request(_) => true,
        Message::Batch(b) => {
            let mut requests = false;
            for item in b.iter() {
                match item {
                    Item::Response(r) => deliver(state, message, &r),
                    Item::Notification(n) => notify(state, message, &n),
                    Item::Request(_) => requests = true,
                    Item::Error(_) => {
                        state.unmatched.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            requests
        }
        // Not JSON-RPC: nothing can be matched to it.
        Message::Error(_) => {
            state.unmatched.fetch_add(1, Ordering::Relaxed);
            false
        }
    })
}

fn deliver(state: &State, message: &Bytes, r: &Response<'_>) {
    let mut b = state.book();
    let Some(w) = response::sent_id(r.id()).and_then(|id| b.pending.remove(&id)) else {
        drop(b);
        state.unmatched.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let outcome = response::outcome(message, r);
    if let (Some(slot), Ok(id)) = (w.sub, &outcome) {
        b.subs.insert(id.as_bytes().into(), slot);
    }
    drop(b);
    let _ = w.tx.send(outcome);
}

fn notify(state: &State, message: &Bytes, n: &Notification<'_>) {
    let Some(params) = n.params() else { return };
    let Some(sub) = params.get("subscription") else {
        return;
    };
    let value = params.get("result").unwrap_or(params.raw());
    let mut b = state.book();
    let Some(slot) = b.subs.get(sub.as_bytes()) else {
        return;
    };
    match slot
        .tx
        .try_send(RawResponse::new(message, value.as_bytes()))
    {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) => {
            slot.lagged.store(true, Ordering::Relaxed);
            b.subs.remove(sub.as_bytes());
        }
        Err(mpsc::error::TrySendError::Closed(_)) => {
            b.subs.remove(sub.as_bytes());
        }
    }
}
