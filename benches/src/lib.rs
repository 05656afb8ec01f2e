//! Workloads and per-stack runners shared by the criterion benches
//! (`benches/*.rs`), the instruction-count harness (`src/bin/count.rs`, driven by
//! `callgrind.sh`) and the allocation counter (`src/bin/allocs.rs`), so that all of
//! them measure exactly the same code.
//!
//! - This module (issue 2, `benches/classify.rs`): every stack does the same job for
//!   a single message: validate the whole JSON text, check `"jsonrpc":"2.0"`,
//!   require an `id` (a Request), and hand out the method name as a `&str` borrowed
//!   from the input (or decoded when escaped). For a batch it does that for every
//!   element. For validation it only answers "is this exactly one valid JSON text".
//! - [`dispatch`] (issue 3, `benches/dispatch.rs`): request bytes to response bytes
//!   with the demo methods, switchboard against jsonrpsee, jsonrpc-core and a
//!   hand-written server on serde_json and on sonic-rs, every stack's answers checked
//!   against switchboard's.
//! - [`lookup`] (issue 3, `benches/lookup.rs`): a method name to its index, the
//!   router's perfect hash against `HashMap`s, `phf` and a `match`.
//! - [`corpus`] (issue 6): the committed messages of `benches/corpus/`, run by both
//!   families above (`eth_getBalance.json` request to response, `parse:eth_getBalance.json`
//!   classification), every stack's answer checked against switchboard's first.
//!
//! The `peers` feature (default) builds the other stacks (simd-json, sonic-rs, jsonrpsee,
//! jsonrpc-core); without it only switchboard's
//! and serde_json's rows exist, which is all `benches/guard.sh` needs (a quick build
//! with no dependency that switchboard itself does not have).
//!
//! ```text
//! export CARGO_TARGET_DIR=/work/target-benches
//! cargo bench -p switchboard-benches --bench dispatch -- --warm-up-time 1 --measurement-time 3
//! cargo bench -p switchboard-benches --bench lookup -- --warm-up-time 1 --measurement-time 3
//! cargo run --release -p switchboard-benches --bin count -- race rpc_eth_getBalance lookup_1000
//! cargo run --release -p switchboard-benches --bin allocs
//! WORKLOADS="rpc_eth_getBalance rpc_subtract lookup_1000" benches/callgrind.sh
//! cargo run --release -p switchboard-benches --bin count -- check     # the corpus, every stack
//! cargo run --release -p switchboard-benches --bin count -- race corpus parse:corpus
//! cargo run --release -p switchboard-benches --bin count -- race parse:realworld
//! bash benches/report.sh       # everything, into benches/results/REPORT.md
//! bash benches/guard.sh        # switchboard's instruction counts vs the baseline
//! benches/load.sh            # issue 7: over HTTP against jsonrpsee's server
//! benches/load.sh profile    #   (src/bin/jsonrpsee_server.rs), from wrk
//! ```

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
#[cfg(feature = "peers")]
use simd_json::prelude::*;
#[cfg(feature = "peers")]
use simd_json::{Buffers, Tape};
use switchboard::{Code, Item, Message, Parser};

pub mod corpus;
/// The demo methods of `switchboard-server` (`server/src/demo.rs`), compiled into this
/// crate so that the benches run exactly the server's methods without building its
/// transports (tokio, hyper): `guard.sh`'s build stays quick.
#[path = "../../server/src/demo.rs"]
pub mod demo;
pub mod dispatch;
#[cfg(feature = "peers")]
pub mod lookup;
pub mod names;
pub mod payloads;

