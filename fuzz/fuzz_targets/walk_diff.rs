//! Differential: the structural walk (the validator of large nested values, with
//! each kernel this CPU runs) against `Parser::validate`, on an array or object at
//! the input's start: what the walk accepts is valid JSON ending where it says; a
//! valid document is accepted by the vector walk (and by the portable one on ASCII).
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::_benchable::structural_walks;
use switchboard::{Parser, ParserConfig};

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fuzz_target!(|data: &[u8]| {
    if !matches!(data.first(), Some(b'[' | b'{')) {
        return;
    }
    PARSER.with_borrow_mut(|p| {
        let whole = p.validate(data).is_ok();
        for (kernel, got) in structural_walks(data, ParserConfig::DEFAULT_MAX_DEPTH) {
            match got {
                Some(end) => assert!(
                    p.validate(&data[..end]).is_ok(),
                    "{kernel} accepted {end} bytes of {:?}",
                    String::from_utf8_lossy(data)
                ),
                None => assert!(
                    !whole || (kernel.starts_with("portable") && !data.is_ascii()),
                    "{kernel} refused valid {:?}",
                    String::from_utf8_lossy(data)
                ),
            }
        }
    });
});
