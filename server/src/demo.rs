//! The demo methods: the JSON-RPC 2.0 specification's examples plus an Ethereum call.
//! Used by the `switchboard` binary and by the tests.
//!
//! All are raw handlers reading the params view directly, so a call allocates nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use switchboard::{Call, Params, RawValue, ResultWriter, Router, RouterBuilder, RpcError};

/// The fixed balance `eth_getBalance` answers (about 32.11 ETH).
pub const BALANCE: &str = "0x1bdb569fa3c2565cc";

const INVALID: i32 = -32602;

fn invalid(data: &'static str) -> RpcError {
    RpcError::new(INVALID, "Invalid params").with_data_json(data)
}

/// A number as an exact integer when it is one that fits, else a finite float.
enum Num {
    Int(i64),
    Float(f64),
}

fn number(v: RawValue<'_>) -> Option<Num> {
    if let Some(i) = v.as_i64() {
        return Some(Num::Int(i));
    }
    v.as_f64().map(Num::Float)
}

fn as_float(n: &Num) -> f64 {
    match *n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn write_num(out: &mut ResultWriter<'_>, n: Num) -> Result<(), RpcError> {
    match n {
        Num::Int(i) => out.i64(i),
        Num::Float(f) if f.is_finite() => out.f64(f),
        Num::Float(_) => Err(invalid(
            r#"{"field":"params","reason":"the result is not a finite number"}"#,
        )),
    }
}

/// The two numbers of a `[a, b]` or `{"<first>": a, "<second>": b}` call (each
/// name exactly once, nothing else), or -32602 with `shape`. Inlined into each
/// method so the names are constants again (out of line, `subtract` cost 7 to 11%
/// more instructions: benches/guard.sh).
#[inline(always)]
fn two_numbers(
    call: &Call<'_>,
    first: &str,
    second: &str,
    shape: &'static str,
) -> Result<(Num, Num), RpcError> {
    let p = call.params().ok_or_else(|| invalid(shape))?;
    let (a, b) = if p.is_array() {
        let mut it = p.iter();
        match (it.next(), it.next(), it.next()) {
            (Some(a), Some(b), None) => (a, b),
            _ => return Err(invalid(shape)),
        }
    } else {
        // One pass: exactly `first` and `second`, each once, nothing else.
        let (mut a, mut b) = (None, None);
        for (k, v) in p.members() {
            let slot = if k.eq_str(first) {
                &mut a
            } else if k.eq_str(second) {
                &mut b
            } else {
                return Err(invalid(shape));
            };
            if slot.replace(v).is_some() {
                return Err(invalid(shape));
            }
        }
        match (a, b) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(invalid(shape)),
        }
    };
    Ok((
        number(a).ok_or_else(|| invalid(shape))?,
        number(b).ok_or_else(|| invalid(shape))?,
    ))
}

fn subtract(call: &Call<'_>, out: &mut ResultWriter<'_>) -> Result<(), RpcError> {
    const SHAPE: &str = r#"{"field":"params","reason":"expected [minuend, subtrahend] or {\"minuend\": number, \"subtrahend\": number}, finite numbers"}"#;
    let (a, b) = two_numbers(call, "minuend", "subtrahend", SHAPE)?;
    let r = match (&a, &b) {
        (Num::Int(x), Num::Int(y)) => match x.checked_sub(*y) {
            Some(r) => Num::Int(r),
            None => Num::Float(*x as f64 - *y as f64),
        },
        _ => Num::Float(as_float(&a) - as_float(&b)),
    };
    write_num(out, r)
}

/// The server-defined error code `divide` answers a zero divisor with (the
/// specification leaves -32000 to -32099 to the server).
pub const DIVISION_BY_ZERO: i32 = -32000;

