//! Shared pieces of the fuzz targets: the serde_json reference classifier
//! ([`reference`]), the checks ([`check`]) and the near-valid message generator
//! ([`generate`]).

pub mod check;
pub mod generate;
pub mod reference;

use std::sync::Arc;

use switchboard::{ParserConfig, Router, Session};

/// A session over the demo router (default limits).
pub fn demo_session() -> Session {
    Session::new(switchboard_server::demo::router())
}

/// A session over the demo router with small limits: depth 8, batches of 4, 256 bytes.
pub fn small_demo_session() -> Session {
    let mut cfg = ParserConfig::new();
    cfg.max_depth(8).max_batch_len(4).max_message_bytes(256);
    let router = switchboard_server::demo::register(
        Router::builder().config(cfg),
        Arc::new(switchboard_server::demo::Counters::default()),
    )
    .build()
    .expect("valid registrations");
    Session::new(router)
}
