//! The dispatcher: the builder, the handler types (sync and async), the session, and
//! the method table.
//!
//! This module needs no `unsafe`.
#![forbid(unsafe_code)]

pub(crate) mod async_call;
pub(crate) mod handler;
pub(crate) mod method_table;
pub mod middleware;
pub(crate) mod router;
#[cfg(feature = "schemars")]
pub(crate) mod schema;
pub(crate) mod session;
pub(crate) mod trace;
pub(crate) mod typed;
