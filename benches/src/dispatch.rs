//! Full request bytes to response bytes, per stack, with the same methods and the
//! same answers everywhere: the demo methods of `switchboard-server` (`subtract`,
//! `sum`, `get_data`, `eth_getBalance`, and the notifications) plus an MCP-style
//! `tools/call` (answers the tool's name and how many arguments it got), re-implemented
//! on each peer the way a user of that peer would write them.
//!
//! | stack | path measured |
//! | --- | --- |
//! | `switchboard` | `Session::handle` with the demo router, one reused session |
//! | `switchboard_typed` | the same methods as typed handlers (`typed`, `typed_ref`, `typed_borrowed`: params read by serde through switchboard's deserializer over the validated bytes); not in [`SERVER_NAMES`], asked for by name (`STACKS="switchboard switchboard_typed serde_json"`) |
//! | `serde_json` | hand-written: `from_slice` into a struct with `&RawValue` params and id, `match` on the method, typed params, `serde_json::to_writer` into a reused `Vec` |
//! | `sonic_rs` | the same hand-written server on sonic-rs: `sonic_rs::from_slice` into a struct with `LazyValue` params and id, `match` on the method, typed params (`sonic_rs::from_str`), `sonic_rs::to_writer` into a reused `Vec` |
//! | `jsonrpsee` | `RpcModule::raw_json_request` (the documented in-process call), polled once with a no-op waker (sync methods never pend, so no runtime is needed) |
//! | `jsonrpsee_callback` | what `raw_json_request` does minus its per-call channel and `Extensions` clone: `from_slice` into `jsonrpsee_types::Request`, `Methods::method`, the `MethodCallback::Sync` callback; the cheapest in-process path jsonrpsee's public API offers |
//! | `jsonrpc_core` | `IoHandler::handle_request_sync` |
//!
//! Batches: switchboard and jsonrpc-core take them natively. `raw_json_request` takes
//! one request only, so both jsonrpsee rows split a batch as jsonrpsee's server does
//! (into `Vec<&RawValue>`, one call per element, responses joined into `[..]`; the
//! callback row with jsonrpsee's own `BatchResponseBuilder`). The serde_json and
//! sonic-rs servers first try the whole batch as `Vec<Request>` and only fall back to
//! per-element parsing if that fails (a fast path in their favour).
//!
//! jsonrpsee and jsonrpc-core take `&str`, so those rows pay `str::from_utf8` on the
//! input, as a server on bytes has to.
//!
//! What is not a well-formed request goes the way each stack's own server sends it:
//! jsonrpsee's rows first try a request, then a notification (never answered, and
//! jsonrpsee's server does not run notification handlers), then answer what
//! `jsonrpsee::prepare_error` says (-32600 when an `id` can be read, else -32700). The
//! serde_json and sonic-rs servers answer -32600 for valid JSON that is not a request,
//! -32700 else.
//!
//! Notifications (`update`, `notify_hello`, `notify_sum`) run the same handler in
//! every stack that runs notification handlers, [`notified`], which does nothing: a
//! notification measures each stack's own work (the hand-written servers look the
//! method up and call it too).
//!
//! Answers are compared as JSON values, and an error object only by its `code` (the
//! specification leaves `message` and `data` to the server). A stack whose answer to a
//! message differs is not timed on it: the harnesses show it as `n/a` with the reason.

use std::borrow::Cow;
use std::sync::Arc;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Number;
use serde_json::value::RawValue;
use switchboard::{Call, ResultWriter, Router, RpcError, Session};

use crate::{corpus, demo, payloads};

#[cfg(feature = "peers")]
pub use peers::{
    JsonrpcCore, Jsonrpsee, JsonrpseeCallback, SonicRs, jsonrpc_core_handler, jsonrpsee_module,
    sonic_rs_backend,
};

/// The notifications every stack knows. Each stack that runs notification handlers
/// runs [`notified`] for them (jsonrpsee's server runs none).
pub const NOTIFICATIONS: [&str; 3] = ["update", "notify_hello", "notify_sum"];

/// Every stack's notification handler: the same job (none) everywhere, so a
/// notification measures the stack's own work (parse, look up, call, answer nothing).
/// Its `black_box` keeps the compiler from dropping the call, and with it the
/// hand-written servers' look-up of the method.
#[inline]
pub fn notified() {
    std::hint::black_box(());
}

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
pub const SERVER_NAMES: [&str; 6] = [
    "switchboard",
    "serde_json",
    "sonic_rs",
    "jsonrpsee",
    "jsonrpsee_callback",
    "jsonrpc_core",
];

