//! What the parser sees in one message, as one line of JSON: `switchboard
//! inspect`'s description (`inspect.rs` reads the input and prints), and the
//! playground's `inspect` (playground/src/lib.rs includes this file).

use std::fmt::Write as _;

use switchboard::{Error, Item, Message, Parser};

/// What a description found besides its text.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The message, or an item of its batch, was rejected.
    pub(crate) rejected: bool,
    /// The byte offsets the errors point at.
    pub(crate) offsets: Vec<usize>,
}

/// Describes `input` as one line of JSON:
/// `{"kind":"request","method":…,"id":<raw id>,"params":<raw params>}`, `"notification"`,
/// `"response"`, `{"kind":"batch","items":[…]}` or
/// `{"kind":"error","code":-32700,"message":…,"id":…,"data":{…}}`.
/// Ids and params are the message's exact bytes.
#[cfg_attr(
    not(test),
    allow(
        dead_code,
        reason = "the playground's entry point (it includes this file)"
    )
)]
pub(crate) fn describe(parser: &mut Parser, input: &[u8]) -> String {
    describe_into(parser, input, &mut Found::default())
}

pub(crate) fn describe_into(parser: &mut Parser, input: &[u8], found: &mut Found) -> String {
    let mut out = String::new();
    match parser.parse(input) {
        Message::Batch(b) => {
            out.push_str(r#"{"kind":"batch","items":["#);
            for (i, item) in b.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                describe_item(&mut out, item, found);
            }
            out.push_str("]}");
        }
        Message::Request(r) => describe_item(&mut out, Item::Request(r), found),
        Message::Notification(n) => describe_item(&mut out, Item::Notification(n), found),
        Message::Response(r) => describe_item(&mut out, Item::Response(r), found),
        Message::Error(e) => describe_error(&mut out, &e, found),
    }
    out
}

fn json_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a str always serializes"));
}

fn describe_item(out: &mut String, item: Item<'_>, found: &mut Found) {
    match item {
        Item::Request(r) => {
            out.push_str(r#"{"kind":"request","method":"#);
            json_str(out, r.method().as_str());
            if !r.method().is_exact() {
                out.push_str(r#","method_exact":false"#);
            }
            let _ = write!(out, r#","id":{}"#, r.id().as_str());
            if let Some(p) = r.params() {
                let _ = write!(out, r#","params":{}"#, p.as_str());
            }
            out.push('}');
        }
        Item::Notification(n) => {
            out.push_str(r#"{"kind":"notification","method":"#);
            json_str(out, n.method().as_str());
            if !n.method().is_exact() {
                out.push_str(r#","method_exact":false"#);
            }
            if let Some(p) = n.params() {
                let _ = write!(out, r#","params":{}"#, p.as_str());
            }
            out.push('}');
        }
        Item::Response(r) => {
            let _ = write!(out, r#"{{"kind":"response","id":{}"#, r.id().as_str());
            match r.outcome() {
                Ok(v) => {
                    let _ = write!(out, r#","result":{v}}}"#);
                }
                Err(v) => {
                    let _ = write!(out, r#","error":{v}}}"#);
                }
            }
        }
        Item::Error(e) => describe_error(out, &e, found),
    }
}

fn describe_error(out: &mut String, e: &Error<'_>, found: &mut Found) {
    let data = e.data().to_string();
    found.rejected = true;
    // The core writes the offset as `,"offset":N` (digits only).
    if let Some((_, rest)) = data.split_once(r#","offset":"#) {
        let digits = rest.split(|c: char| !c.is_ascii_digit()).next();
        if let Some(at) = digits.and_then(|d| d.parse().ok()) {
            found.offsets.push(at);
        }
    }
    let _ = write!(
        out,
        r#"{{"kind":"error","code":{},"message":"{}","id":{},"data":{data}}}"#,
        e.code().as_i32(),
        e.code().message(),
        e.id().as_str(),
    );
}
