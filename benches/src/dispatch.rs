//! Full request bytes to response bytes, per stack, with the same methods and the
//! same answers everywhere: the demo methods of `switchboard-server` (`subtract`,
//! `sum`, `get_data`, `eth_getBalance`, and the notifications), re-implemented on
//! each peer the way a user of that peer would write them.
//!
//! | stack | path measured |
//! | --- | --- |
//! | `switchboard` | `Session::handle` with the demo router, one reused session |
//! | `serde_json` | hand-written: `from_slice` into a struct with `&RawValue` params and id, `match` on the method, typed params, `serde_json::to_writer` into a reused `Vec` |
//! | `jsonrpsee` | `RpcModule::raw_json_request` (the documented in-process call), polled once with a no-op waker (sync methods never pend, so no runtime is needed) |
//! | `jsonrpsee_callback` | what `raw_json_request` does minus its per-call channel and `Extensions` clone: `from_slice` into `jsonrpsee_types::Request`, `Methods::method`, the `MethodCallback::Sync` callback; the cheapest in-process path jsonrpsee's public API offers |
//! | `jsonrpc_core` | `IoHandler::handle_request_sync` |
//!
//! Batches: switchboard and jsonrpc-core take them natively. `raw_json_request` takes
//! one request only, so both jsonrpsee rows split a batch as jsonrpsee's server does
//! (into `Vec<&RawValue>`, one call per element, responses joined into `[..]`; the
//! callback row with jsonrpsee's own `BatchResponseBuilder`). The serde_json server
//! first tries the whole batch as `Vec<Request>` and only falls back to per-element
//! parsing if that fails (a fast path in its favour).
//!
//! jsonrpsee and jsonrpc-core take `&str`, so those rows pay `str::from_utf8` on the
//! input, as a server on bytes has to.

use std::borrow::Cow;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use jsonrpc_core::{IoHandler, Value};
use jsonrpsee::{BatchResponseBuilder, Extensions, MethodCallback, MethodResponse, RpcModule};
use jsonrpsee_types::{ErrorCode, ErrorObject, ErrorObjectOwned, Params, Request};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Number;
use serde_json::value::RawValue;
use switchboard::Session;
use switchboard_server::demo;

use crate::payloads;

/// The fixed balance every stack's `eth_getBalance` answers.
pub const BALANCE: &str = demo::BALANCE;

/// One JSON-RPC server: request bytes in, response bytes out.
pub trait Server {
    /// Name in bench ids and on the command line.
    const NAME: &'static str;

    /// A server with the demo methods registered, ready to handle messages.
    fn new() -> Self;

    /// The response to one whole message (`None`: nothing to send).
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]>;
}

/// The names of the dispatch stacks, in report order.
pub const SERVER_NAMES: [&str; 5] = [
    Switchboard::NAME,
    SerdeServer::NAME,
    Jsonrpsee::NAME,
    JsonrpseeCallback::NAME,
    JsonrpcCore::NAME,
];

/// A dispatch workload: a message and the response every stack must give.
#[derive(Clone, Debug)]
pub struct RpcWorkload {
    /// Short name (command line, bench ids).
    pub name: &'static str,
    /// The request bytes.
    pub bytes: Vec<u8>,
    /// switchboard's response bytes (the other stacks' must parse to the same JSON).
    pub expected: Vec<u8>,
}

/// The dispatch workload names, in report order.
pub const RPC_WORKLOAD_NAMES: [&str; 4] = [
    "rpc_eth_getBalance",
    "rpc_subtract",
    "rpc_batch10_subtract",
    "rpc_batch10_eth_getBalance",
];

/// A batch of `n` positional `subtract` calls: element `i` (1-based) is
/// `[42 + i, 23]` with id `i`, so every answer differs.
pub fn batch_of_subtract(n: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for i in 1..=n {
        if i > 1 {
            out.push(b',');
        }
        out.extend_from_slice(
            format!(
                r#"{{"jsonrpc":"2.0","method":"subtract","params":[{},23],"id":{i}}}"#,
                42 + i
            )
            .as_bytes(),
        );
    }
    out.push(b']');
    out
}