/// A dispatch workload: a message and the response every stack must give.
#[derive(Clone, Debug)]
pub struct RpcWorkload {
    /// Short name (command line, bench ids).
    pub name: &'static str,
    /// The request bytes.
    pub bytes: Vec<u8>,
    /// switchboard's response bytes (the other stacks' must be the same answer,
    /// [`same_answer`]); `None` when nothing is sent back (a notification).
    pub expected: Option<Vec<u8>>,
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

/// The dispatch workload called `name`, with switchboard's response as expected:
/// one of [`RPC_WORKLOAD_NAMES`], a corpus file (`eth_getBalance.json`, read from
/// the corpus folder; `None` if it cannot be read), or `rpc_batch_<n>` (a batch of
/// `n` `eth_getBalance` calls, 1 to 1000, for the scaling curves).
pub fn rpc_workload(name: &str) -> Option<RpcWorkload> {
    if let Some(n) = name.strip_prefix("rpc_batch_") {
        // Scaling: a batch of `n` eth_getBalance calls (n within the batch limit).
        let n: usize = n.parse().ok().filter(|n| (1..=1000).contains(n))?;
        let bytes = payloads::batch_of_eth_get_balance(n);
        return Some(rpc_workload_of(Box::leak(name.into()), bytes));
    }
    if name.ends_with(".json") {
        let bytes = corpus::load(name).ok()?;
        // A harness names a handful of workloads once per run: leaking the name
        // keeps `RpcWorkload` as cheap to capture as for the built-in ones.
        return Some(rpc_workload_of(Box::leak(name.into()), bytes));
    }
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
    Some(rpc_workload_of(name, bytes))
}

/// A dispatch workload of any bytes, switchboard's answer as the expected one.
pub fn rpc_workload_of(name: &'static str, bytes: Vec<u8>) -> RpcWorkload {
    let expected = Switchboard::new().handle(&bytes).map(<[u8]>::to_vec);
    RpcWorkload {
        name,
        bytes,
        expected,
    }
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

/// `v` with every error object (of a response or of a batch's responses) cut down
/// to its `code`: the specification fixes the codes, not `message` or `data`.
fn error_codes_only(mut v: serde_json::Value) -> serde_json::Value {
    fn one(r: &mut serde_json::Value) {
        if let Some(e) = r.get_mut("error") {
            let code = e.get("code").cloned().unwrap_or_default();
            let message_is_string = e.get("message").is_some_and(serde_json::Value::is_string);
            *e = serde_json::json!({ "code": code, "message_is_string": message_is_string });
        }
    }
    match &mut v {
        serde_json::Value::Array(a) => a.iter_mut().for_each(one),
        r => one(r),
    }
    v
}

/// Whether two responses give the same answer: the same JSON, error objects
/// compared by `code` only (and their `message` being a string).
pub fn same_answer(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<serde_json::Value>(a),
        serde_json::from_slice::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => error_codes_only(x) == error_codes_only(y),
        _ => false,
    }
}

/// A response in a few words, for the reason of an `n/a`: `no response`, `error
/// <code> "<message>"`, `a batch of <n> responses`, or its text (cut at 120 bytes).
fn show(r: Option<&[u8]>) -> String {
    let Some(b) = r else {
        return "no response".to_owned();
    };
    match serde_json::from_slice::<serde_json::Value>(b) {
        Ok(serde_json::Value::Array(a)) => format!("a batch of {} responses", a.len()),
        Ok(v) if v.get("error").is_some() => {
            format!("error {} {}", v["error"]["code"], v["error"]["message"])
        }
        _ if b.len() > 120 => format!(
            "{}... ({} bytes)",
            String::from_utf8_lossy(&b[..120]),
            b.len()
        ),
        _ => String::from_utf8_lossy(b).into_owned(),
    }
}

/// Checks `S` on `w`: its response must be the same answer as switchboard's
/// ([`same_answer`]; both none for a notification), twice (reused state), and
/// byte-identical between the two calls. Returns its bytes, which the timing loops
/// then compare against (a cheap `memcmp`). The error says what differs: the
/// harnesses show it as the reason for `n/a`.
pub fn check<S: Server>(server: &mut S, w: &RpcWorkload) -> Result<Option<Vec<u8>>, String> {
    let first = server.handle(&w.bytes).map(<[u8]>::to_vec);
    let same = match (&first, &w.expected) {
        (None, None) => true,
        (Some(a), Some(b)) => same_answer(a, b),
        _ => false,
    };
    if !same {
        return Err(format!(
            "answers {} where switchboard answers {}",
            show(first.as_deref()),
            show(w.expected.as_deref())
        ));
    }
    let second = server.handle(&w.bytes).map(<[u8]>::to_vec);
    if second != first {
        return Err("a second call answers differently".to_owned());
    }
    Ok(first)
}

/// [`check`] for the stack called `name` (a fresh server).
pub fn check_by_name(name: &str, w: &RpcWorkload) -> Option<Result<Option<Vec<u8>>, String>> {
    fn go<S: Server>(w: &RpcWorkload) -> Result<Option<Vec<u8>>, String> {
        check(&mut S::new(), w)
    }
    Some(match name {
        "switchboard" => go::<Switchboard>(w),
        "switchboard_typed" => go::<SwitchboardTyped>(w),
        "serde_json" => go::<SerdeServer>(w),
        #[cfg(feature = "peers")]
        "sonic_rs" => go::<SonicRs>(w),
        #[cfg(feature = "peers")]
        "jsonrpsee" => go::<Jsonrpsee>(w),
        #[cfg(feature = "peers")]
        "jsonrpsee_callback" => go::<JsonrpseeCallback>(w),
        #[cfg(feature = "peers")]
        "jsonrpc_core" => go::<JsonrpcCore>(w),
        _ => return None,
    })
}

/// What `count` and `guard` run under callgrind: a fresh server of `S`, checked on
/// `w` ([`check`]; `Err` is the reason for `n/a`), then `n` messages
/// ([`run_server`]); whether every response was right.
pub fn check_and_run<S: Server>(w: &RpcWorkload, n: u64) -> Result<bool, String> {
    let mut server = S::new();
    let expected = check(&mut server, w)?;
    Ok(run_server(&mut server, w, &expected, n))
}

/// Runs a checked server `n` times on `w` (its state reused), comparing every
/// response with its checked bytes; `false` at the first difference.
#[inline(never)]
pub fn run_server<S: Server>(
    server: &mut S,
    w: &RpcWorkload,
    expected: &Option<Vec<u8>>,
    n: u64,
) -> bool {
    let input = w.bytes.as_slice();
    let expected = expected.as_deref();
    for _ in 0..n {
        if server.handle(std::hint::black_box(input)) != expected {
            return false;
        }
    }
    true
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

/// The JSON library a peer reads a method's params with: the same typed reads on
/// serde_json and on sonic-rs.
trait ParamsJson {
    /// The library's number type (exact integers, else floats).
    type Number: for<'de> Deserialize<'de>;
    /// `n` as the demo methods treat it.
    fn num(n: &Self::Number) -> Option<Num>;
    /// Deserializes `T` from the params text.
    fn parse<'a, T: Deserialize<'a>>(s: &'a str) -> Option<T>;
}

/// Params read with serde_json.
struct SerdeParams;

impl ParamsJson for SerdeParams {
    type Number = Number;

    #[inline]
    fn num(n: &Number) -> Option<Num> {
        Num::of(n)
    }

    #[inline]
    fn parse<'a, T: Deserialize<'a>>(s: &'a str) -> Option<T> {
        serde_json::from_str(s).ok()
    }
}

/// `subtract`'s named form.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Named<N> {
    minuend: N,
    subtrahend: N,
}

/// The first byte of a JSON text that is not whitespace.
fn first_byte(s: &str) -> Option<u8> {
    s.bytes().find(|b| !b.is_ascii_whitespace())
}

/// `subtract` on raw params text (positional or named), read with `J`.
#[inline]
fn subtract_in<J: ParamsJson>(params: &str) -> Option<Num> {
    let (a, b) = match first_byte(params)? {
        b'[' => J::parse::<(J::Number, J::Number)>(params)?,
        b'{' => {
            let n: Named<J::Number> = J::parse(params)?;
            (n.minuend, n.subtrahend)
        }
        _ => return None,
    };
    J::num(&a)?.sub(J::num(&b)?)
}

/// `subtract` on raw params text (positional or named).
fn subtract_raw(params: &str) -> Option<Num> {
    subtract_in::<SerdeParams>(params)
}

/// `sum` on raw params text, read with `J`.
#[inline]
fn sum_in<J: ParamsJson>(params: &str) -> Option<Num> {
    let v: Vec<J::Number> = J::parse(params)?;
    v.iter().try_fold(Num::Int(0), |acc, n| acc.add(J::num(n)?))
}

/// `sum` on raw params text.
fn sum_raw(params: &str) -> Option<Num> {
    sum_in::<SerdeParams>(params)
}

/// A string borrowed from the input unless it has escapes (a bare `Cow<str>` in a
/// tuple would always be copied: serde borrows a `Cow` only under `#[serde(borrow)]`).
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

/// `eth_getBalance` on raw params text, read with `J`.
#[inline]
fn eth_get_balance_in<J: ParamsJson>(params: &str) -> Option<&'static str> {
    let (Str(a), Str(b)): (Str<'_>, Str<'_>) = J::parse(params)?;
    (is_hex_address(&a) && is_block(&b)).then_some(BALANCE)
}

/// `eth_getBalance` on raw params text.
fn eth_get_balance_raw(params: &str) -> Option<&'static str> {
    eth_get_balance_in::<SerdeParams>(params)
}