/// What a workload's messages must produce; the benches assert it in the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// One Request whose method is this name.
    Call(&'static str),
    /// A batch of `len` Requests, all calling `method`.
    Batch {
        /// Number of elements.
        len: usize,
        /// The method every element calls.
        method: &'static str,
    },
    /// Any valid JSON text (validation only).
    Valid,
    /// One Notification whose method is this name.
    Notification(&'static str),
    /// Invalid JSON (answered -32700).
    ParseError,
    /// Valid JSON that is not a request, notification or batch (answered -32600).
    InvalidRequest,
}

impl Expect {
    /// What switchboard's parser makes of `input`, as the outcome every parser stack
    /// must agree on (names leaked: a harness does this once per workload). `Err`
    /// for what the parser stacks cannot be asked (a response, a mixed batch, an
    /// error other than -32700 and -32600).
    pub fn of(input: &[u8]) -> Result<Expect, String> {
        let leak = |s: &str| -> &'static str { Box::leak(s.into()) };
        let method = |m: switchboard::Method<'_>| {
            m.lookup_key()
                .map(leak)
                .ok_or_else(|| "a method name that is not valid UTF-8".to_owned())
        };
        Ok(match Parser::new().parse(input) {
            Message::Request(r) => Expect::Call(method(r.method())?),
            Message::Notification(n) => Expect::Notification(method(n.method())?),
            Message::Batch(b) => {
                let mut first = None;
                for item in b.iter() {
                    let Item::Request(r) = item else {
                        return Err("a batch with elements that are not requests".into());
                    };
                    let m = r.method().lookup_key().unwrap_or("");
                    match first {
                        None => first = Some(leak(m)),
                        Some(f) if f == m => {}
                        Some(_) => return Err("a batch calling more than one method".into()),
                    }
                }
                Expect::Batch {
                    len: b.len(),
                    method: first.unwrap_or(""),
                }
            }
            Message::Error(e) if e.code() == Code::ParseError => Expect::ParseError,
            Message::Error(e) if e.code() == Code::InvalidRequest => Expect::InvalidRequest,
            Message::Error(e) => return Err(format!("error {}", e.code().as_i32())),
            Message::Response(_) => return Err("a response".into()),
        })
    }
}

/// How a parser stack classifies one message that is not a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Single<'s> {
    /// A request (it has an `id`) calling this method.
    Request(Cow<'s, str>),
    /// A notification calling this method.
    Notification(Cow<'s, str>),
    /// Valid JSON, but not a request or notification.
    InvalidRequest,
    /// Not valid JSON.
    ParseError,
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Call(m) => write!(f, "a request calling {m}"),
            Expect::Notification(m) => write!(f, "a notification of {m}"),
            Expect::Batch { len, method } => {
                write!(f, "a batch of {len} requests calling {method}")
            }
            Expect::Valid => f.write_str("valid JSON"),
            Expect::ParseError => f.write_str("a parse error"),
            Expect::InvalidRequest => f.write_str("an invalid request"),
        }
    }
}

/// A named input and what it must produce.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Short name used on the command line and in bench ids.
    pub name: &'static str,
    /// The exact bytes.
    pub bytes: Vec<u8>,
    /// The expected outcome.
    pub expect: Expect,
}

/// The workload names, in report order.
pub const WORKLOAD_NAMES: [&str; 7] = [
    "eth_getBalance",
    "subtract_positional",
    "subtract_named",
    "batch10_eth_getBalance",
    "params_4k",
    "text_64k",
    "base64_64k",
];

/// All workloads, in report order.
pub fn workloads() -> Vec<Workload> {
    WORKLOAD_NAMES.iter().filter_map(|n| workload(n)).collect()
}

/// A classification workload on a corpus file (`parse:eth_getBalance.json`): its
/// bytes and switchboard's outcome as the expected one; `validate:FILE.json` is the
/// same bytes validated only ([`Expect::Valid`], when switchboard finds them valid
/// JSON). `Err` says why not.
pub fn corpus_workload(name: &str) -> Result<Workload, String> {
    if let Some(file) = name.strip_prefix(corpus::VALIDATE_PREFIX) {
        let bytes = corpus::load(file)?;
        if Parser::new().validate(&bytes).is_err() {
            return Err(format!("{name}: switchboard sees invalid JSON"));
        }
        return Ok(Workload {
            name: Box::leak(name.into()),
            bytes,
            expect: Expect::Valid,
        });
    }
    let file = name
        .strip_prefix(corpus::PARSE_PREFIX)
        .ok_or_else(|| format!("{name}: not parse:FILE.json or validate:FILE.json"))?;
    let bytes = corpus::load(file)?;
    let expect = Expect::of(&bytes).map_err(|e| format!("{name}: switchboard sees {e}"))?;
    Ok(Workload {
        name: Box::leak(name.into()),
        bytes,
        expect,
    })
}

