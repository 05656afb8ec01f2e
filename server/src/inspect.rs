//! `switchboard inspect`: one JSON object describing what the parser sees.

use std::fmt::Write as _;

use switchboard::{Error, Item, Message, Parser};

/// Describes `input` as one line of JSON:
/// `{"kind":"request","method":…,"id":<raw id>,"params":<raw params>}`, `"notification"`,
/// `"response"`, `{"kind":"batch","items":[…]}` or
/// `{"kind":"error","code":-32700,"message":…,"id":…,"data":{…}}`.
/// Ids and params are the message's exact bytes.
///
/// ```
/// let mut parser = switchboard::Parser::new();
/// let out = switchboard_server::inspect::describe(&mut parser, br#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[42,23],"id":1.0}"#);
/// assert_eq!(out, r#"{"kind":"request","method":"subtract","id":1.0,"params":[42,23]}"#);
/// ```
pub fn describe(parser: &mut Parser, input: &[u8]) -> String {
    let mut out = String::new();
    match parser.parse(input) {
        Message::Batch(b) => {
            out.push_str(r#"{"kind":"batch","items":["#);
            for (i, item) in b.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                describe_item(&mut out, item);
            }
            out.push_str("]}");
        }
        Message::Request(r) => describe_item(&mut out, Item::Request(r)),
        Message::Notification(n) => describe_item(&mut out, Item::Notification(n)),
        Message::Response(r) => describe_item(&mut out, Item::Response(r)),
        Message::Error(e) => describe_error(&mut out, &e),
    }
    out
}

fn json_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a str always serializes"));
}

fn describe_item(out: &mut String, item: Item<'_>) {
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
        Item::Error(e) => describe_error(out, &e),
    }
}

fn describe_error(out: &mut String, e: &Error<'_>) {
    let _ = write!(
        out,
        r#"{{"kind":"error","code":{},"message":"{}","id":{},"data":{}}}"#,
        e.code().as_i32(),
        e.code().message(),
        e.id().as_str(),
        e.data()
    );
}
