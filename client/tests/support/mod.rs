//! What the client's tests share.
pub mod ws_server;