/// The workload called `name`, if any (only that one's bytes are generated); a
/// corpus name (`parse:FILE.json`) reads the file; `parse_params_<n>` is a
/// `tools/call` request with about `n` bytes of string-heavy params (the scaling
/// curves).
pub fn workload(name: &str) -> Option<Workload> {
    if corpus::is_classify_name(name) {
        return corpus_workload(name).ok();
    }
    if let Some(n) = name.strip_prefix("parse_params_") {
        // Scaling: a `tools/call` request whose params are about `n` bytes of text.
        let n: usize = n
            .parse()
            .ok()
            .filter(|n| (1..=(8 << 20) - 1024).contains(n))?;
        let bytes = payloads::request("tools/call", &payloads::text_params(n), "1");
        return Some(Workload {
            name: Box::leak(name.into()),
            bytes,
            expect: Expect::Call("tools/call"),
        });
    }
    let (name, bytes, expect) = match name {
        "eth_getBalance" => (
            "eth_getBalance",
            payloads::ETH_GET_BALANCE.to_vec(),
            Expect::Call("eth_getBalance"),
        ),
        "subtract_positional" => (
            "subtract_positional",
            payloads::SUBTRACT_POSITIONAL.to_vec(),
            Expect::Call("subtract"),
        ),
        "subtract_named" => (
            "subtract_named",
            payloads::SUBTRACT_NAMED.to_vec(),
            Expect::Call("subtract"),
        ),
        "batch10_eth_getBalance" => (
            "batch10_eth_getBalance",
            payloads::batch_of_eth_get_balance(10),
            Expect::Batch {
                len: 10,
                method: "eth_getBalance",
            },
        ),
        "params_4k" => ("params_4k", payloads::params_4k(), Expect::Valid),
        "text_64k" => ("text_64k", payloads::text_64k(), Expect::Valid),
        "base64_64k" => ("base64_64k", payloads::base64_64k(), Expect::Valid),
        _ => return None,
    };
    Some(Workload {
        name,
        bytes,
        expect,
    })
}

/// One JSON-RPC stack under test, with its reusable per-thread state.
pub trait Stack {
    /// Name used in bench ids and on the command line.
    const NAME: &'static str;

    /// Classifies one message; the method name if it is a valid Request.
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>>;

    /// Classifies a batch; the number of its elements that are valid Requests
    /// calling `method` (`0` if the whole message is not a valid batch).
    fn batch(&mut self, input: &[u8], method: &str) -> usize;

    /// Whether `input` is exactly one valid JSON text.
    fn validate(&mut self, input: &[u8]) -> bool;

    /// Classifies one message that is not a batch.
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s>;

    /// Runs the job `expect` names once and reports whether the outcome matched.
    #[inline]
    fn run(&mut self, input: &[u8], expect: Expect) -> bool {
        match expect {
            Expect::Call(m) => self.call(input).as_deref() == Some(m),
            Expect::Batch { len, method } => self.batch(input, method) == len,
            Expect::Valid => self.validate(input),
            Expect::Notification(m) => {
                matches!(self.single(input), Single::Notification(n) if n == m)
            }
            Expect::ParseError => self.single(input) == Single::ParseError,
            Expect::InvalidRequest => self.single(input) == Single::InvalidRequest,
        }
    }

    /// What this stack makes of `input`, for the reason of an `n/a`.
    fn describe(&mut self, input: &[u8], expect: Expect) -> String {
        match expect {
            Expect::Batch { method, .. } => {
                format!("{} elements call {method}", self.batch(input, method))
            }
            Expect::Valid => format!("valid: {}", self.validate(input)),
            _ => format!("{:?}", self.single(input)),
        }
    }
}

/// Checks stack `S` on `w` (twice: reused state must agree); the reason if wrong.
pub fn check_stack<S: Stack>(stack: &mut S, w: &Workload) -> Result<(), String> {
    for _ in 0..2 {
        if !stack.run(&w.bytes, w.expect) {
            return Err(format!(
                "sees {} where switchboard sees {}",
                stack.describe(&w.bytes, w.expect),
                w.expect
            ));
        }
    }
    Ok(())
}

