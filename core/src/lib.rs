//! # switchboard
//!
//! A zero-copy JSON-RPC 2.0 core: it validates a message in one pass over a
//! borrowed buffer, classifies it (request, notification, response, batch, or the
//! exact error the specification prescribes), and hands out method, id and params
//! as views into the input, allocating nothing once its reusable state is warm.
//!
//! ```
//! use switchboard::{Message, Parser};
//!
//! let mut parser = Parser::new(); // reuse it: one per thread or connection
//! let input = br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}"#;
//! match parser.parse(input) {
//!     Message::Request(req) => {
//!         assert_eq!(req.method(), "eth_getBalance");
//!         assert_eq!(req.id().as_bytes(), b"1");
//!         let params = req.params().unwrap();
//!         assert_eq!(params.index(1).unwrap().as_plain_str(), Some("latest"));
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//!
//! // Bad input gets the exact JSON-RPC error, with machine-readable detail.
//! let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":"x","id":1"#) else { panic!() };
//! assert_eq!(e.code().as_i32(), -32700);
//! ```
//!
//! ## Why this crate
//! - **Exact**: every rule of JSON-RPC 2.0 and RFC 8259 (UTF-8 included), with the
//!   decisions of SPEC.md where the specification is silent: ids echoed byte for byte,
//!   duplicate members refused, method names compared after unescaping.
//! - **Fast**: one pass, SIMD string scanning (SSE2, AVX2, AVX-512 chosen at run
//!   time, a scalar path everywhere), no tape, no DOM, no copy.
//! - **Bounded**: depth, batch length and message size limits; nesting never uses the
//!   call stack; no panic on any input.
//!
//! ## Async handlers
//! Methods that do I/O register with [`RouterBuilder::method_async`] or
//! [`RouterBuilder::typed_async`]: the handler gets an [`OwnedCall`] (or typed
//! params) and returns a `'static` future, so it may spawn on whatever runtime the
//! application uses; the core depends on none. [`Session::handle_async`] awaits
//! those futures, polling a batch's async calls concurrently, while sync handlers
//! still run inline and a message without async methods still allocates nothing.
//! [`Session::handle`] drives them with a small blocking executor, for futures that
//! need no runtime reactor.
//!
//! ## Connections that talk back
//! A transport owns a [`connection::Connection`] per client and attaches each
//! session to it ([`Session::attach`]): handlers reach it through their call
//! ([`Call::connection`], [`OwnedCall::connection`]), with its id, typed
//! per-connection state and a [`connection::Peer`] that sends the client
//! notifications and requests whose answers come back as futures.
//! [`Session::handle_concurrent`] runs sync handlers inline (still without
//! allocating) and hands a message's async calls out as one `'static` future
//! to spawn, each with a [`connection::CancellationToken`] that the protocol's
//! cancel notification fires ([`RouterBuilder::cancel_notification`]). The
//! core depends on no runtime; `switchboard-server`'s `duplex` module is the
//! tokio driver for byte streams. [`envelope`] writes every JSON-RPC message
//! shape, for transports and users alike.
//!
//! ## Features
//! - `schemars`: `RouterBuilder::describe` and `RouterBuilder::typed_described`,
//!   OpenRPC descriptions for `rpc.discover` derived from the params' and
//!   result's types.
//! - `tracing` (`switchboard-server` turns it on): one [`tracing`](https://docs.rs/tracing)
//!   event per call of a registered method on target `switchboard::call`: at
//!   `debug` its `method`, `outcome` (`ok`, `error`, `panicked`, `cancelled`),
//!   `code` and `micros`; at `warn` instead a call that panicked or answered
//!   -32603, also when `debug` is off. When no subscriber wants the `debug`
//!   events, a message pays one level check.
//!
//! Build with `RUSTFLAGS="--cfg switchboard_disable_simd"` to force the scalar
//! kernels.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod connection;
mod dispatch;
pub mod envelope;
pub mod framing;
mod long;
mod params;
mod parse;
mod simd;
#[cfg(test)]
mod test_rng;
mod unescape;
pub(crate) mod write;

pub use dispatch::async_call::OwnedCall;
pub use dispatch::handler::{Call, ResultExt, ResultWriter, RpcError};
pub use dispatch::middleware;
pub use dispatch::router::{BuildError, Router, RouterBuilder};
pub use dispatch::session::{Handled, RunningCalls, Session};
pub use dispatch::typed::{BorrowedParams, BorrowedResult, BorrowingFn, Owned};
pub use params::{Elements, Key, Kind, Members, Params, ParamsError, RawValue};
pub use parse::{
    Batch, Code, Error, ErrorData, Field, Id, Item, Message, Method, Notification, Parser,
    ParserConfig, Reason, Request, Response,
};

/// Internals exposed for the benches and differential tests only; not a stable API.
#[doc(hidden)]
pub mod _benchable {
    /// The string-scanning kernel chosen on this CPU (`avx512`, `avx2`, `sse2` or
    /// `scalar`; `avx512` runs the block walks, AVX2 the rest).
    pub fn simd_backend() -> &'static str {
        crate::simd::runtime::backend()
    }

    /// The structural walk on the array or object at `doc[0]` (of at most
    /// `max_depth` levels), with each kernel this CPU runs (`portable`, and
    /// `avx2`): where it ends, or `None` where it gives up.
    pub fn structural_walks(doc: &[u8], max_depth: usize) -> Vec<(&'static str, Option<usize>)> {
        crate::parse::walk::walks(doc, max_depth)
    }

    /// The scalar kernel: index of the first byte in `bytes[from..]` that a string
    /// scan must stop at.
    pub fn find_special_scalar(bytes: &[u8], from: usize) -> usize {
        crate::simd::scalar::find_special(bytes, from)
    }

    /// The runtime-dispatched kernel (same contract as [`find_special_scalar`]).
    pub fn find_special(bytes: &[u8], from: usize) -> usize {
        crate::simd::find_special(bytes, from)
    }

    /// The router's method table (perfect hash), for the lookup benches.
    #[derive(Clone, Debug)]
    pub struct MethodTable(crate::dispatch::method_table::MethodTable);

    impl MethodTable {
        /// Builds the table; `names[i]` is found at index `i`.
        #[must_use]
        pub fn build<I>(names: I) -> Self
        where
            I: IntoIterator,
            I::Item: AsRef<str>,
        {
            MethodTable(crate::dispatch::method_table::MethodTable::build(names))
        }

        /// The index of `name`, if it was registered.
        #[inline]
        #[must_use]
        pub fn get(&self, name: &str) -> Option<u32> {
            self.0.get(name)
        }

        /// Whether the perfect hash was found (`false`: the fallback map is in use).
        #[must_use]
        pub fn is_perfect(&self) -> bool {
            self.0.is_perfect()
        }
    }
}

/// The crate README's examples (the crates.io page), compiled and run as doctests. The
/// workspace README's run from `switchboard-tests`, which is not published.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
