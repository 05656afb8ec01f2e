//! Differential: the classifier's verdict (accept/reject, kind, method, id bytes,
//! params bytes, error code and echoed id) against the serde_json reference, under
//! the default limits, small limits, and batches switched off.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Parser, ParserConfig};
use switchboard_fuzz::check::classify_diff;

thread_local! {
    static PARSERS: RefCell<[Parser; 3]> = RefCell::new({
        let mut small = ParserConfig::new();
        small.max_depth(8).max_batch_len(4).max_message_bytes(256);
        let mut no_batch = ParserConfig::new();
        no_batch.allow_batches(false);
        [
            Parser::new(),
            Parser::with_config(small),
            Parser::with_config(no_batch),
        ]
    });
}

fuzz_target!(|data: &[u8]| {
    PARSERS.with_borrow_mut(|parsers| {
        for p in parsers.iter_mut() {
            classify_diff(p, data);
        }
    });
});