/// What `count` and `guard` run under callgrind: a fresh `S`, checked on `w`
/// ([`check_stack`]; `Err` is the reason for `n/a`), then `n` messages
/// ([`run_stack`]); whether every outcome was right.
pub fn check_and_run_stack<S: Stack + Default>(w: &Workload, n: u64) -> Result<bool, String> {
    let mut stack = S::default();
    check_stack(&mut stack, w)?;
    Ok(run_stack(&mut stack, w, n))
}

/// Runs a checked stack `n` times on `w` (its state reused); `false` at the first
/// wrong outcome.
#[inline(never)]
pub fn run_stack<S: Stack>(stack: &mut S, w: &Workload, n: u64) -> bool {
    let input = w.bytes.as_slice();
    for _ in 0..n {
        if !stack.run(std::hint::black_box(input), std::hint::black_box(w.expect)) {
            return false;
        }
    }
    true
}

/// The names of the parser stacks that run corpus messages, in report order.
pub const PARSE_STACK_NAMES: [&str; 5] = [
    "switchboard",
    "serde_json",
    "sonic_rs",
    "simd_json_tape",
    "simd_json_serde",
];

/// [`check_stack`] for the parser stack called `name` (fresh state); `None` if
/// there is no such stack in this build.
pub fn check_stack_by_name(name: &str, w: &Workload) -> Option<Result<(), String>> {
    fn go<S: Stack + Default>(w: &Workload) -> Result<(), String> {
        check_stack(&mut S::default(), w)
    }
    Some(match name {
        "switchboard" => go::<Switchboard>(w),
        "serde_json" => go::<SerdeJson>(w),
        "serde_json_raw" => go::<SerdeJsonRaw>(w),
        #[cfg(feature = "peers")]
        "sonic_rs" => go::<SonicRs>(w),
        #[cfg(feature = "peers")]
        "simd_json_tape" => go::<SimdJsonTape>(w),
        #[cfg(feature = "peers")]
        "simd_json_serde" => go::<SimdJsonSerde>(w),
        _ => return None,
    })
}

/// switchboard: one reused [`Parser`]; `parse` then the method view.
#[derive(Debug, Default)]
pub struct Switchboard {
    parser: Parser,
}

impl Stack for Switchboard {
    const NAME: &'static str = "switchboard";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        match self.parser.parse(input) {
            Message::Request(r) => r.method().lookup_key().map(Cow::Borrowed),
            _ => None,
        }
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        match self.parser.parse(input) {
            Message::Batch(b) => b
                .iter()
                .filter(|item| matches!(item, Item::Request(r) if r.method() == method))
                .count(),
            _ => 0,
        }
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        self.parser.validate(input).is_ok()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        let name = |m: switchboard::Method<'s>| Cow::Borrowed(m.lookup_key().unwrap_or(""));
        match self.parser.parse(input) {
            Message::Request(r) => Single::Request(name(r.method())),
            Message::Notification(n) => Single::Notification(name(n.method())),
            Message::Error(e) if e.code() == Code::ParseError => Single::ParseError,
            _ => Single::InvalidRequest,
        }
    }
}

/// The struct a serde_json user would write: strings borrowed, params and id
/// kept as validated raw JSON.
#[derive(Debug, Deserialize)]
pub struct SerdeRequest<'a> {
    /// Must be `"2.0"`.
    pub jsonrpc: &'a str,
    /// Borrowed unless escaped.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// Raw params (validated, not parsed).
    #[serde(borrow)]
    pub params: Option<&'a serde_json::value::RawValue>,
    /// Raw id (`None` also for `null`).
    #[serde(borrow)]
    pub id: Option<&'a serde_json::value::RawValue>,
}

/// serde_json: `from_slice` into [`SerdeRequest`] (stateless; a batch is a `Vec`).
#[derive(Debug, Default)]
pub struct SerdeJson;

impl Stack for SerdeJson {
    const NAME: &'static str = "serde_json";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        let req: SerdeRequest<'s> = serde_json::from_slice(input).ok()?;
        (req.jsonrpc == "2.0" && req.id.is_some()).then_some(req.method)
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        match serde_json::from_slice::<Vec<SerdeRequest<'_>>>(input) {
            Ok(reqs) => reqs
                .iter()
                .filter(|r| r.jsonrpc == "2.0" && r.id.is_some() && r.method == method)
                .count(),
            Err(_) => 0,
        }
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        serde_json::from_slice::<IgnoredAny>(input).is_ok()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        serde_single(input)
    }
}

