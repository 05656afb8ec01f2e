//! The checks the targets share: the classifier against the reference, and a
//! session's response against what JSON-RPC 2.0 and SPEC.md prescribe.

use switchboard::{Code, Item, Message, Method, Parser, ParserConfig, Session};

use crate::reference::{self, RefItem, RefMessage};

fn check_method(core: Method<'_>, reference: &Option<String>, input: &[u8]) {
    match reference {
        Some(name) => {
            assert!(
                core.is_exact(),
                "method {name:?} reported inexact; input {:?}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(core.as_str(), name, "method name; input {input:?}");
        }
        None => assert!(
            !core.is_exact(),
            "a method with a lone surrogate reported exact ({:?}); input {input:?}",
            core.as_str()
        ),
    }
}

/// Asserts that the core's verdict on one item equals the reference's.
pub fn check_item(core: Item<'_>, reference: &RefItem<'_>, input: &[u8]) {
    let show = || String::from_utf8_lossy(input).into_owned();
    match (core, reference) {
        (
            Item::Request(r),
            RefItem::Request {
                method, id, params, ..
            },
        ) => {
            check_method(r.method(), method, input);
            assert_eq!(r.id().as_bytes(), *id, "request id; input {}", show());
            assert_eq!(
                r.params().map(|p| p.as_bytes()),
                *params,
                "request params; input {}",
                show()
            );
        }
        (Item::Notification(n), RefItem::Notification { method, params }) => {
            check_method(n.method(), method, input);
            assert_eq!(
                n.params().map(|p| p.as_bytes()),
                *params,
                "notification params; input {}",
                show()
            );
        }
        (Item::Response(r), RefItem::Response { id, outcome }) => {
            assert_eq!(r.id().as_bytes(), *id, "response id; input {}", show());
            let core = r.outcome().map(|v| v.as_bytes()).map_err(|v| v.as_bytes());
            assert_eq!(core, *outcome, "response outcome; input {}", show());
        }
        (Item::Error(e), RefItem::Error { code, reason, id }) => {
            assert_eq!(
                e.code(),
                *code,
                "error code ({:?} vs {reason:?}); input {}",
                e.reason(),
                show()
            );
            if let Some(reason) = reason {
                assert_eq!(e.reason(), *reason, "error reason; input {}", show());
            }
            assert_eq!(
                e.id().as_bytes(),
                *id,
                "echoed id ({:?}); input {}",
                e.reason(),
                show()
            );
        }
        (core, reference) => panic!(
            "verdicts differ: core {core:?}, reference {reference:?}; input {:?} = {input:?}",
            show()
        ),
    }
}

/// Classifies `input` with `parser` and the reference, walks everything the core
/// hands out, and asserts the verdicts agree.
pub fn classify_diff(parser: &mut Parser, input: &[u8]) {
    let cfg = *parser.config();
    let expected = reference::classify(input, &cfg);
    let msg = parser.parse(input);
    match (msg, &expected) {
        (Message::Batch(b), RefMessage::Batch(items)) => {
            assert_eq!(b.len(), items.len(), "batch length; input {input:?}");
            assert!(!b.is_empty());
            for (i, (item, (raw, reference))) in b.iter().zip(items).enumerate() {
                assert_eq!(b.raw(i), Some(*raw), "batch element {i} bytes");
                assert_eq!(b.get(i), Some(item));
                check_item(item, reference, input);
            }
            assert_eq!(b.get(b.len()), None);
        }
        (Message::Batch(b), RefMessage::Single(r)) => panic!(
            "core says batch of {}, reference {r:?}; input {:?}",
            b.len(),
            String::from_utf8_lossy(input)
        ),
        (single, RefMessage::Single(r)) => {
            let item = match single {
                Message::Request(x) => Item::Request(x),
                Message::Notification(x) => Item::Notification(x),
                Message::Response(x) => Item::Response(x),
                Message::Error(x) => Item::Error(x),
                Message::Batch(_) => unreachable!(),
            };
            check_item(item, r, input);
        }
        (other, RefMessage::Batch(items)) => panic!(
            "core says {other:?}, reference a batch of {}; input {:?}",
            items.len(),
            String::from_utf8_lossy(input)
        ),
    }
}

/// Whether the reference says `input` gets no answer at all: a single notification
/// or Response object, or a batch holding only those.
pub fn expects_silence(input: &[u8], cfg: &ParserConfig) -> bool {
    let silent =
        |i: &RefItem<'_>| matches!(i, RefItem::Notification { .. } | RefItem::Response { .. });
    match reference::classify(input, cfg) {
        RefMessage::Single(i) => silent(&i),
        RefMessage::Batch(items) => items.iter().all(|(_, i)| silent(i)),
    }
}

/// Whether the answer is a batch, and the ids and error codes expected, in order.
type Answers<'a> = (bool, Vec<(&'a [u8], Option<Code>)>);