/// The dispatch workload called `name`, with switchboard's response as expected.
pub fn rpc_workload(name: &str) -> Option<RpcWorkload> {
    let (name, bytes) = match name {
        "rpc_eth_getBalance" => ("rpc_eth_getBalance", payloads::ETH_GET_BALANCE.to_vec()),
        "rpc_subtract" => ("rpc_subtract", payloads::SUBTRACT_POSITIONAL.to_vec()),
        "rpc_batch10_subtract" => ("rpc_batch10_subtract", batch_of_subtract(10)),
        "rpc_batch10_eth_getBalance" => (
            "rpc_batch10_eth_getBalance",
            payloads::batch_of_eth_get_balance(10),
        ),
        _ => return None,
    };
    let expected = Switchboard::new()
        .handle(&bytes)
        .expect("every dispatch workload is answered")
        .to_vec();
    Some(RpcWorkload {
        name,
        bytes,
        expected,
    })
}

/// All dispatch workloads, in report order.
pub fn rpc_workloads() -> Vec<RpcWorkload> {
    RPC_WORKLOAD_NAMES
        .iter()
        .filter_map(|n| rpc_workload(n))
        .collect()
}

/// Whether two responses are the same JSON (member order and spacing aside).
pub fn same_json(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<serde_json::Value>(a),
        serde_json::from_slice::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Checks `S` on `w`: its response must be the same JSON as switchboard's, twice
/// (reused state), and byte-identical between the two calls. Returns its bytes,
/// which the timing loops then compare against (a cheap `memcmp`).
pub fn check<S: Server>(server: &mut S, w: &RpcWorkload) -> Result<Vec<u8>, String> {
    let first = server
        .handle(&w.bytes)
        .ok_or_else(|| format!("{} gave no response on {}", S::NAME, w.name))?
        .to_vec();
    if !same_json(&first, &w.expected) {
        return Err(format!(
            "{} on {}: {} is not switchboard's {}",
            S::NAME,
            w.name,
            String::from_utf8_lossy(&first),
            String::from_utf8_lossy(&w.expected)
        ));
    }
    let second = server.handle(&w.bytes).map(<[u8]>::to_vec);
    if second.as_deref() != Some(first.as_slice()) {
        return Err(format!("{} on {}: a second call differs", S::NAME, w.name));
    }
    Ok(first)
}

// ---------------------------------------------------------------------------
// The demo methods' semantics, shared by the peers.

/// A number as the demo methods treat it: an exact integer when it is one that
/// fits `i64`, else a finite float.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Num {
    /// Exact.
    Int(i64),
    /// Finite.
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Option<Num> {
        n.as_i64()
            .map(Num::Int)
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(Num::Float))
    }

    fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    fn finite(self) -> Option<Num> {
        match self {
            Num::Float(f) if !f.is_finite() => None,
            n => Some(n),
        }
    }

    fn sub(self, b: Num) -> Option<Num> {
        match (self, b) {
            (Num::Int(x), Num::Int(y)) => Some(
                x.checked_sub(y)
                    .map_or(Num::Float(x as f64 - y as f64), Num::Int),
            ),
            _ => Num::Float(self.float() - b.float()).finite(),
        }
    }

    fn add(self, b: Num) -> Option<Num> {
        match (self, b) {
            (Num::Int(x), Num::Int(y)) => Some(
                x.checked_add(y)
                    .map_or(Num::Float(x as f64 + y as f64), Num::Int),
            ),
            _ => Num::Float(self.float() + b.float()).finite(),
        }
    }
}

// Every stack checks `eth_getBalance`'s params with the demo's own functions.
use demo::{is_block, is_hex_address};

/// `subtract`'s named form.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Named {
    minuend: Number,
    subtrahend: Number,
}

/// The first byte of a JSON text that is not whitespace.
fn first_byte(s: &str) -> Option<u8> {
    s.bytes().find(|b| !b.is_ascii_whitespace())
}

/// `subtract` on raw params text (positional or named).
fn subtract_raw(params: &str) -> Option<Num> {
    let (a, b) = match first_byte(params)? {
        b'[' => serde_json::from_str::<(Number, Number)>(params).ok()?,
        b'{' => {
            let n: Named = serde_json::from_str(params).ok()?;
            (n.minuend, n.subtrahend)
        }
        _ => return None,
    };
    Num::of(&a)?.sub(Num::of(&b)?)
}

/// `sum` on raw params text.
fn sum_raw(params: &str) -> Option<Num> {
    let v: Vec<Number> = serde_json::from_str(params).ok()?;
    v.iter()
        .try_fold(Num::Int(0), |acc, n| acc.add(Num::of(n)?))
}