/// serde_json's classification: the request struct, else whether it is JSON at all
/// (what the hand-written server of [`dispatch`] does).
#[inline]
fn serde_single(input: &[u8]) -> Single<'_> {
    match serde_json::from_slice::<SerdeRequest<'_>>(input) {
        Ok(r) if r.jsonrpc == "2.0" && r.id.is_some() => Single::Request(r.method),
        Ok(r) if r.jsonrpc == "2.0" => Single::Notification(r.method),
        Ok(_) => Single::InvalidRequest,
        Err(_) if serde_json::from_slice::<IgnoredAny>(input).is_ok() => Single::InvalidRequest,
        Err(_) => Single::ParseError,
    }
}

/// serde_json validating into a `&RawValue` (what a serde_json user keeps params
/// as). Unlike [`SerdeJson`]'s `IgnoredAny`, which skips strings without checking
/// their UTF-8, this checks UTF-8 too (over the whole value, after the skip), as
/// switchboard does. Calls and batches are [`SerdeJson`]'s.
#[derive(Debug, Default)]
pub struct SerdeJsonRaw;

impl Stack for SerdeJsonRaw {
    const NAME: &'static str = "serde_json_raw";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        let req: SerdeRequest<'s> = serde_json::from_slice(input).ok()?;
        (req.jsonrpc == "2.0" && req.id.is_some()).then_some(req.method)
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        SerdeJson.batch(input, method)
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        serde_json::from_slice::<&serde_json::value::RawValue>(input).is_ok()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        serde_single(input)
    }
}

#[cfg(feature = "peers")]
/// simd-json's tape with every buffer reused (input copy, stage buffers, tape).
///
/// simd-json rewrites its input (it unescapes strings in place), so a caller that
/// must keep its bytes (to echo an id, to forward params) has to copy them first:
/// the copy into a reused `Vec` is part of this stack's real per-message cost and
/// is measured here.
#[derive(Default)]
pub struct SimdJsonTape {
    scratch: Vec<u8>,
    buffers: Buffers,
    /// Kept empty between messages (`Tape::reset`) so that its allocation is reused.
    tape: Option<Tape<'static>>,
}

#[cfg(feature = "peers")]
/// The method of a tape object that is a Request (`jsonrpc` `"2.0"`, `id` present).
#[inline]
fn tape_method<'i>(v: simd_json::tape::Value<'_, 'i>) -> Option<&'i str> {
    let obj = v.as_object()?;
    if obj.get("jsonrpc")?.as_str()? != "2.0" || obj.get("id").is_none() {
        return None;
    }
    obj.get("method")?.into_string()
}

#[cfg(feature = "peers")]
/// How the tape of one message classifies it.
#[cfg(feature = "peers")]
#[inline]
fn tape_single<'i>(v: simd_json::tape::Value<'_, 'i>) -> Single<'i> {
    let Some(obj) = v.as_object() else {
        return Single::InvalidRequest;
    };
    if obj.get("jsonrpc").and_then(|j| j.into_string()) != Some("2.0") {
        return Single::InvalidRequest;
    }
    let Some(m) = obj.get("method").and_then(|m| m.into_string()) else {
        return Single::InvalidRequest;
    };
    if obj.get("id").is_some() {
        Single::Request(Cow::Borrowed(m))
    } else {
        Single::Notification(Cow::Borrowed(m))
    }
}

/// Builds the tape of `buf` in place into the reused `slot` and applies `f`.
#[cfg(feature = "peers")]
#[inline]
fn with_tape_in<'s, R>(
    buf: &'s mut [u8],
    buffers: &mut Buffers,
    slot: &mut Option<Tape<'static>>,
    f: impl FnOnce(&Tape<'s>) -> R,
) -> Option<R> {
    let mut tape: Tape<'s> = slot.take().unwrap_or_else(Tape::null).reset();
    let out = simd_json::fill_tape(buf, buffers, &mut tape)
        .ok()
        .map(|()| f(&tape));
    *slot = Some(tape.reset());
    out
}