/// The ids (exact bytes) and error codes the reference expects answers for, in order.
fn expected_answers<'a>(input: &'a [u8], cfg: &ParserConfig) -> Answers<'a> {
    let answer = |i: &RefItem<'a>| match i {
        RefItem::Request { id, .. } => Some((*id, None)),
        RefItem::Error { code, id, .. } => Some((*id, Some(*code))),
        _ => None,
    };
    match reference::classify(input, cfg) {
        RefMessage::Single(i) => (false, answer(&i).into_iter().collect()),
        RefMessage::Batch(items) => (true, items.iter().filter_map(|(_, i)| answer(i)).collect()),
    }
}

/// Asserts `resp` is one valid Response object and returns its raw id and its error
/// code, if it is an error.
pub fn check_response_object<'a>(resp: &'a str, input: &[u8]) -> (&'a str, Option<i64>) {
    let members = reference::members(resp)
        .unwrap_or_else(|| panic!("response is not an object: {resp}; input {input:?}"));
    let mut names: Vec<String> = members
        .iter()
        .map(|(k, _)| reference::unescape(k).expect("a plain key"))
        .collect();
    names.sort();
    let get = |n: &str| {
        members
            .iter()
            .find(|(k, _)| reference::unescape(k).as_deref() == Some(n))
            .map(|(_, v)| *v)
    };
    assert_eq!(get("jsonrpc"), Some("\"2.0\""), "response {resp}");
    let id = get("id").unwrap_or_else(|| panic!("response without id: {resp}"));
    assert!(
        matches!(id.as_bytes()[0], b'"' | b'-' | b'0'..=b'9' | b'n'),
        "response id of a wrong type: {resp}"
    );
    let code = match (get("result"), get("error")) {
        (Some(_), None) => {
            assert_eq!(names, ["id", "jsonrpc", "result"], "response {resp}");
            None
        }
        (None, Some(e)) => {
            assert_eq!(names, ["error", "id", "jsonrpc"], "response {resp}");
            let em = reference::members(e).unwrap_or_else(|| panic!("error not an object: {resp}"));
            let f = |n: &str| {
                em.iter()
                    .find(|(k, _)| *k == format!("\"{n}\""))
                    .map(|(_, v)| *v)
            };
            let code: i64 = f("code")
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("error code not an integer: {resp}"));
            assert!(
                f("message").is_some_and(|m| m.starts_with('"')),
                "error message not a string: {resp}"
            );
            assert!(em.len() <= 3, "extra members in the error object: {resp}");
            Some(code)
        }
        _ => panic!("response needs exactly one of result and error: {resp}; input {input:?}"),
    };
    (id, code)
}

/// Handles `input` with `session` and asserts the answer is what SPEC.md prescribes:
/// nothing exactly for notifications, responses and batches of them; otherwise one
/// valid JSON text of valid Response objects (never `[]`), one per request or invalid
/// element, in order, each echoing the id byte for byte.
pub fn check_session(session: &mut Session, input: &[u8]) {
    let cfg = *session.router().config();
    let (batch, expected) = expected_answers(input, &cfg);
    let resp = session.handle(input).map(<[u8]>::to_vec);
    let Some(resp) = resp else {
        assert!(
            expected.is_empty(),
            "no answer, but expected {expected:?}; input {:?}",
            String::from_utf8_lossy(input)
        );
        return;
    };
    assert!(
        !expected.is_empty(),
        "answered {:?} but expected silence; input {:?}",
        String::from_utf8_lossy(&resp),
        String::from_utf8_lossy(input)
    );
    assert!(
        switchboard_tests::reference_accepts_with_depth(&resp, usize::MAX),
        "response is not valid JSON: {:?}",
        String::from_utf8_lossy(&resp)
    );
    let text = std::str::from_utf8(&resp).expect("checked");
    let objects: Vec<&str> = if batch {
        reference::elements(text).unwrap_or_else(|| panic!("batch answer not an array: {text}"))
    } else {
        vec![text]
    };
    assert_ne!(objects.len(), 0, "[] is never sent");
    assert_eq!(
        objects.len(),
        expected.len(),
        "answers {text} vs expected {expected:?}; input {:?}",
        String::from_utf8_lossy(input)
    );
    for (obj, (id, code)) in objects.iter().zip(&expected) {
        let (got_id, got_code) = check_response_object(obj, input);
        assert_eq!(
            got_id.as_bytes(),
            *id,
            "echoed id in {obj}; input {input:?}"
        );
        if let Some(code) = code {
            assert_eq!(got_code, Some(i64::from(code.as_i32())), "code in {obj}");
        }
    }
}