/// A string borrowed from the input unless it has escapes (a bare `Cow<str>` in a
/// tuple would always be copied: serde borrows a `Cow` only under `#[serde(borrow)]`).
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

/// `eth_getBalance` on raw params text.
fn eth_get_balance_raw(params: &str) -> Option<&'static str> {
    let (Str(a), Str(b)): (Str<'_>, Str<'_>) = serde_json::from_str(params).ok()?;
    (is_hex_address(&a) && is_block(&b)).then_some(BALANCE)
}

/// `get_data`'s fixed answer.
const GET_DATA: (&str, i32) = ("hello", 5);

const INVALID_PARAMS: i32 = -32602;

/// Drives a future that completes at once (a synchronous method's call).
fn now<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a synchronous call did not complete at once"),
    }
}

// ---------------------------------------------------------------------------
// switchboard

/// switchboard: `Session::handle` with the demo router.
#[derive(Debug)]
pub struct Switchboard {
    session: Session,
}

impl Server for Switchboard {
    const NAME: &'static str = "switchboard";

    fn new() -> Self {
        Switchboard {
            session: Session::new(demo::router()),
        }
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.session.handle(input)
    }
}

// ---------------------------------------------------------------------------
// hand-written serde_json

/// A request as the hand-written server reads it: strings borrowed, params and id
/// raw. `id: null` is `Some("null")`; only a missing id makes a notification.
#[derive(Deserialize)]
struct ServerRequest<'a> {
    jsonrpc: &'a str,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Serialize)]
struct Success<'a, R> {
    jsonrpc: &'static str,
    result: R,
    id: &'a RawValue,
}

#[derive(Serialize)]
struct ErrorObj {
    code: i32,
    message: &'static str,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    error: ErrorObj,
    id: Option<&'a RawValue>,
}

/// The hand-written serde_json server (see the module docs).
#[derive(Debug, Default)]
pub struct SerdeServer {
    out: Vec<u8>,
}

/// Writes one error response.
fn write_error(out: &mut Vec<u8>, code: i32, message: &'static str, id: Option<&RawValue>) {
    let f = Failure {
        jsonrpc: "2.0",
        error: ErrorObj { code, message },
        id,
    };
    serde_json::to_writer(out, &f).expect("writing into a Vec cannot fail");
}

fn write_ok<R: Serialize>(out: &mut Vec<u8>, result: R, id: &RawValue) {
    let s = Success {
        jsonrpc: "2.0",
        result,
        id,
    };
    serde_json::to_writer(out, &s).expect("writing into a Vec cannot fail");
}

/// Handles one parsed request, appending its response; whether it wrote one.
fn serve_one(out: &mut Vec<u8>, req: &ServerRequest<'_>) -> bool {
    if req.jsonrpc != "2.0" {
        write_error(out, -32600, "Invalid Request", req.id);
        return true;
    }
    let params = req.params.map_or("", RawValue::get);
    let Some(id) = req.id else {
        // Notifications: run, never answered.
        return false;
    };
    match req.method.as_ref() {
        "subtract" => match subtract_raw(params) {
            Some(n) => write_ok(out, n, id),
            None => write_error(out, INVALID_PARAMS, "Invalid params", Some(id)),
        },
        "sum" => match sum_raw(params) {
            Some(n) => write_ok(out, n, id),
            None => write_error(out, INVALID_PARAMS, "Invalid params", Some(id)),
        },
        "get_data" => write_ok(out, GET_DATA, id),
        "eth_getBalance" => match eth_get_balance_raw(params) {
            Some(b) => write_ok(out, b, id),
            None => write_error(out, INVALID_PARAMS, "Invalid params", Some(id)),
        },
        _ => write_error(out, -32601, "Method not found", Some(id)),
    }
    true
}

/// Handles one element given as raw JSON, appending its response.
fn serve_raw(out: &mut Vec<u8>, raw: &RawValue) -> bool {
    match serde_json::from_str::<ServerRequest<'_>>(raw.get()) {
        Ok(req) => serve_one(out, &req),
        Err(_) => {
            write_error(out, -32600, "Invalid Request", None);
            true
        }
    }
}