#[cfg(feature = "peers")]
impl SimdJsonTape {
    /// Copies `input` into the scratch buffer, builds the tape there and applies `f`.
    #[inline]
    fn with_tape<'s, R>(&'s mut self, input: &[u8], f: impl FnOnce(&Tape<'s>) -> R) -> Option<R> {
        self.scratch.clear();
        self.scratch.extend_from_slice(input);
        with_tape_in(&mut self.scratch, &mut self.buffers, &mut self.tape, f)
    }
}

#[cfg(feature = "peers")]
impl Stack for SimdJsonTape {
    const NAME: &'static str = "simd_json_tape";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        self.with_tape(input, |t| tape_method(t.as_value()))
            .flatten()
            .map(Cow::Borrowed)
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        self.with_tape(input, |t| {
            t.as_value().as_array().map_or(0, |a| {
                a.iter().filter(|&e| tape_method(e) == Some(method)).count()
            })
        })
        .unwrap_or(0)
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        self.with_tape(input, |_| ()).is_some()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        self.with_tape(input, |t| tape_single(t.as_value()))
            .unwrap_or(Single::ParseError)
    }
}

#[cfg(feature = "peers")]
/// The closest struct simd-json's serde support can fill: it has no raw-value
/// type, so params and id are skipped (validated, not kept), which is less work
/// than [`SerdeRequest`] does.
#[derive(Debug, Deserialize)]
pub struct SimdSerdeRequest<'a> {
    /// Must be `"2.0"`.
    pub jsonrpc: &'a str,
    /// Borrowed unless escaped.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// Skipped.
    pub params: Option<IgnoredAny>,
    /// Skipped (`None` also for `null`).
    pub id: Option<IgnoredAny>,
}

#[cfg(feature = "peers")]
/// simd-json's serde deserializer (`from_slice_with_buffers`) into
/// [`SimdSerdeRequest`], on a reused copy of the input (see [`SimdJsonTape`]).
#[derive(Default)]
pub struct SimdJsonSerde {
    scratch: Vec<u8>,
    buffers: Buffers,
    /// A second copy, to tell invalid JSON from an invalid request.
    again: Vec<u8>,
}

#[cfg(feature = "peers")]
impl Stack for SimdJsonSerde {
    const NAME: &'static str = "simd_json_serde";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        self.scratch.clear();
        self.scratch.extend_from_slice(input);
        let req: SimdSerdeRequest<'s> =
            simd_json::serde::from_slice_with_buffers(&mut self.scratch, &mut self.buffers).ok()?;
        (req.jsonrpc == "2.0" && req.id.is_some()).then_some(req.method)
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        self.scratch.clear();
        self.scratch.extend_from_slice(input);
        match simd_json::serde::from_slice_with_buffers::<Vec<SimdSerdeRequest<'_>>>(
            &mut self.scratch,
            &mut self.buffers,
        ) {
            Ok(reqs) => reqs
                .iter()
                .filter(|r| r.jsonrpc == "2.0" && r.id.is_some() && r.method == method)
                .count(),
            Err(_) => 0,
        }
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        self.scratch.clear();
        self.scratch.extend_from_slice(input);
        simd_json::serde::from_slice_with_buffers::<IgnoredAny>(
            &mut self.scratch,
            &mut self.buffers,
        )
        .is_ok()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        self.scratch.clear();
        self.scratch.extend_from_slice(input);
        match simd_json::serde::from_slice_with_buffers::<SimdSerdeRequest<'_>>(
            &mut self.scratch,
            &mut self.buffers,
        ) {
            Ok(r) if r.jsonrpc == "2.0" && r.id.is_some() => Single::Request(r.method),
            Ok(r) if r.jsonrpc == "2.0" => Single::Notification(r.method),
            Ok(_) => Single::InvalidRequest,
            Err(_) => {
                self.again.clear();
                self.again.extend_from_slice(input);
                let valid = simd_json::serde::from_slice_with_buffers::<IgnoredAny>(
                    &mut self.again,
                    &mut self.buffers,
                )
                .is_ok();
                if valid {
                    Single::InvalidRequest
                } else {
                    Single::ParseError
                }
            }
        }
    }
}

