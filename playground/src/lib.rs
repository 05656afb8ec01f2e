//! The core in the browser: the functions the playground page
//! (`playground/site/`) calls through wasm-bindgen, over the demo methods of
//! `switchboard respond` and the description of `switchboard inspect`.
//!
//! The server's own files are compiled in ([`demo`], [`inspect`]) rather than
//! depending on `switchboard-server`, whose transports (tokio's runtime, hyper)
//! do not build for `wasm32-unknown-unknown`. The router keeps the core's
//! default limits ([`switchboard::ParserConfig`]: message size, nesting depth,
//! batch length), so the page answers exactly what the native binary answers.
//!
//! On the host the same functions are plain Rust (the tests call them).

use std::cell::RefCell;

use switchboard::{Parser, Session};
use wasm_bindgen::prelude::wasm_bindgen;

/// The demo methods of `switchboard-server` (`server/src/demo.rs`).
#[path = "../../server/src/demo.rs"]
pub mod demo;
/// `switchboard inspect`'s description (`cli/src/describe.rs`).
#[path = "../../cli/src/describe.rs"]
pub mod inspect;

thread_local! {
    // One session and one parser, reused from call to call as a connection
    // reuses its own (the page is single-threaded).
    static SESSION: RefCell<Session> = RefCell::new(Session::new(demo::router()));
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Answers one message (any bytes: invalid JSON and invalid UTF-8 included)
/// with the demo methods, as `switchboard respond` does: the response bytes,
/// or `None` (`undefined` in JavaScript) when there is none (a notification,
/// a batch of notifications).
#[wasm_bindgen]
pub fn respond(input: &[u8]) -> Option<Vec<u8>> {
    SESSION.with_borrow_mut(|s| s.handle(input).map(<[u8]>::to_vec))
}

/// What the parser sees in one message, as `switchboard inspect` prints it:
/// one line of JSON (`{"kind":"request",…}`, `{"kind":"error","code":-32700,…}`).
#[wasm_bindgen]
pub fn inspect(input: &[u8]) -> String {
    PARSER.with_borrow_mut(|p| inspect::describe(p, input))
}

/// Runs `respond` on `input` `n` times and returns the last response's length
/// (0 for none): for timings (`playground/bench.mjs`, `examples/bench.rs`)
/// without a copy into JavaScript per call.
#[wasm_bindgen]
pub fn respond_n(input: &[u8], n: u32) -> usize {
    SESSION.with_borrow_mut(|s| {
        let mut len = 0;
        for _ in 0..n {
            len = s.handle(input).map_or(0, <[u8]>::len);
        }
        len
    })
}