/// `get_data`'s fixed answer.
const GET_DATA: (&str, i32) = ("hello", 5);

const INVALID_PARAMS: i32 = -32602;

/// `tools/call`'s result (MCP's `CallToolResult` shape): the tool's name as text
/// content and, as structured content, how many arguments it was given.
#[derive(Serialize)]
pub struct ToolResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "structuredContent")]
    structured: ArgumentCount,
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct ArgumentCount {
    arguments: usize,
}

impl<'a> ToolResult<'a> {
    /// The answer to a call of tool `name` with `arguments` arguments.
    pub fn new(name: &'a str, arguments: usize) -> Self {
        ToolResult {
            content: [TextContent {
                kind: "text",
                text: name,
            }],
            structured: ArgumentCount { arguments },
            is_error: false,
        }
    }
}

/// The number of members of a JSON object, values skipped.
struct MemberCount(usize);

impl<'de> Deserialize<'de> for MemberCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Count;
        impl<'de> Visitor<'de> for Count {
            type Value = MemberCount;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MemberCount, A::Error> {
                let mut n = 0;
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(MemberCount(n))
            }
        }
        d.deserialize_map(Count)
    }
}

/// `tools/call`'s params as the serde stacks read them (other members ignored).
#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    arguments: MemberCount,
}

/// `tools/call` on raw params text, read with `J`: the tool's name and its argument
/// count.
#[inline]
fn tools_call_in<J: ParamsJson>(params: &str) -> Option<(Cow<'_, str>, usize)> {
    let c: ToolCall<'_> = J::parse(params)?;
    Some((c.name, c.arguments.0))
}

/// `tools/call` on raw params text: the tool's name and its argument count.
fn tools_call_raw(params: &str) -> Option<(Cow<'_, str>, usize)> {
    tools_call_in::<SerdeParams>(params)
}

/// switchboard's `tools/call`: a raw handler on the params view.
fn tools_call(call: &Call<'_>, out: &mut ResultWriter<'_>) -> Result<(), RpcError> {
    const SHAPE: &str =
        r#"{"field":"params","reason":"expected {\"name\": string, \"arguments\": object}"}"#;
    let bad = || RpcError::new(INVALID_PARAMS, "Invalid params").with_data_json(SHAPE);
    let p = call.params().filter(|p| p.is_object()).ok_or_else(bad)?;
    // One walk over the params: the first `name` and `arguments`, then stop
    // (`arguments`, an object, is handed out before its end is sought: the
    // count below is the one walk over it).
    let (mut name, mut arguments) = (None, None);
    for (k, v) in p.members() {
        if name.is_none() && k.eq_str("name") {
            name = Some(v);
        } else if arguments.is_none() && k.eq_str("arguments") {
            arguments = Some(v);
        }
        if name.is_some() && arguments.is_some() {
            break;
        }
    }
    let name = name.ok_or_else(bad)?;
    let arguments = arguments
        .and_then(|a| a.object_iter())
        .ok_or_else(bad)?
        .count();
    match name.as_plain_str() {
        Some(name) => out.serialize(&ToolResult::new(name, arguments)),
        None => {
            let name: String = name.parse().map_err(|_| bad())?;
            out.serialize(&ToolResult::new(&name, arguments))
        }
    }
}