#[cfg(feature = "peers")]
/// The struct a sonic-rs user would write: [`SerdeRequest`] with sonic-rs's
/// `LazyValue` (raw JSON text, borrowed unless it has escapes) for params and id.
#[derive(Debug, Deserialize)]
pub struct SonicRequest<'a> {
    /// Must be `"2.0"`.
    pub jsonrpc: &'a str,
    /// Borrowed unless escaped.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// Raw params (validated, not parsed).
    #[serde(borrow)]
    pub params: Option<sonic_rs::LazyValue<'a>>,
    /// Raw id (`None` also for `null`).
    #[serde(borrow)]
    pub id: Option<sonic_rs::LazyValue<'a>>,
}

#[cfg(feature = "peers")]
/// sonic-rs: `sonic_rs::from_slice` into [`SonicRequest`] (stateless, the input not
/// copied; a batch is a `Vec`); validation into `IgnoredAny`, which sonic-rs checks
/// fully (UTF-8 included). Its kernels are chosen at compile time
/// ([`dispatch::sonic_rs_backend`]).
#[derive(Debug, Default)]
pub struct SonicRs;

#[cfg(feature = "peers")]
impl Stack for SonicRs {
    const NAME: &'static str = "sonic_rs";

    #[inline]
    fn call<'s>(&'s mut self, input: &'s [u8]) -> Option<Cow<'s, str>> {
        let req: SonicRequest<'s> = sonic_rs::from_slice(input).ok()?;
        (req.jsonrpc == "2.0" && req.id.is_some()).then_some(req.method)
    }

    #[inline]
    fn batch(&mut self, input: &[u8], method: &str) -> usize {
        match sonic_rs::from_slice::<Vec<SonicRequest<'_>>>(input) {
            Ok(reqs) => reqs
                .iter()
                .filter(|r| r.jsonrpc == "2.0" && r.id.is_some() && r.method == method)
                .count(),
            Err(_) => 0,
        }
    }

    #[inline]
    fn validate(&mut self, input: &[u8]) -> bool {
        sonic_rs::from_slice::<IgnoredAny>(input).is_ok()
    }

    #[inline]
    fn single<'s>(&'s mut self, input: &'s [u8]) -> Single<'s> {
        match sonic_rs::from_slice::<SonicRequest<'_>>(input) {
            Ok(r) if r.jsonrpc == "2.0" && r.id.is_some() => Single::Request(r.method),
            Ok(r) if r.jsonrpc == "2.0" => Single::Notification(r.method),
            Ok(_) => Single::InvalidRequest,
            Err(_) if sonic_rs::from_slice::<IgnoredAny>(input).is_ok() => Single::InvalidRequest,
            Err(_) => Single::ParseError,
        }
    }
}

#[cfg(feature = "peers")]
/// simd-json's choice of kernel on this CPU, for reports.
pub fn simd_json_backend() -> String {
    simd_json::Deserializer::algorithm().to_string()
}

#[cfg(all(test, feature = "peers"))]
mod tests {
    use super::*;

    fn check<S: Stack + Default>() {
        let mut s = S::default();
        for w in workloads() {
            assert!(s.run(&w.bytes, w.expect), "{} on {}", S::NAME, w.name);
            // Twice: the reused state must give the same answer.
            assert!(
                s.run(&w.bytes, w.expect),
                "{} on {} (reused)",
                S::NAME,
                w.name
            );
        }
        assert!(!s.run(
            br#"{"jsonrpc":"2.0","method":"x","id":1"#,
            Expect::Call("x")
        ));
        assert!(!s.run(b"[1,]", Expect::Valid));
    }

    #[test]
    fn every_stack_gets_every_workload_right() {
        check::<Switchboard>();
        check::<SerdeJson>();
        check::<SerdeJsonRaw>();
        check::<SonicRs>();
        check::<SimdJsonTape>();
        check::<SimdJsonSerde>();
    }

    /// Why the validation groups have two serde_json rows.
    #[test]
    fn serde_json_ignored_any_does_not_check_utf8_in_strings() {
        let bad = b"[\"\xff\"]";
        assert!(SerdeJson.validate(bad));
        assert!(!SerdeJsonRaw.validate(bad));
        assert!(!Switchboard::default().validate(bad));
        assert!(!SimdJsonTape::default().validate(bad));
        assert!(!SonicRs.validate(bad));
    }