impl SerdeServer {
    fn batch(&mut self, input: &[u8]) {
        let out = &mut self.out;
        out.push(b'[');
        let mut any = false;
        let mut one = |out: &mut Vec<u8>, f: &mut dyn FnMut(&mut Vec<u8>) -> bool| {
            let mark = out.len();
            if any {
                out.push(b',');
            }
            if f(out) {
                any = true;
            } else {
                out.truncate(mark);
            }
        };
        // Fast path: every element is a well-formed request.
        if let Ok(reqs) = serde_json::from_slice::<Vec<ServerRequest<'_>>>(input) {
            for r in &reqs {
                one(out, &mut |out| serve_one(out, r));
            }
        } else if let Ok(elems) = serde_json::from_slice::<Vec<&RawValue>>(input) {
            for e in elems {
                one(out, &mut |out| serve_raw(out, e));
            }
        } else {
            out.clear();
            write_error(out, -32700, "Parse error", None);
            return;
        }
        if out.len() == 1 {
            // `[]`, or only notifications.
            out.clear();
            if input.iter().filter(|b| !b.is_ascii_whitespace()).count() == 2 {
                write_error(out, -32600, "Invalid Request", None);
            }
            return;
        }
        out.push(b']');
    }
}

impl Server for SerdeServer {
    const NAME: &'static str = "serde_json";

    fn new() -> Self {
        SerdeServer {
            out: Vec::with_capacity(256),
        }
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.out.clear();
        if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            self.batch(input);
        } else {
            match serde_json::from_slice::<ServerRequest<'_>>(input) {
                Ok(req) => {
                    serve_one(&mut self.out, &req);
                }
                Err(_) => {
                    let valid = serde_json::from_slice::<serde::de::IgnoredAny>(input).is_ok();
                    let (code, message) = if valid {
                        (-32600, "Invalid Request")
                    } else {
                        (-32700, "Parse error")
                    };
                    write_error(&mut self.out, code, message, None);
                }
            }
        }
        (!self.out.is_empty()).then_some(self.out.as_slice())
    }
}

// ---------------------------------------------------------------------------
// jsonrpsee

fn invalid_params() -> ErrorObjectOwned {
    ErrorObject::owned(INVALID_PARAMS, "Invalid params", None::<()>)
}

/// The demo methods on a jsonrpsee `RpcModule`.
pub fn jsonrpsee_module() -> RpcModule<()> {
    let mut m = RpcModule::new(());
    m.register_method("subtract", |p: Params<'_>, _, _| {
        subtract_raw(p.as_str().unwrap_or("")).ok_or_else(invalid_params)
    })
    .expect("fresh name");
    m.register_method("sum", |p: Params<'_>, _, _| {
        sum_raw(p.as_str().unwrap_or("")).ok_or_else(invalid_params)
    })
    .expect("fresh name");
    m.register_method("get_data", |_, _, _| Ok::<_, ErrorObjectOwned>(GET_DATA))
        .expect("fresh name");
    m.register_method("eth_getBalance", |p: Params<'_>, _, _| {
        eth_get_balance_raw(p.as_str().unwrap_or("")).ok_or_else(invalid_params)
    })
    .expect("fresh name");
    // Notifications: jsonrpsee has no separate kind; the server drops their answers.
    for name in ["update", "notify_hello", "notify_sum"] {
        m.register_method(name, |_, _, _| ()).expect("fresh name");
    }
    m
}

/// jsonrpsee through `RpcModule::raw_json_request` (see the module docs).
pub struct Jsonrpsee {
    module: RpcModule<()>,
    out: String,
}

impl Jsonrpsee {
    fn call(&self, request: &str) -> Option<Box<RawValue>> {
        now(self.module.raw_json_request(request, 1))
            .ok()
            .map(|(resp, _rx)| resp)
    }
}

impl Server for Jsonrpsee {
    const NAME: &'static str = "jsonrpsee";

    fn new() -> Self {
        Jsonrpsee {
            module: jsonrpsee_module(),
            out: String::new(),
        }
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        let s = std::str::from_utf8(input).ok()?;
        if first_byte(s) == Some(b'[') {
            // As jsonrpsee's server splits a batch: raw elements, one call each.
            let elems: Vec<&RawValue> = serde_json::from_str(s).ok()?;
            let mut out = String::with_capacity(2048);
            out.push('[');
            for e in elems {
                let resp = self.call(e.get())?;
                out.push_str(resp.get());
                out.push(',');
            }
            out.pop();
            out.push(']');
            self.out = out;
        } else {
            self.out = Box::<str>::from(self.call(s)?).into();
        }
        Some(self.out.as_bytes())
    }
}

