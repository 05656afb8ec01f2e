//! Transports for switchboard and the pieces of the `switchboard` binary:
//! [`http`] (JSON-RPC over HTTP on hyper and tokio, as a mountable service and a
//! server), [`duplex`] (the full-duplex driver for any byte stream: stdio, Unix
//! sockets, TCP), [`stdio`] (newline-delimited or `Content-Length`-framed JSON-RPC on byte
//! streams), [`streamable`] (MCP's Streamable HTTP: sessions, server-sent
//! events), [`inspect`] (what the parser sees), [`demo`] (the demo methods),
//! [`chain`] (the demo's synthetic Ethereum chain and `newHeads` subscription), [`site`]
//! (static files next to the endpoint: the playground) and [`log`] (leveled logging to standard error).

pub mod chain;
pub mod demo;
pub mod duplex;
pub mod http;
pub mod inspect;
pub mod log;
pub mod site;
pub mod stdio;
pub mod streamable;
pub mod ws;
