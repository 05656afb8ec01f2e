//! The response writer, through `ResultWriter::str`, `f64`, `raw_json` and
//! `serialize` in a handler: the response always parses, and the result reads back
//! as what was written; `raw_json` accepts exactly the valid JSON values.
#![no_main]

use std::cell::RefCell;

use libfuzzer_sys::fuzz_target;
use switchboard::{Router, Session};
use switchboard_fuzz::check::check_response_object;
use switchboard_fuzz::reference;

thread_local! {
    /// The current input, read by the handlers (they must be `'static`).
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static SESSION: RefCell<Session> = RefCell::new(Session::new(
        Router::builder()
            .method("str", |_, out| {
                INPUT.with_borrow(|d| out.str(&String::from_utf8_lossy(d)))
            })
            .method("f64", |_, out| {
                INPUT.with_borrow(|d| {
                    let mut b = [0u8; 8];
                    let n = d.len().min(8);
                    b[..n].copy_from_slice(&d[..n]);
                    out.f64(f64::from_le_bytes(b))
                })
            })
            .method("raw", |_, out| INPUT.with_borrow(|d| out.raw_json(d)))
            .method("ser", |_, out| {
                INPUT.with_borrow(|d| {
                    let s = String::from_utf8_lossy(d);
                    out.serialize(&(s.as_ref(), d.len(), d.first().map(|&b| f64::from(b) / 3.0)))
                })
            })
            .method("twice", |_, out| {
                out.null()?;
                out.str("again")
            })
            .build()
            .expect("valid registrations"),
    ));
}

/// Calls `method` and returns the `result` member's raw JSON, or `None` for an error.
fn call(session: &mut Session, method: &str, input: &[u8]) -> Option<String> {
    let req = format!(r#"{{"jsonrpc":"2.0","method":"{method}","id":7}}"#);
    let resp = session
        .handle(req.as_bytes())
        .expect("a request is answered");
    let text = std::str::from_utf8(resp).expect("responses are UTF-8");
    assert!(
        switchboard_tests::reference_accepts_with_depth(resp, usize::MAX),
        "invalid JSON response {text:?}"
    );
    let (id, code) = check_response_object(text, input);
    assert_eq!(id, "7");
    if code.is_some() {
        return None;
    }
    let members = reference::members(text).expect("an object");
    members
        .iter()
        .find(|(k, _)| *k == "\"result\"")
        .map(|(_, v)| v.to_string())
}

fuzz_target!(|data: &[u8]| {
    INPUT.with_borrow_mut(|d| {
        d.clear();
        d.extend_from_slice(data);
    });
    SESSION.with_borrow_mut(|s| {
        let text = String::from_utf8_lossy(data).into_owned();
        let r = call(s, "str", data).expect("str always succeeds");
        assert_eq!(
            serde_json::from_str::<String>(&r).ok(),
            Some(text.clone()),
            "str({text:?}) wrote {r}"
        );

        let mut b = [0u8; 8];
        let n = data.len().min(8);
        b[..n].copy_from_slice(&data[..n]);
        let f = f64::from_le_bytes(b);
        match call(s, "f64", data) {
            Some(r) => {
                assert!(f.is_finite(), "{f} written as {r}");
                let back: f64 = r.parse().expect("a JSON number");
                assert_eq!(back, f, "f64 {f:?} written as {r}");
                assert!(serde_json::from_str::<f64>(&r).is_ok(), "serde reads {r}");
            }
            None => assert!(!f.is_finite(), "finite {f} refused"),
        }

        let valid = switchboard_tests::reference_accepts(data);
        match call(s, "raw", data) {
            Some(r) => {
                assert!(valid, "raw_json accepted invalid JSON {text:?}");
                assert_eq!(r.as_bytes(), data.trim_ascii(), "raw_json rewrote {text:?}");
            }
            None => assert!(!valid, "raw_json refused valid JSON {text:?}"),
        }

        let r = call(s, "ser", data).expect("serialize succeeds");
        let (st, len, _): (String, usize, Option<f64>) =
            serde_json::from_str(&r).expect("reads back");
        assert_eq!((st, len), (text, data.len()));

        assert_eq!(call(s, "twice", data), None, "two results must be refused");
    });
});
