//! Transports for switchboard and the pieces of the `switchboard` binary:
//! [`http`] (JSON-RPC over HTTP on hyper and tokio, as a mountable service and a
//! server), [`duplex`] (the full-duplex driver for any byte stream: stdio, Unix
//! sockets, TCP), [`stdio`] (newline-delimited or `Content-Length`-framed JSON-RPC on byte
//! streams), [`streamable`] (MCP's Streamable HTTP: sessions, server-sent
//! events), [`inspect`] (what the parser sees), [`demo`] (the demo methods),
//! [`chain`] (the demo's synthetic Ethereum chain and `newHeads` subscription) and
//! [`log`] (leveled logging to standard error).

pub mod chain;
pub mod demo;
pub mod duplex;
pub mod http;
pub mod inspect;
pub mod log;
pub mod stdio;
pub mod streamable;
pub mod ws;

/// The crate README's examples (the crates.io page), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
