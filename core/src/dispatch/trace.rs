//! The per-call [`tracing`](https://docs.rs/tracing) events (feature `tracing`),
//! on target `switchboard::call`:
//!
//! - at `debug`, one event per call of a registered method, when it ends: its
//!   `method`, `outcome` (`ok`, `error`, `panicked` or `cancelled`), `code` (the
//!   error code answered, if any) and `micros` (from before its first middleware
//!   layer, or its handler, to its outcome; an async call's to its future's end);
//! - at `warn` instead, the calls that failed on the server's side: a handler (or
//!   its future, or a middleware layer) that panicked, or an error -32603
//!   (internal error) answered. Without a `debug` subscriber these come alone,
//!   without `micros`.
//!
//! Whether the `debug` events are wanted is asked once per message (a static
//! level check: a load and a compare when no subscriber wants them); only then
//! is a call timed, through the path middleware takes. Without the feature all
//! of this compiles to nothing.

use std::time::{Duration, Instant};

use super::middleware::Outcome;

/// The target of the per-call events.
#[cfg(feature = "tracing")]
const TARGET: &str = "switchboard::call";

/// Whether a subscriber wants the per-call `debug` events.
#[inline(always)]
pub(crate) fn wanted() -> bool {
    #[cfg(feature = "tracing")]
    {
        tracing::enabled!(target: TARGET, tracing::Level::DEBUG)
    }
    #[cfg(not(feature = "tracing"))]
    {
        false
    }
}

/// Whether a subscriber wants the `warn` events of failed calls (an async
/// call, when the `debug` ones are not wanted, then carries its method's name
/// to its end for them).
#[inline(always)]
pub(crate) fn failures_wanted() -> bool {
    #[cfg(feature = "tracing")]
    {
        tracing::enabled!(target: TARGET, tracing::Level::WARN)
    }
    #[cfg(not(feature = "tracing"))]
    {
        false
    }
}

/// Whether `outcome` is the server's fault: a panic or -32603.
#[inline(always)]
fn internal(outcome: &Outcome<'_>) -> bool {
    outcome.error_code() == Some(crate::parse::Code::InternalError.as_i32())
}

/// How an outcome reads in the events.
#[cfg(feature = "tracing")]
fn kind(outcome: &Outcome<'_>) -> &'static str {
    match outcome {
        Outcome::Ok => "ok",
        Outcome::Error(_) => "error",
        Outcome::Panicked => "panicked",
        Outcome::Cancelled => "cancelled",
    }
}

/// A call's end: its event when `traced` (the `debug` events were wanted when
/// it began), else the `warn` event alone if it failed on the server's side.
#[inline(always)]
pub(crate) fn ended(traced: bool, method: &str, outcome: Outcome<'_>, started: Instant) {
    if traced {
        call(method, outcome, started.elapsed());
    } else {
        failure(method, outcome);
    }
}

/// The event of a traced call.
#[inline(never)]
pub(crate) fn call(method: &str, outcome: Outcome<'_>, elapsed: Duration) {
    #[cfg(feature = "tracing")]
    {
        let warn = internal(&outcome);
        let (outcome, code) = (kind(&outcome), outcome.error_code());
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if warn {
            tracing::warn!(target: TARGET, method, outcome, code, micros, "call failed");
        } else {
            tracing::debug!(target: TARGET, method, outcome, code, micros, "call");
        }
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (method, outcome, elapsed);
}

/// The `warn` event of an untimed call, if it failed on the server's side.
#[inline(always)]
pub(crate) fn failure(method: &str, outcome: Outcome<'_>) {
    if cfg!(feature = "tracing") && internal(&outcome) {
        failed(method, outcome);
    }
}

#[cold]
#[inline(never)]
fn failed(method: &str, outcome: Outcome<'_>) {
    #[cfg(feature = "tracing")]
    {
        let (outcome, code) = (kind(&outcome), outcome.error_code());
        tracing::warn!(target: TARGET, method, outcome, code, "call failed");
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (method, outcome);
}