/// `divide [dividend, divisor]` (or named): an exact integer when both are
/// integers and the divisor divides the dividend, else a float. A zero divisor
/// is the server-defined error -32000 `Division by zero` (with `data`); a quotient too large
/// for a finite double (`[1e308, 1e-308]`) is -32603 `Internal error`: the core
/// refuses to write a non-finite number (JSON has none), so the server fails
/// on valid params. The two examples of the playground's error-code explorer.
fn divide(call: &Call<'_>, out: &mut ResultWriter<'_>) -> Result<(), RpcError> {
    const SHAPE: &str = r#"{"field":"params","reason":"expected [dividend, divisor] or {\"dividend\": number, \"divisor\": number}, finite numbers"}"#;
    let (a, b) = two_numbers(call, "dividend", "divisor", SHAPE)?;
    if as_float(&b) == 0.0 {
        return Err(RpcError::new(DIVISION_BY_ZERO, "Division by zero")
            .with_data_json(r#"{"field":"params","reason":"the divisor is 0"}"#));
    }
    match (&a, &b) {
        (Num::Int(x), Num::Int(y)) if x.checked_rem(*y) == Some(0) => out.i64(x / y),
        _ => out.f64(as_float(&a) / as_float(&b)), // -32603 when not finite
    }
}

fn sum(call: &Call<'_>, out: &mut ResultWriter<'_>) -> Result<(), RpcError> {
    const SHAPE: &str = r#"{"field":"params","reason":"expected an array of finite numbers"}"#;
    let p: Params<'_> = call
        .params()
        .filter(|p| p.is_array())
        .ok_or_else(|| invalid(SHAPE))?;
    let mut acc = Num::Int(0);
    for v in p.iter() {
        let n = number(v).ok_or_else(|| invalid(SHAPE))?;
        acc = match (&acc, &n) {
            (Num::Int(x), Num::Int(y)) => match x.checked_add(*y) {
                Some(r) => Num::Int(r),
                None => Num::Float(*x as f64 + *y as f64),
            },
            _ => Num::Float(as_float(&acc) + as_float(&n)),
        };
    }
    write_num(out, acc)
}

/// Whether every byte is an ASCII hex digit. Branch-free per byte, so the
/// compiler checks many bytes per instruction.
fn is_hex(s: &[u8]) -> bool {
    s.iter().fold(true, |ok, &c| {
        ok & ((c.wrapping_sub(b'0') < 10) | ((c | 0x20).wrapping_sub(b'a') < 6))
    })
}

/// `eth_getBalance`'s address check: `0x` and 40 hex digits. (The benches'
/// other stacks call this same function, so they all do the same work.)
pub fn is_hex_address(s: &str) -> bool {
    s.len() == 42 && s.starts_with("0x") && is_hex(&s.as_bytes()[2..])
}

/// `eth_getBalance`'s block check: a tag or a `0x` hex number.
pub fn is_block(s: &str) -> bool {
    matches!(s, "latest" | "earliest" | "pending" | "safe" | "finalized")
        || (s.len() > 2 && s.starts_with("0x") && is_hex(&s.as_bytes()[2..]))
}

fn eth_get_balance(call: &Call<'_>, out: &mut ResultWriter<'_>) -> Result<(), RpcError> {
    const SHAPE: &str = r#"{"field":"params","reason":"expected [address, block]: a 20-byte 0x-hex address and a block tag or 0x-hex number"}"#;
    let p = call
        .params()
        .filter(|p| p.is_array())
        .ok_or_else(|| invalid(SHAPE))?;
    let mut it = p.iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None)
            if a.as_plain_str().is_some_and(is_hex_address)
                && b.as_plain_str().is_some_and(is_block) =>
        {
            out.str(BALANCE)
        }
        _ => Err(invalid(SHAPE)),
    }
}

/// Counts of the notifications received, for tests and logs.
#[derive(Debug, Default)]
pub struct Counters {
    /// `update` notifications.
    pub update: AtomicU64,
    /// `notify_hello` notifications.
    pub hello: AtomicU64,
    /// `notify_sum` notifications.
    pub sum: AtomicU64,
}

/// Registers the demo methods on `builder`; notifications bump `counters`.
pub fn register(builder: RouterBuilder, counters: Arc<Counters>) -> RouterBuilder {
    let (c1, c2, c3) = (counters.clone(), counters.clone(), counters);
    register_methods(builder)
        .notification("update", move |_| {
            c1.update.fetch_add(1, Ordering::Relaxed);
        })
        .notification("notify_hello", move |_| {
            c2.hello.fetch_add(1, Ordering::Relaxed);
        })
        .notification("notify_sum", move |_| {
            c3.sum.fetch_add(1, Ordering::Relaxed);
        })
}

