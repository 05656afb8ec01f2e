//! Transports for switchboard and the pieces of the `switchboard` binary:
//! [`inspect`] (what the parser sees), [`demo`] (the demo methods) and
//! [`stdio`] (newline-delimited JSON-RPC on byte streams).

pub mod demo;
pub mod inspect;
pub mod stdio;