/// The benches' switchboard router: the demo methods plus `tools/call`, and the
/// notifications running [`notified`].
pub fn router() -> Arc<Router> {
    let mut b = demo::register_methods(Router::builder()).method("tools/call", tools_call);
    for name in NOTIFICATIONS {
        b = b.notification(name, |_| notified());
    }
    b.build().expect("the bench registrations are valid")
}

// ---------------------------------------------------------------------------
// switchboard

/// switchboard: `Session::handle` with the demo router plus `tools/call` ([`router`]).
#[derive(Debug)]
pub struct Switchboard {
    session: Session,
}

impl Switchboard {
    /// A session on a router shared with others (the threads race).
    pub fn on(router: Arc<Router>) -> Self {
        Switchboard {
            session: Session::new(router),
        }
    }
}

impl Server for Switchboard {
    const NAME: &'static str = "switchboard";

    fn new() -> Self {
        Switchboard::on(router())
    }

    #[inline]
    fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.session.handle(input)
    }
}

// ---------------------------------------------------------------------------
// switchboard, typed handlers

/// A number read by a typed handler as the demo methods treat it ([`Num`]): an
/// exact integer when it fits `i64`, else a finite float.
struct TypedNum(Num);

impl<'de> Deserialize<'de> for TypedNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TypedNum;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a finite number")
            }
            fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<TypedNum, E> {
                Ok(TypedNum(Num::Int(i)))
            }
            fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<TypedNum, E> {
                Ok(TypedNum(
                    i64::try_from(u).map_or(Num::Float(u as f64), Num::Int),
                ))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<TypedNum, E> {
                Num::Float(f)
                    .finite()
                    .map(TypedNum)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Float(f), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// `subtract`'s params for a typed handler: `[minuend, subtrahend]` or
/// `{"minuend": .., "subtrahend": ..}` (nothing else), as the demo reads them.
struct SubtractArgs(Num, Num);

impl<'de> Deserialize<'de> for SubtractArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SubtractArgs;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("[minuend, subtrahend] or {\"minuend\", \"subtrahend\"}")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<SubtractArgs, A::Error> {
                let bad = || serde::de::Error::invalid_length(2, &self);
                let a: TypedNum = seq.next_element()?.ok_or_else(bad)?;
                let b: TypedNum = seq.next_element()?.ok_or_else(bad)?;
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(bad());
                }
                Ok(SubtractArgs(a.0, b.0))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SubtractArgs, A::Error> {
                let n = Named::<TypedNum>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                Ok(SubtractArgs(n.minuend.0, n.subtrahend.0))
            }
        }
        d.deserialize_any(V)
    }
}

/// `sum`'s params for a typed handler: an array of numbers, summed as it is read.
struct SumArgs(Num);

impl<'de> Deserialize<'de> for SumArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SumArgs;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of finite numbers")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<SumArgs, A::Error> {
                let mut acc = Num::Int(0);
                while let Some(TypedNum(n)) = seq.next_element()? {
                    acc = acc
                        .add(n)
                        .ok_or_else(|| serde::de::Error::custom("the sum is not finite"))?;
                }
                Ok(SumArgs(acc))
            }
        }
        d.deserialize_seq(V)
    }
}

impl switchboard::BorrowedParams for ToolCall<'static> {
    type Of<'de> = ToolCall<'de>;
}

/// `tools/call`'s answer: [`ToolResult`] of the name (borrowed from the params
/// unless it had escapes) and the count.
struct ToolAnswer<'a>(Cow<'a, str>, usize);

impl switchboard::BorrowedResult for ToolAnswer<'static> {
    type Of<'de> = ToolAnswer<'de>;
}

impl Serialize for ToolAnswer<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ToolResult::new(&self.0, self.1).serialize(s)
    }
}

fn typed_invalid() -> RpcError {
    RpcError::new(INVALID_PARAMS, "Invalid params")
}

/// The benches' router with typed handlers: the same methods as [`router`],
/// their params read by serde (`typed`, or `typed_ref` where they borrow,
/// `typed_borrowed` where the result borrows too).
pub fn typed_router() -> Arc<Router> {
    let mut b = Router::builder()
        .typed("subtract", |SubtractArgs(a, b)| {
            a.sub(b).ok_or_else(typed_invalid)
        })
        .typed("sum", |SumArgs(n)| Ok(n))
        .typed("get_data", |_: IgnoredAny| Ok(GET_DATA))
        .typed_ref::<(&str, &str), _, _>("eth_getBalance", |(a, b)| {
            if is_hex_address(a) && is_block(b) {
                Ok(BALANCE)
            } else {
                Err(typed_invalid())
            }
        })
        // The answer borrows the tool's name from the params.
        .typed_borrowed::<ToolCall, ToolAnswer, _>("tools/call", |c| {
            Ok(ToolAnswer(c.name, c.arguments.0))
        });
    for name in NOTIFICATIONS {
        b = b.notification(name, |_| notified());
    }
    b.build().expect("the bench registrations are valid")
}

/// switchboard with typed handlers ([`typed_router`]): `Session::handle`, one
/// reused session.
#[derive(Debug)]
pub struct SwitchboardTyped {
    session: Session,
}

