//! One session per thread or connection: reusable parser state and response buffer.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::handler::{Call, ResultWriter, RpcError};
use super::router::{Handler, Router};
use crate::parse::{Error, Id, Item, Message, Parser, Reason};
use crate::write;

/// Handles messages against a shared [`Router`], writing each response into a
/// buffer it reuses: after warm-up, a message costs no heap allocation in the core.
/// Not safe for concurrent use: give each thread or connection its own.
///
/// ```
/// use switchboard::{Router, Session};
/// let router = Router::builder().method("ping", |_, out| out.str("pong")).build().unwrap();
/// let mut a = Session::new(router.clone()); // sessions share the router
/// let mut b = Session::new(router);
/// assert_eq!(a.handle(br#"{"jsonrpc":"2.0","method":"ping","id":"x"}"#).unwrap(),
///            br#"{"jsonrpc":"2.0","result":"pong","id":"x"}"#);
/// assert_eq!(b.handle(br#"{"jsonrpc":"2.0","method":"nope","id":2}"#).unwrap(),
///            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"field":"method","reason":"is not registered"}},"id":2}"#);
/// ```
pub struct Session {
    router: Arc<Router>,
    parser: Parser,
    out: Vec<u8>,
    dropped_responses: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("router", &self.router)
            .field("dropped_responses", &self.dropped_responses)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session for `router`, with the router's parser limits.
    pub fn new(router: Arc<Router>) -> Self {
        let parser = Parser::with_config(*router.config());
        Session {
            router,
            parser,
            out: Vec::with_capacity(256),
            dropped_responses: 0,
        }
    }

    /// The router this session dispatches to.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// Response objects received without a sink registered, since the session began.
    pub fn dropped_responses(&self) -> u64 {
        self.dropped_responses
    }

    /// Handles one whole message: the complete response bytes, valid until the next
    /// call, or `None` when nothing is to be sent (notifications, responses, a batch
    /// of them). Never panics on any input; a handler that panics is answered -32603.
    pub fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        let Session {
            router,
            parser,
            out,
            dropped_responses,
        } = self;
        out.clear();
        if out.capacity() > RETAINED_OUT {
            // A huge response is not kept around for the small ones that follow.
            out.shrink_to(RETAINED_OUT);
        }
        let wrote = match parser.parse(input) {
            Message::Batch(batch) => {
                out.push(b'[');
                let mut any = false;
                for item in batch.iter() {
                    let mark = out.len();
                    if any {
                        out.push(b',');
                    }
                    if dispatch(router, item, out, dropped_responses) {
                        any = true;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push(b']');
                any
            }
            Message::Request(r) => dispatch(router, Item::Request(r), out, dropped_responses),
            Message::Notification(n) => {
                dispatch(router, Item::Notification(n), out, dropped_responses)
            }
            Message::Response(r) => dispatch(router, Item::Response(r), out, dropped_responses),
            Message::Error(e) => dispatch(router, Item::Error(e), out, dropped_responses),
        };
        if wrote { Some(&self.out) } else { None }
    }

    /// Like [`Session::handle`], appending the response to `dst` instead; returns
    /// whether anything was appended.
    pub fn handle_into(&mut self, input: &[u8], dst: &mut Vec<u8>) -> bool {
        match self.handle(input) {
            Some(resp) => {
                dst.extend_from_slice(resp);
                true
            }
            None => false,
        }
    }
}

const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",";

/// The response buffer capacity a session keeps between messages (larger ones are
/// given back at the next message).
const RETAINED_OUT: usize = 1 << 20;

/// Dispatches one item, appending its response to `out`; returns whether it wrote one.
fn dispatch(router: &Router, item: Item<'_>, out: &mut Vec<u8>, dropped: &mut u64) -> bool {
    match item {
        Item::Request(r) => {
            let call = Call {
                method: r.method(),
                id: Some(r.id()),
                params: r.params(),
            };
            out.extend_from_slice(HEAD);
            call_into(router, &call, out);
            end_response(out, r.id());
            true
        }
        Item::Notification(n) => {
            let call = Call {
                method: n.method(),
                id: None,
                params: n.params(),
            };
            let mark = out.len();
            call_into(router, &call, out);
            out.truncate(mark); // never answered, not even with an error
            false
        }
        Item::Response(r) => {
            match router.response_sink() {
                Some(sink) => {
                    // A panicking sink must not take the session down.
                    let _ = catch_unwind(AssertUnwindSafe(|| sink(&r)));
                }
                None => *dropped += 1,
            }
            false
        }
        Item::Error(e) => {
            out.extend_from_slice(HEAD);
            write_error(out, &e);
            end_response(out, e.id());
            true
        }
    }
}

fn end_response(out: &mut Vec<u8>, id: Id<'_>) {
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

/// `"error":{"code":…,"message":…,"data":{…}}` for a core error.
fn write_error(out: &mut Vec<u8>, e: &Error<'_>) {
    let code = e.code();
    out.extend_from_slice(b"\"error\":{\"code\":");
    write::write_i64(out, i64::from(code.as_i32()));
    out.extend_from_slice(b",\"message\":\"");
    out.extend_from_slice(code.message().as_bytes()); // static, nothing to escape
    out.extend_from_slice(b"\",\"data\":");
    e.data().write_to(out);
    out.push(b'}');
}

/// Looks the method up and runs its handler, appending `"result":…` or `"error":…`.
fn call_into(router: &Router, call: &Call<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    let entry = call
        .method
        .lookup_key()
        .and_then(|name| router.lookup(name));
    let Some(entry) = entry else {
        write_error(out, &Error::new(Reason::UnknownMethod, Id::NULL));
        return;
    };
    out.extend_from_slice(b"\"result\":");
    let outcome = match &entry.handler {
        Handler::Call(f) => {
            let result = catch_unwind(AssertUnwindSafe(|| {
                let mut w = ResultWriter {
                    out: &mut *out,
                    written: false,
                };
                f(call, &mut w).map(|()| w.written)
            }));
            match result {
                Ok(Ok(true)) => Ok(()),
                Ok(Ok(false)) => {
                    out.extend_from_slice(b"null");
                    Ok(())
                }
                Ok(Err(e)) => Err(Some(e)),
                Err(_) => Err(None),
            }
        }
        Handler::Notify(f) => match catch_unwind(AssertUnwindSafe(|| f(call))) {
            Ok(()) => {
                out.extend_from_slice(b"null");
                Ok(())
            }
            Err(_) => Err(None),
        },
        Handler::Discover => {
            out.extend_from_slice(router.discover_document());
            Ok(())
        }
    };
    match outcome {
        Ok(()) => {}
        Err(Some(e)) => {
            out.truncate(start);
            e.write_member(out);
        }
        Err(None) => {
            out.truncate(start);
            RpcError::new(
                Reason::HandlerFailed.code().as_i32(),
                Reason::HandlerFailed.code().message(),
            )
            .write_member(out);
            // Replace the member's end with the static data object (no allocation).
            out.pop();
            out.extend_from_slice(b",\"data\":{\"reason\":\"the handler panicked\"}}");
        }
    }
}
