//! `Session::handle` with the demo router on arbitrary bytes: the answer is one
//! valid JSON text of valid Response objects, echoing ids byte for byte, or nothing
//! exactly when SPEC.md says so (a notification, a Response object, a batch of only
//! those; never `[]`). Default limits and small limits.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::Session;
use switchboard_fuzz::check::check_session;

thread_local! {
    static SESSIONS: RefCell<(Session, Session)> = RefCell::new((
        switchboard_fuzz::demo_session(),
        switchboard_fuzz::small_demo_session(),
    ));
}

fuzz_target!(|data: &[u8]| {
    SESSIONS.with_borrow_mut(|(default, small)| {
        check_session(default, data);
        check_session(small, data);
    });
});