impl Server for SwitchboardTyped {
    const NAME: &'static str = "switchboard_typed";

    fn new() -> Self {
        SwitchboardTyped {
            session: Session::new(typed_router()),
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

/// A success response; the id is echoed raw (`RawValue`, or sonic-rs's `LazyValue`).
#[derive(Serialize)]
struct Success<'a, R, I: ?Sized = RawValue> {
    jsonrpc: &'static str,
    result: R,
    id: &'a I,
}

#[derive(Serialize)]
struct ErrorObj {
    code: i32,
    message: &'static str,
}

/// An error response; the id echoed raw as in [`Success`], `null` when unknown.
#[derive(Serialize)]
struct Failure<'a, I: ?Sized = RawValue> {
    jsonrpc: &'static str,
    error: ErrorObj,
    id: Option<&'a I>,
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
        if NOTIFICATIONS.contains(&req.method.as_ref()) {
            notified();
        }
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
        "tools/call" => match tools_call_raw(params) {
            Some((name, n)) => write_ok(out, ToolResult::new(&name, n), id),
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
// The peers that need the `peers` feature.

#[cfg(feature = "peers")]
mod peers {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use jsonrpc_core::{IoHandler, Value};
    use jsonrpsee::{
        BatchResponseBuilder, Extensions, MethodCallback, MethodResponse, RpcModule, prepare_error,
    };
    use jsonrpsee_types::{
        ErrorCode, ErrorObject, ErrorObjectOwned, Id, InvalidRequest, Notification, Params, Request,
    };
    use sonic_rs::LazyValue;

    use super::*;

    /// Drives a future that completes at once (a synchronous method's call).
    fn now<F: Future>(f: F) -> F::Output {
        let mut f = pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("a synchronous call did not complete at once"),
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
        m.register_method("tools/call", |p: Params<'_>, _, _| {
            let (name, n) = tools_call_raw(p.as_str().unwrap_or("")).ok_or_else(invalid_params)?;
            serde_json::to_value(ToolResult::new(&name, n)).map_err(|_| invalid_params())
        })
        .expect("fresh name");
        // Notifications: jsonrpsee has no separate kind; the server drops their answers.
        for name in NOTIFICATIONS {
            m.register_method(name, |_, _, _| notified())
                .expect("fresh name");
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

    /// Whether `s` is a notification as jsonrpsee reads one (its server then sends nothing
    /// and runs nothing).
    fn is_notification(s: &str) -> bool {
        serde_json::from_str::<Notification<'_, Option<&RawValue>>>(s).is_ok()
    }

    /// The error jsonrpsee's server answers a message that is neither a request nor a
    /// notification with.
    fn error_answer(input: &[u8]) -> Box<RawValue> {
        let (id, code) = prepare_error(input);
        MethodResponse::error(id, ErrorObject::from(code)).into_json()
    }

    /// The error jsonrpsee's server answers a batch element that is neither with.
    fn element_error(s: &str) -> MethodResponse {
        let id = serde_json::from_str::<InvalidRequest<'_>>(s).map_or(Id::Null, |r| r.id);
        MethodResponse::error(id, ErrorObject::from(ErrorCode::InvalidRequest))
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
            let Ok(s) = std::str::from_utf8(input) else {
                self.out = Box::<str>::from(error_answer(input)).into();
                return Some(self.out.as_bytes());
            };
            if first_byte(s) == Some(b'[') {
                // As jsonrpsee's server splits a batch: raw elements, one call each.
                let Ok(elems) = serde_json::from_str::<Vec<&RawValue>>(s) else {
                    self.out = Box::<str>::from(error_answer(input)).into();
                    return Some(self.out.as_bytes());
                };
                let mut out = String::with_capacity(2048);
                out.push('[');
                for e in elems {
                    if let Some(resp) = self.call(e.get()) {
                        out.push_str(resp.get());
                    } else if is_notification(e.get()) {
                        continue;
                    } else {
                        out.push_str(element_error(e.get()).into_json().get());
                    }
                    out.push(',');
                }
                if out.len() == 1 {
                    return None;
                }
                out.pop();
                out.push(']');
                self.out = out;
            } else if let Some(resp) = self.call(s) {
                self.out = Box::<str>::from(resp).into();
            } else if is_notification(s) {
                return None;
            } else {
                self.out = Box::<str>::from(error_answer(input)).into();
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
                let Ok(elems) = serde_json::from_slice::<Vec<&RawValue>>(input) else {
                    self.out = Some(error_answer(input));
                    return self.out.as_deref().map(|r| r.get().as_bytes());
                };
                let mut batch = BatchResponseBuilder::new_with_limit(usize::MAX);
                let mut any = false;
                for e in elems {
                    let resp = match serde_json::from_str::<Request<'_>>(e.get()) {
                        Ok(req) => self.call(req),
                        Err(_) if is_notification(e.get()) => continue,
                        Err(_) => element_error(e.get()),
                    };
                    batch.append(resp).ok()?;
                    any = true;
                }
                if !any {
                    return None;
                }
                MethodResponse::from_batch(batch.finish())
            } else {
                match serde_json::from_slice::<Request<'_>>(input) {
                    Ok(req) => self.call(req),
                    Err(_) => {
                        let s = std::str::from_utf8(input).unwrap_or("");
                        if is_notification(s) {
                            return None;
                        }
                        self.out = Some(error_answer(input));
                        return self.out.as_deref().map(|r| r.get().as_bytes());
                    }
                }
            };
            self.out = Some(resp.into_json());
            self.out.as_deref().map(|r| r.get().as_bytes())
        }
    }

    // ---------------------------------------------------------------------------
    // sonic-rs

    /// Params read with sonic-rs.
    struct SonicParams;

    impl ParamsJson for SonicParams {
        type Number = sonic_rs::Number;

        #[inline]
        fn num(n: &sonic_rs::Number) -> Option<Num> {
            use sonic_rs::JsonNumberTrait;
            n.as_i64()
                .map(Num::Int)
                .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(Num::Float))
        }

        #[inline]
        fn parse<'a, T: Deserialize<'a>>(s: &'a str) -> Option<T> {
            sonic_rs::from_str(s).ok()
        }
    }