/// Registers the demo methods that answer (with their schemas) on `builder`, not
/// the notifications (`update`, `notify_hello`, `notify_sum`).
pub fn register_methods(builder: RouterBuilder) -> RouterBuilder {
    builder
        .method("subtract", subtract)
        .method("sum", sum)
        .method("divide", divide)
        .method("get_data", |_, out| out.raw_json(br#"["hello",5]"#))
        .method("eth_getBalance", eth_get_balance)
        .schema(
            "subtract",
            Some(r#"[{"name":"minuend","schema":{"type":"number"}},{"name":"subtrahend","schema":{"type":"number"}}]"#),
            Some(r#"{"name":"difference","schema":{"type":"number"}}"#),
        )
        .schema(
            "divide",
            Some(r#"[{"name":"dividend","schema":{"type":"number"}},{"name":"divisor","schema":{"type":"number"}}]"#),
            Some(r#"{"name":"quotient","schema":{"type":"number"}}"#),
        )
        .schema(
            "sum",
            Some(r#"[{"name":"numbers","schema":{"type":"array","items":{"type":"number"}}}]"#),
            Some(r#"{"name":"total","schema":{"type":"number"}}"#),
        )
        .schema("get_data", Some("[]"), Some(r#"{"name":"data","schema":{"type":"array"}}"#))
        .schema(
            "eth_getBalance",
            Some(r#"[{"name":"address","schema":{"type":"string","pattern":"^0x[0-9a-fA-F]{40}$"}},{"name":"block","schema":{"type":"string"}}]"#),
            Some(r#"{"name":"balance","schema":{"type":"string","pattern":"^0x[0-9a-f]+$"}}"#),
        )
}

/// The demo router, with default limits.
pub fn router() -> Arc<Router> {
    register(Router::builder(), Arc::new(Counters::default()))
        .build()
        .expect("the demo registrations are valid")
}

/// The most notifications one `countdown` sends.
pub const COUNTDOWN_MAX: u64 = 100;

/// Registers `countdown` on `builder`: a method that talks back. `countdown [n]`
/// (or `{"n": n}`, `0 ≤ n ≤ 100`) sends the client `n` notifications
/// `countdown {"left": k}` for `k` from `n - 1` down to 0, `step` apart, then
/// answers `n`. Over a transport that can push (stdio, a Unix socket,
/// WebSocket, a Streamable HTTP POST: its notifications then come as
/// server-sent events before the answer); elsewhere (a plain HTTP POST) it
/// answers -32601 `Notifications not supported`, as a subscribe does.
///
/// ```
/// use std::time::Duration;
/// use switchboard::connection::{Connection, ConnectionConfig, block_on};
/// use switchboard::{Router, Session};
///
/// let router = switchboard_server::demo::register_countdown(Router::builder(), Duration::ZERO)
///     .build()
///     .unwrap();
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn);
/// let h = session.handle_concurrent(br#"{"jsonrpc":"2.0","method":"countdown","params":[2],"id":1}"#);
/// let answer = block_on(h.calls.unwrap());
/// assert_eq!(answer.unwrap(), br#"{"jsonrpc":"2.0","result":2,"id":1}"#);
/// let first = outgoing.try_recv().unwrap();
/// assert_eq!(first, br#"{"jsonrpc":"2.0","method":"countdown","params":{"left":1}}"#);
/// ```
pub fn register_countdown(builder: RouterBuilder, step: std::time::Duration) -> RouterBuilder {
    builder.method_async("countdown", move |call: switchboard::OwnedCall| async move {
        let n = call
            .params()
            .and_then(|p| p.index(0).or_else(|| p.get("n")))
            .and_then(|v| v.as_u64())
            .filter(|&n| n <= COUNTDOWN_MAX)
            .ok_or_else(|| {
                invalid(r#"{"field":"params","reason":"expected [n] or {\"n\": n}, an integer from 0 to 100"}"#)
            })?;
        let Some(conn) = call.connection().filter(|c| c.can_push()) else {
            return Err(RpcError::new(-32601, "Notifications not supported"));
        };
        let peer = conn.peer();
        for left in (0..n).rev() {
            if !step.is_zero() {
                tokio::time::sleep(step).await;
            }
            let note = format!(r#"{{"left":{left}}}"#);
            if peer.notify_raw("countdown", Some(note.as_bytes())).await.is_err() {
                break; // the client went: nothing to answer
            }
        }
        Ok(n)
    })
}
