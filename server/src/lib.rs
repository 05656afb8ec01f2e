//! Transports for switchboard: [`http`] (JSON-RPC over HTTP on hyper and tokio, as a
//! mountable service and a server), [`ws`] (JSON-RPC over WebSocket), [`duplex`] (the
//! full-duplex driver for any byte stream: stdio, Unix sockets, TCP), [`stdio`]
//! (newline-delimited or `Content-Length`-framed JSON-RPC on blocking byte streams),
//! [`streamable`] (MCP's Streamable HTTP: sessions, server-sent events) and [`site`]
//! (static files next to the endpoint: the playground).
//!
//! The crate writes nothing itself: it emits [`tracing`](https://docs.rs/tracing)
//! events (connections opened and closed and requests at `debug`, problems at `warn`,
//! an access log at `info` when [`http::Switchboard::access_log`] is on) for the
//! application's subscriber to print or drop. Targets are the module paths
//! (`switchboard_server::http`, ...) and `switchboard_server::access`. It turns on
//! the core's `tracing` feature: on every transport, one event per JSON-RPC call on
//! target `switchboard::call` (`method`, `outcome`, `code`, `micros` at `debug`; a
//! panic or a -32603 at `warn`).
//!
//! Features: `demo` (off by default) adds [`demo`] and [`chain`], the demo methods
//! and the synthetic Ethereum chain that the `switchboard` binary (package
//! `switchboard-cli`) serves.

#[cfg(feature = "demo")]
pub mod chain;
#[cfg(feature = "demo")]
pub mod demo;
pub mod duplex;
pub mod http;
pub mod site;
pub mod stdio;
pub mod streamable;
pub mod ws;

/// The crate README's examples (the crates.io page), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