    /// A request as the sonic-rs server reads it: [`ServerRequest`] with sonic-rs's
    /// `LazyValue` (raw JSON text borrowed from the input, copied only when it has
    /// escapes) for params and id. `id: null` is `Some` (the text `null`); only a
    /// missing id makes a notification.
    #[derive(Deserialize)]
    struct SonicRequest<'a> {
        jsonrpc: &'a str,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow, default)]
        params: Option<LazyValue<'a>>,
        #[serde(borrow, default, deserialize_with = "sonic_present")]
        id: Option<LazyValue<'a>>,
    }

    fn sonic_present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LazyValue<'de>>, D::Error> {
        LazyValue::deserialize(d).map(Some)
    }

    /// Writes one error response with sonic-rs's serializer.
    fn sonic_error(
        out: &mut Vec<u8>,
        code: i32,
        message: &'static str,
        id: Option<&LazyValue<'_>>,
    ) {
        let f = Failure {
            jsonrpc: "2.0",
            error: ErrorObj { code, message },
            id,
        };
        sonic_rs::to_writer(out, &f).expect("writing into a Vec cannot fail");
    }

    fn sonic_ok<R: Serialize>(out: &mut Vec<u8>, result: R, id: &LazyValue<'_>) {
        let s = Success {
            jsonrpc: "2.0",
            result,
            id,
        };
        sonic_rs::to_writer(out, &s).expect("writing into a Vec cannot fail");
    }

    /// [`serve_one`] on sonic-rs: one parsed request, its response appended; whether
    /// it wrote one.
    fn sonic_serve_one(out: &mut Vec<u8>, req: &SonicRequest<'_>) -> bool {
        if req.jsonrpc != "2.0" {
            sonic_error(out, -32600, "Invalid Request", req.id.as_ref());
            return true;
        }
        let params = req.params.as_ref().map_or("", LazyValue::as_raw_str);
        let Some(id) = &req.id else {
            // Notifications: run, never answered.
            if NOTIFICATIONS.contains(&req.method.as_ref()) {
                notified();
            }
            return false;
        };
        let invalid = |out: &mut Vec<u8>| {
            sonic_error(out, INVALID_PARAMS, "Invalid params", Some(id));
        };
        match req.method.as_ref() {
            "subtract" => match subtract_in::<SonicParams>(params) {
                Some(n) => sonic_ok(out, n, id),
                None => invalid(out),
            },
            "sum" => match sum_in::<SonicParams>(params) {
                Some(n) => sonic_ok(out, n, id),
                None => invalid(out),
            },
            "get_data" => sonic_ok(out, GET_DATA, id),
            "eth_getBalance" => match eth_get_balance_in::<SonicParams>(params) {
                Some(b) => sonic_ok(out, b, id),
                None => invalid(out),
            },
            "tools/call" => match tools_call_in::<SonicParams>(params) {
                Some((name, n)) => sonic_ok(out, ToolResult::new(&name, n), id),
                None => invalid(out),
            },
            _ => sonic_error(out, -32601, "Method not found", Some(id)),
        }
        true
    }

    /// The hand-written server of [`SerdeServer`] on sonic-rs instead of serde_json:
    /// `sonic_rs::from_slice` into a struct with `LazyValue` params and id, `match` on
    /// the method, the params read with `sonic_rs::from_str`, the response written with
    /// `sonic_rs::to_writer` into a reused `Vec`; batches as [`SerdeServer`] takes them
    /// (the whole batch as `Vec<request>` first, else element by element).
    ///
    /// sonic-rs picks its kernels at compile time: AVX2 and PCLMULQDQ only in a build
    /// for a CPU that has them (`-C target-cpu=native`), else SSE2 and portable code
    /// ([`sonic_rs_backend`]).
    pub struct SonicRs {
        out: Vec<u8>,
    }

    impl SonicRs {
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
            if let Ok(reqs) = sonic_rs::from_slice::<Vec<SonicRequest<'_>>>(input) {
                for r in &reqs {
                    one(out, &mut |out| sonic_serve_one(out, r));
                }
            } else if let Ok(elems) = sonic_rs::from_slice::<Vec<LazyValue<'_>>>(input) {
                for e in &elems {
                    one(
                        out,
                        &mut |out| match sonic_rs::from_str::<SonicRequest<'_>>(e.as_raw_str()) {
                            Ok(req) => sonic_serve_one(out, &req),
                            Err(_) => {
                                sonic_error(out, -32600, "Invalid Request", None);
                                true
                            }
                        },
                    );
                }
            } else {
                out.clear();
                sonic_error(out, -32700, "Parse error", None);
                return;
            }
            if out.len() == 1 {
                // `[]`, or only notifications.
                out.clear();
                if input.iter().filter(|b| !b.is_ascii_whitespace()).count() == 2 {
                    sonic_error(out, -32600, "Invalid Request", None);
                }
                return;
            }
            out.push(b']');
        }
    }

    impl Server for SonicRs {
        const NAME: &'static str = "sonic_rs";

        fn new() -> Self {
            SonicRs {
                out: Vec::with_capacity(256),
            }
        }

        #[inline]
        fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
            self.out.clear();
            if input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
                self.batch(input);
            } else {
                match sonic_rs::from_slice::<SonicRequest<'_>>(input) {
                    Ok(req) => {
                        sonic_serve_one(&mut self.out, &req);
                    }
                    Err(_) => {
                        let valid = sonic_rs::from_slice::<IgnoredAny>(input).is_ok();
                        let (code, message) = if valid {
                            (-32600, "Invalid Request")
                        } else {
                            (-32700, "Parse error")
                        };
                        sonic_error(&mut self.out, code, message, None);
                    }
                }
            }
            (!self.out.is_empty()).then_some(self.out.as_slice())
        }
    }

    /// The kernels sonic-rs was compiled with (it has no run-time dispatch), for
    /// reports.
    pub fn sonic_rs_backend() -> &'static str {
        if cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "pclmulqdq"
        )) {
            "avx2"
        } else if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
            "neon"
        } else if cfg!(target_feature = "sse2") {
            // Its 256-bit and carry-less-multiply code then runs portable fallbacks,
            // whatever the CPU has.
            "sse2"
        } else {
            "portable"
        }
    }

    // ---------------------------------------------------------------------------
    // jsonrpc-core

    fn core_params(p: &jsonrpc_core::Params) -> Option<(Num, Num)> {
        use jsonrpc_core::Params as P;
        let num = |v: &Value| v.as_number().and_then(Num::of);
        match p {
            P::Array(a) if a.len() == 2 => Some((num(&a[0])?, num(&a[1])?)),
            P::Map(m) if m.len() == 2 => {
                Some((num(m.get("minuend")?)?, num(m.get("subtrahend")?)?))
            }
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
        io.add_sync_method("tools/call", |p: jsonrpc_core::Params| {
            let jsonrpc_core::Params::Map(m) = p else {
                return Err(core_invalid());
            };
            let name = m.get("name").and_then(Value::as_str);
            let args = m.get("arguments").and_then(Value::as_object);
            let (Some(name), Some(args)) = (name, args) else {
                return Err(core_invalid());
            };
            serde_json::to_value(ToolResult::new(name, args.len())).map_err(|_| core_invalid())
        });
        for name in NOTIFICATIONS {
            io.add_notification(name, |_| notified());
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
}

/// Runs `f` with a fresh server of the stack called `name` (a dispatch stack).
pub fn with_server<R>(name: &str, f: impl FnOnce(&mut dyn DynServer) -> R) -> Option<R> {
    Some(match name {
        Switchboard::NAME => f(&mut Switchboard::new()),
        SerdeServer::NAME => f(&mut SerdeServer::new()),
        #[cfg(feature = "peers")]
        SonicRs::NAME => f(&mut SonicRs::new()),
        #[cfg(feature = "peers")]
        Jsonrpsee::NAME => f(&mut Jsonrpsee::new()),
        #[cfg(feature = "peers")]
        JsonrpseeCallback::NAME => f(&mut JsonrpseeCallback::new()),
        #[cfg(feature = "peers")]
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

#[cfg(all(test, feature = "peers"))]
mod tests {
    use super::*;

    /// Every stack answers every workload exactly as switchboard does.
    #[test]
    fn every_stack_answers_like_switchboard() {
        for w in rpc_workloads() {
            for name in SERVER_NAMES {
                let got = check_by_name(name, &w).unwrap();
                assert!(got.is_ok(), "{name} on {}: {}", w.name, got.unwrap_err());
            }
        }
    }

    /// The typed handlers (`switchboard_typed`) answer every workload, every
    /// corpus file and the invalid params of each method as the raw ones do.
    #[test]
    fn typed_handlers_answer_like_the_raw_ones() {
        let mut all = rpc_workloads();
        all.extend(
            corpus::file_names()
                .iter()
                .map(|f| rpc_workload(f).unwrap()),
        );
        let call = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params},"id":7}}"#)
        };
        for (method, params) in [
            ("subtract", "[1]"),
            ("subtract", "[1,2,3]"),
            ("subtract", r#"[1,"x"]"#),
            ("subtract", r#"{"minuend":1}"#),
            ("subtract", r#"{"minuend":1,"subtrahend":2,"x":3}"#),
            ("subtract", r#"{"minuend":1.5,"subtrahend":2}"#),
            ("subtract", "[9223372036854775807,-1]"),
            ("sum", "[1,2.5,-3]"),
            ("sum", r#"[1,"2"]"#),
            ("sum", r#"{"a":1}"#),
            ("eth_getBalance", r#"["0x1","latest"]"#),
            (
                "eth_getBalance",
                r#"["0x0000000000000000000000000000000000000000","nope"]"#,
            ),
            ("tools/call", r#"{"arguments":{}}"#),
            ("tools/call", r#"{"name":"t\u00e9","arguments":{"a":1}}"#),
            ("tools/call", r#"{"name":"t","arguments":[]}"#),
            ("get_data", "[]"),
        ] {
            all.push(rpc_workload_of(
                "typed_case",
                call(method, params).into_bytes(),
            ));
        }
        for w in &all {
            let got = check(&mut SwitchboardTyped::new(), w);
            assert!(
                got.is_ok(),
                "{}: {}",
                String::from_utf8_lossy(&w.bytes),
                got.unwrap_err()
            );
        }
    }

    #[test]
    fn the_typed_check_agrees() {
        let w = rpc_workload("rpc_batch10_subtract").unwrap();
        check(&mut Switchboard::new(), &w).unwrap();
        check(&mut SerdeServer::new(), &w).unwrap();
        check(&mut SonicRs::new(), &w).unwrap();
        check(&mut Jsonrpsee::new(), &w).unwrap();
        check(&mut JsonrpseeCallback::new(), &w).unwrap();
        check(&mut JsonrpcCore::new(), &w).unwrap();
    }

    /// The expected answers themselves (so switchboard cannot drift unnoticed).
    #[test]
    fn switchboard_answers_are_the_specs() {
        let get = |n: &str| rpc_workload(n).unwrap().expected.unwrap();
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

    /// switchboard's answer to every committed corpus file, pinned (error objects by
    /// code): the reference every other stack is checked against.
    #[test]
    fn switchboard_answers_the_corpus_as_the_spec_says() {
        let tool = |name: &str, n: usize| {
            format!(
                r#"{{"content":[{{"type":"text","text":"{name}"}}],"structuredContent":{{"arguments":{n}}},"isError":false}}"#
            )
        };
        let ok =
            |result: &str, id: &str| format!(r#"{{"jsonrpc":"2.0","result":{result},"id":{id}}}"#);
        let balance = format!("\"{BALANCE}\"");
        let batch = |n: usize, f: &dyn Fn(usize) -> String| {
            let v: Vec<String> = (1..=n).map(f).collect();
            format!("[{}]", v.join(","))
        };
        let pinned: [(&str, Option<String>); 12] = [
            ("subtract_positional", Some(ok("19", "1"))),
            ("subtract_named", Some(ok("19", "3"))),
            ("notification", None),
            ("eth_getBalance", Some(ok(&balance, "1"))),
            ("mcp_tools_call", Some(ok(&tool("get_forecast", 5), "\"call-42\""))),
            (
                "batch10_eth_getBalance",
                Some(batch(10, &|i| ok(&balance, &i.to_string()))),
            ),
            (
                "batch100_eth_getBalance",
                Some(batch(100, &|i| ok(&balance, &i.to_string()))),
            ),
            (
                "batch10_subtract",
                Some(batch(10, &|i| ok(&(19 + i).to_string(), &i.to_string()))),
            ),
            ("params_4k", Some(ok(&tool("index_logs", 10), "4"))),
            ("params_64k", Some(ok(&tool("write_file", 3), "64"))),
            (
                "parse_error",
                Some(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#.to_owned()),
            ),
            (
                "invalid_request",
                Some(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}"#.to_owned()),
            ),
        ];
        assert_eq!(pinned.len(), corpus::ENTRIES.len());
        for ((stem, want), e) in pinned.iter().zip(&corpus::ENTRIES) {
            assert_eq!(*stem, e.stem);
            let w = rpc_workload_of(e.stem, (e.make)());
            match (&w.expected, want) {
                (None, None) => {}
                (Some(got), Some(want)) => assert!(
                    same_answer(got, want.as_bytes()),
                    "{stem}: {} vs {want}",
                    String::from_utf8_lossy(got)
                ),
                (got, want) => panic!("{stem}: {got:?} vs {want:?}"),
            }
        }
    }

    /// The stacks whose answer to a corpus message is not switchboard's, and why:
    /// the harnesses show them as n/a. Anything else must answer alike.
    const KNOWN_DIFFERENT: [(&str, &str, &str); 2] = [
        ("jsonrpsee", "invalid_request.json", "-32700"),
        ("jsonrpsee_callback", "invalid_request.json", "-32700"),
    ];

    #[test]
    fn every_stack_answers_the_corpus_like_switchboard() {
        for file in corpus::file_names() {
            let w = rpc_workload(&file).unwrap();
            for name in SERVER_NAMES {
                let got = check_by_name(name, &w).unwrap();
                match KNOWN_DIFFERENT.iter().find(|k| k.0 == name && k.1 == file) {
                    None => assert!(got.is_ok(), "{name} on {file}: {}", got.unwrap_err()),
                    Some((_, _, why)) => {
                        let e = got.expect_err("a known difference went away: update the list");
                        assert!(e.contains(why), "{name} on {file}: {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn answers_compare_error_codes_not_messages() {
        let a = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"x":1}},"id":null}"#;
        let b =
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}"#;
        let c =
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Invalid Request"},"id":null}"#;
        let d = br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":1}"#;
        assert!(same_answer(a, b));
        assert!(!same_answer(a, c));
        assert!(!same_answer(a, d));
        assert!(same_answer(
            &[b"[", &a[..], b"]"].concat(),
            &[b"[", &b[..], b"]"].concat()
        ));
        assert!(!same_answer(br#"{"result":1}"#, br#"{"result":2}"#));
    }

    /// The other demo methods and shapes agree too, beyond the benchmarked ones.
    #[test]
    fn more_methods_agree() {
        let cases: [&[u8]; 10] = [
            br#"{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}"#,
            br#"{"jsonrpc":"2.0","method":"subtract","params":[1.5,0.25],"id":"a"}"#,
            br#"{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":2}"#,
            br#"{"jsonrpc":"2.0","method":"get_data","id":9}"#,
            br#"{"jsonrpc":"2.0","method":"subtract","params":[-9223372036854775808,1],"id":4}"#,
            br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"get_data","id":2}]"#,
            br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","0x10"],"id":null}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a\u00e9b","arguments":{}},"id":1}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":[]},"id":1}"#,
            br#"[{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}]"#,
        ];
        for input in cases {
            let expected = Switchboard::new().handle(input).unwrap().to_vec();
            for name in SERVER_NAMES {
                let got = with_server(name, |s| s.handle_dyn(input).map(<[u8]>::to_vec))
                    .unwrap()
                    .unwrap_or_else(|| panic!("{name}: no answer"));
                assert!(
                    same_answer(&got, &expected),
                    "{name} on {}: {} vs {}",
                    String::from_utf8_lossy(input),
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected)
                );
            }
        }
    }
}