/// jsonrpsee through its method callbacks directly (see the module docs).
pub struct JsonrpseeCallback {
    module: RpcModule<()>,
    out: Option<Box<RawValue>>,
}

impl JsonrpseeCallback {
    fn call(&self, req: Request<'_>) -> MethodResponse {
        let Request {
            id, method, params, ..
        } = req;
        let params = Params::new(params.as_ref().map(|p| p.get()));
        match self.module.method(&method) {
            Some(MethodCallback::Sync(cb)) => cb(id, params, usize::MAX, Extensions::new()),
            Some(_) => unreachable!("only synchronous methods are registered"),
            None => MethodResponse::error(id, ErrorObject::from(ErrorCode::MethodNotFound)),
        }
    }
}

impl Server for JsonrpseeCallback {
    const NAME: &'static str = "jsonrpsee_callback";

    fn new() -> Self {
        JsonrpseeCallback {
            module: jsonrpsee_module(),
            out: None,
        }
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        let resp = if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            let elems: Vec<&RawValue> = serde_json::from_slice(input).ok()?;
            let mut batch = BatchResponseBuilder::new_with_limit(usize::MAX);
            for e in elems {
                let req: Request<'_> = serde_json::from_str(e.get()).ok()?;
                batch.append(self.call(req)).ok()?;
            }
            MethodResponse::from_batch(batch.finish())
        } else {
            self.call(serde_json::from_slice(input).ok()?)
        };
        self.out = Some(resp.into_json());
        self.out.as_deref().map(|r| r.get().as_bytes())
    }
}

// ---------------------------------------------------------------------------
// jsonrpc-core

fn core_params(p: &jsonrpc_core::Params) -> Option<(Num, Num)> {
    use jsonrpc_core::Params as P;
    let num = |v: &Value| v.as_number().and_then(Num::of);
    match p {
        P::Array(a) if a.len() == 2 => Some((num(&a[0])?, num(&a[1])?)),
        P::Map(m) if m.len() == 2 => Some((num(m.get("minuend")?)?, num(m.get("subtrahend")?)?)),
        _ => None,
    }
}

fn core_invalid() -> jsonrpc_core::Error {
    jsonrpc_core::Error::invalid_params("Invalid params")
}

fn num_value(n: Num) -> Value {
    match n {
        Num::Int(i) => Value::from(i),
        Num::Float(f) => Value::from(f),
    }
}

/// The demo methods on a jsonrpc-core `IoHandler`.
pub fn jsonrpc_core_handler() -> IoHandler {
    let mut io = IoHandler::new();
    io.add_sync_method("subtract", |p: jsonrpc_core::Params| {
        let (a, b) = core_params(&p).ok_or_else(core_invalid)?;
        a.sub(b).map(num_value).ok_or_else(core_invalid)
    });
    io.add_sync_method("sum", |p: jsonrpc_core::Params| {
        let jsonrpc_core::Params::Array(a) = p else {
            return Err(core_invalid());
        };
        a.iter()
            .try_fold(Num::Int(0), |acc, v| acc.add(Num::of(v.as_number()?)?))
            .map(num_value)
            .ok_or_else(core_invalid)
    });
    io.add_sync_method("get_data", |_| {
        Ok(Value::Array(vec![
            Value::from(GET_DATA.0),
            Value::from(GET_DATA.1),
        ]))
    });
    io.add_sync_method("eth_getBalance", |p: jsonrpc_core::Params| match p {
        jsonrpc_core::Params::Array(a)
            if a.len() == 2
                && a[0].as_str().is_some_and(is_hex_address)
                && a[1].as_str().is_some_and(is_block) =>
        {
            Ok(Value::from(BALANCE))
        }
        _ => Err(core_invalid()),
    });
    for name in ["update", "notify_hello", "notify_sum"] {
        io.add_notification(name, |_| {});
    }
    io
}

/// jsonrpc-core: `IoHandler::handle_request_sync`.
pub struct JsonrpcCore {
    io: IoHandler,
    out: Option<String>,
}

impl Server for JsonrpcCore {
    const NAME: &'static str = "jsonrpc_core";

    fn new() -> Self {
        JsonrpcCore {
            io: jsonrpc_core_handler(),
            out: None,
        }
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        let s = std::str::from_utf8(input).ok()?;
        self.out = self.io.handle_request_sync(s);
        self.out.as_deref().map(str::as_bytes)
    }
}

