//! Structured: near-valid JSON-RPC messages built from `arbitrary` input (wrong
//! types, duplicate members, escaped names, deep nesting, huge numbers, lone
//! surrogates, invalid UTF-8, batches), checked by the classifier differential and
//! the session's response rules.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Parser, Session};
use switchboard_fuzz::check::{check_session, classify_diff};
use switchboard_fuzz::generate::GMessage;

thread_local! {
    static STATE: RefCell<(Parser, Session)> =
        RefCell::new((Parser::new(), switchboard_fuzz::demo_session()));
}

fuzz_target!(|msg: GMessage| {
    let bytes = msg.render();
    STATE.with_borrow_mut(|(parser, session)| {
        classify_diff(parser, &bytes);
        check_session(session, &bytes);
    });
});
