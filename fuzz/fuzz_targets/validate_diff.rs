//! Differential: `Parser::validate` (one JSON text, RFC 8259, UTF-8, depth limit)
//! against the serde_json reference of tests/src/lib.rs, at the default depth and
//! at depth 4.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Code, Parser, ParserConfig};
use switchboard_tests::reference_accepts_with_depth;

thread_local! {
    static PARSERS: RefCell<(Parser, Parser)> = RefCell::new({
        let mut shallow = ParserConfig::new();
        shallow.max_depth(4);
        (Parser::new(), Parser::with_config(shallow))
    });
}

fuzz_target!(|data: &[u8]| {
    PARSERS.with_borrow_mut(|(deep, shallow)| {
        for (p, depth) in [(deep, 128), (shallow, 4)] {
            let got = p.validate(data);
            let want = reference_accepts_with_depth(data, depth);
            assert_eq!(
                got.is_ok(),
                want,
                "validate {:?} vs reference {want} at depth {depth}; input {:?} = {data:?}",
                got,
                String::from_utf8_lossy(data)
            );
            if let Err(e) = got {
                assert_eq!(e.code(), Code::ParseError, "{e:?}");
            }
        }
    });
});