/// Runs `f` with a fresh server of the stack called `name` (a dispatch stack).
pub fn with_server<R>(name: &str, f: impl FnOnce(&mut dyn DynServer) -> R) -> Option<R> {
    Some(match name {
        Switchboard::NAME => f(&mut Switchboard::new()),
        SerdeServer::NAME => f(&mut SerdeServer::new()),
        Jsonrpsee::NAME => f(&mut Jsonrpsee::new()),
        JsonrpseeCallback::NAME => f(&mut JsonrpseeCallback::new()),
        JsonrpcCore::NAME => f(&mut JsonrpcCore::new()),
        _ => return None,
    })
}

/// [`Server`] as a trait object, for harnesses that pick the stack at run time.
pub trait DynServer {
    /// The stack's name.
    fn name(&self) -> &'static str;
    /// [`Server::handle`].
    fn handle_dyn(&mut self, input: &[u8]) -> Option<&[u8]>;
}

impl<S: Server> DynServer for S {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn handle_dyn(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.handle(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stack answers every workload exactly as switchboard does.
    #[test]
    fn every_stack_answers_like_switchboard() {
        for w in rpc_workloads() {
            for name in SERVER_NAMES {
                with_server(name, |s| {
                    let first = s.handle_dyn(&w.bytes).map(<[u8]>::to_vec);
                    let first = first.unwrap_or_else(|| panic!("{name}: no answer on {}", w.name));
                    assert!(
                        same_json(&first, &w.expected),
                        "{name} on {}: {} vs {}",
                        w.name,
                        String::from_utf8_lossy(&first),
                        String::from_utf8_lossy(&w.expected)
                    );
                    let again = s.handle_dyn(&w.bytes).map(<[u8]>::to_vec);
                    assert_eq!(again.as_deref(), Some(first.as_slice()), "{name} reused");
                })
                .unwrap();
            }
        }
    }

    #[test]
    fn the_typed_check_agrees() {
        let w = rpc_workload("rpc_batch10_subtract").unwrap();
        check(&mut Switchboard::new(), &w).unwrap();
        check(&mut SerdeServer::new(), &w).unwrap();
        check(&mut Jsonrpsee::new(), &w).unwrap();
        check(&mut JsonrpseeCallback::new(), &w).unwrap();
        check(&mut JsonrpcCore::new(), &w).unwrap();
    }

    /// The expected answers themselves (so switchboard cannot drift unnoticed).
    #[test]
    fn switchboard_answers_are_the_specs() {
        let get = |n: &str| rpc_workload(n).unwrap().expected;
        assert!(same_json(
            &get("rpc_subtract"),
            br#"{"jsonrpc":"2.0","result":19,"id":1}"#
        ));
        assert!(same_json(
            &get("rpc_eth_getBalance"),
            br#"{"jsonrpc":"2.0","result":"0x1bdb569fa3c2565cc","id":1}"#
        ));
        let batch: Vec<serde_json::Value> =
            serde_json::from_slice(&get("rpc_batch10_subtract")).unwrap();
        assert_eq!(batch.len(), 10);
        for (i, r) in batch.iter().enumerate() {
            assert_eq!(r["result"], serde_json::json!(20 + i), "{r}");
            assert_eq!(r["id"], serde_json::json!(i + 1));
        }
        assert_eq!(payloads::ETH_GET_BALANCE.len(), 115);
    }

    /// The other demo methods and shapes agree too, beyond the benchmarked ones.
    #[test]
    fn more_methods_agree() {
        let cases: [&[u8]; 7] = [
            br#"{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}"#,
            br#"{"jsonrpc":"2.0","method":"subtract","params":[1.5,0.25],"id":"a"}"#,
            br#"{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":2}"#,
            br#"{"jsonrpc":"2.0","method":"get_data","id":9}"#,
            br#"{"jsonrpc":"2.0","method":"subtract","params":[-9223372036854775808,1],"id":4}"#,
            br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"get_data","id":2}]"#,
            br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","0x10"],"id":null}"#,
        ];
        for input in cases {
            let expected = Switchboard::new().handle(input).unwrap().to_vec();
            for name in SERVER_NAMES {
                let got = with_server(name, |s| s.handle_dyn(input).map(<[u8]>::to_vec))
                    .unwrap()
                    .unwrap_or_else(|| panic!("{name}: no answer"));
                assert!(
                    same_json(&got, &expected),
                    "{name} on {}: {} vs {}",
                    String::from_utf8_lossy(input),
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected)
                );
            }
        }
    }
}