    /// switchboard's outcome on every corpus file, pinned, and every parser stack
    /// agreeing with it.
    #[test]
    fn every_parser_stack_classifies_the_corpus_like_switchboard() {
        let pinned = [
            Expect::Call("subtract"),
            Expect::Call("subtract"),
            Expect::Notification("update"),
            Expect::Call("eth_getBalance"),
            Expect::Call("tools/call"),
            Expect::Batch {
                len: 10,
                method: "eth_getBalance",
            },
            Expect::Batch {
                len: 100,
                method: "eth_getBalance",
            },
            Expect::Batch {
                len: 10,
                method: "subtract",
            },
            Expect::Call("tools/call"),
            Expect::Call("tools/call"),
            Expect::ParseError,
            Expect::InvalidRequest,
            // corpus::SHAPES
            Expect::Call("tools/call"),
            Expect::Call("tools/call"),
            Expect::Call("tools/call"),
        ];
        assert_eq!(pinned.len(), corpus::entries().count());
        for (want, e) in pinned.iter().zip(corpus::entries()) {
            let w = corpus_workload(&format!("parse:{}", e.file_name())).unwrap();
            assert_eq!(w.expect, *want, "{}", e.stem);
            for s in PARSE_STACK_NAMES {
                let r = check_stack_by_name(s, &w).unwrap();
                assert!(r.is_ok(), "{s} on {}: {}", w.name, r.unwrap_err());
            }
        }
    }

    /// The real-world documents (read from `../shared/data/realworld`: a missing
    /// folder fails, never skips): switchboard sees one `ingest` request, and every
    /// parser stack agrees.
    #[test]
    fn every_parser_stack_classifies_the_realworld_documents_like_switchboard() {
        for name in corpus::expand_group("parse:realworld").unwrap() {
            let w = corpus_workload(&name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(w.expect, Expect::Call("ingest"), "{name}");
            for s in PARSE_STACK_NAMES {
                let r = check_stack_by_name(s, &w).unwrap();
                assert!(r.is_ok(), "{s} on {name}: {}", r.unwrap_err());
            }
        }
        for name in corpus::expand_group("validate:realworld").unwrap() {
            let w = corpus_workload(&name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(w.expect, Expect::Valid, "{name}");
            for s in [
                "switchboard",
                "serde_json",
                "serde_json_raw",
                "sonic_rs",
                "simd_json_tape",
            ] {
                let r = check_stack_by_name(s, &w).unwrap();
                assert!(r.is_ok(), "{s} on {name}: {}", r.unwrap_err());
            }
        }
    }

    #[test]
    fn wrong_outcomes_are_reported() {
        let w = Workload {
            name: "x",
            bytes: payloads::PARSE_ERROR.to_vec(),
            expect: Expect::InvalidRequest,
        };
        let e = check_stack(&mut Switchboard::default(), &w).unwrap_err();
        assert!(e.contains("ParseError"), "{e}");
        assert!(corpus_workload("eth_getBalance.json").is_err());
        assert!(corpus_workload("parse:no_such_file.json").is_err());
        assert!(corpus_workload("validate:parse_error.json").is_err());
        assert_eq!(
            corpus_workload("validate:tokens_4k.json").unwrap().expect,
            Expect::Valid
        );
    }

    #[test]
    fn workload_sizes() {
        assert_eq!(payloads::ETH_GET_BALANCE.len(), 115);
        let ws = workloads();
        let size = |n: &str| ws.iter().find(|w| w.name == n).unwrap().bytes.len();
        assert!(
            (3800..=4400).contains(&size("params_4k")),
            "{}",
            size("params_4k")
        );
        assert!((60_000..=70_000).contains(&size("text_64k")));
        assert!((60_000..=70_000).contains(&size("base64_64k")));
        assert!((1100..=1300).contains(&size("batch10_eth_getBalance")));
    }

    #[test]
    fn validate_payloads_are_json_the_way_serde_json_sees_them() {
        for w in workloads()
            .into_iter()
            .filter(|w| w.expect == Expect::Valid)
        {
            let v: serde_json::Value = serde_json::from_slice(&w.bytes).unwrap();
            assert!(v.is_object() || v.is_array(), "{}", w.name);
        }
    }
}
