//! Answers, classified by switchboard's parser without copying: a result is
//! kept as the received message plus the span of its `result` member.

use std::cell::RefCell;
use std::fmt;

use bytes::Bytes;
use serde::Deserialize;
use switchboard::{Id, Item, Message, Parser, ParserConfig, RawValue, Response};

use crate::{Error, ErrorObject};

/// A call's result, borrowed from the message it came in: no copy, no
/// conversion until asked for.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # // A server in this process, on a free port.
/// # let router = switchboard::Router::builder()
/// #     .typed("subtract", |(a, b): (i64, i64)| Ok(a - b))
/// #     .method("block", |_, out| out.raw_json(br#"{"number":"0x1b4","hash":"0xdc0818cf"}"#))
/// #     .build()?;
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let url = format!("http://{}/", listener.local_addr()?);
/// # let service = switchboard_server::http::Switchboard::new(router);
/// # tokio::spawn(switchboard_server::http::serve(listener, service, std::future::pending()));
/// # let client = switchboard_client::Client::connect(&url).await?;
/// let r = client.request_raw("subtract", &[42, 23]).await?;
/// assert_eq!(r.as_str(), "19");
/// let n: i64 = r.parse()?;
/// assert_eq!(n, 19);
/// // Read in place: one member, the rest never converted...
/// let block = client.request_raw("block", &()).await?;
/// assert_eq!(block.as_raw().get("number").unwrap().as_plain_str(), Some("0x1b4"));
/// // ... or deserialized into a type that borrows from the answer.
/// #[derive(serde::Deserialize)]
/// struct Block<'a> {
///     number: &'a str,
///     hash: &'a str,
/// }
/// let b: Block<'_> = block.parse()?;
/// assert_eq!((b.number, b.hash), ("0x1b4", "0xdc0818cf"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RawResponse {
    message: Bytes,
    start: usize,
    end: usize,
}

impl RawResponse {
    /// `value` is a slice of `message`.
    pub(crate) fn new(message: &Bytes, value: &[u8]) -> Self {
        let start = value.as_ptr() as usize - message.as_ptr() as usize;
        RawResponse {
            message: message.clone(),
            start,
            end: start + value.len(),
        }
    }

    /// The result's exact bytes as received.
    pub fn as_bytes(&self) -> &[u8] {
        &self.message[self.start..self.end]
    }

    /// The result's exact text as received (the parser validated it as UTF-8).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or("null")
    }

    /// The result as switchboard's raw value (kind, members, elements, typed
    /// reads that borrow).
    pub fn as_raw(&self) -> RawValue<'_> {
        // Validated by the parser as one JSON value (never empty).
        RawValue::from_validated(self.as_bytes()).expect("a result is never empty")
    }

    /// Deserializes the result, borrowing from it where `T` does (`&str`,
    /// `RawValue`).
    ///
    /// # Errors
    /// [`Error::InvalidResponse`] when the result does not fit `T`.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> Result<T, Error> {
        self.as_raw()
            .parse()
            .map_err(|e| Error::InvalidResponse(format!("the result: {}", e.detail())))
    }

    /// The whole message the result came in (a batch's whole array).
    pub fn message(&self) -> &[u8] {
        &self.message
    }
}

impl fmt::Debug for RawResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RawResponse({})",
            String::from_utf8_lossy(self.as_bytes())
        )
    }
}

impl PartialEq<str> for RawResponse {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for RawResponse {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

/// The parser configuration for answers: the transport bounds the size, so
/// only the nesting is limited here.
fn parser() -> Parser {
    let mut c = ParserConfig::new();
    c.max_message_bytes(ParserConfig::MAX_MESSAGE_BYTES_CAP)
        .max_batch_len(usize::MAX);
    Parser::with_config(c)
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(parser());
}

/// Runs `f` with this thread's parser (never across an await).
pub(crate) fn with_parser<R>(f: impl FnOnce(&mut Parser) -> R) -> R {
    PARSER.with(|p| match p.try_borrow_mut() {
        Ok(mut p) => f(&mut p),
        // Re-entered (a handler of a server's request answering inside a
        // classification): a parser of its own.
        Err(_) => f(&mut parser()),
    })
}

/// The id this client sent, when `id`'s bytes are exactly those of one: the
/// ids are written in canonical decimal, so `7` matches and `7.0`, `"7"` or
/// `07` do not.
pub(crate) fn sent_id(id: Id<'_>) -> Option<u64> {
    let b = id.as_bytes();
    if b.is_empty() || b.len() > 20 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let mut n: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(n)
}

/// The outcome a response carries.
pub(crate) fn outcome(message: &Bytes, r: &Response<'_>) -> Result<RawResponse, Error> {
    match r.outcome() {
        Ok(v) => Ok(RawResponse::new(message, v.as_bytes())),
        Err(e) => Err(rpc_error(e)),
    }
}

fn rpc_error(e: RawValue<'_>) -> Error {
    ErrorObject::from_raw(e).map_or_else(
        || Error::InvalidResponse(format!("unreadable error object {}", e.as_str())),
        Error::Rpc,
    )
}

fn what(m: &Message<'_>) -> String {
    match m {
        Message::Request(_) => "a request".into(),
        Message::Notification(_) => "a notification".into(),
        Message::Response(_) => "a response".into(),
        Message::Batch(_) => "a batch".into(),
        Message::Error(e) => format!("not a JSON-RPC message ({e})"),
    }
}

/// The answer to the one request `id`.
pub(crate) fn single(message: Bytes, id: u64) -> Result<RawResponse, Error> {
    with_parser(|p| match p.parse(&message) {
        Message::Response(r) if sent_id(r.id()) == Some(id) => outcome(&message, &r),
        // The server could not read the request: its error, with a null id.
        Message::Response(r) if r.id().is_null() && r.error().is_some() => {
            outcome(&message, &r).map(|_| unreachable!("an error"))
        }
        Message::Response(r) => Err(Error::InvalidResponse(format!(
            "the response's id {} is not the request's {id}",
            r.id().as_str()
        ))),
        other => Err(Error::InvalidResponse(format!(
            "expected a response, got {}",
            what(&other)
        ))),
    })
}

/// The answers to the `n` requests of a batch, whose ids are `base..base + n`,
/// in that order whatever order they came in.
pub(crate) fn batch(
    message: Bytes,
    base: u64,
    n: usize,
) -> Result<Vec<Result<RawResponse, Error>>, Error> {
    let mut out: Vec<Option<Result<RawResponse, Error>>> = (0..n).map(|_| None).collect();
    let mut put = |r: &Response<'_>| -> bool {
        let Some(i) = sent_id(r.id())
            .and_then(|id| id.checked_sub(base))
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < n)
        else {
            return false;
        };
        if out[i].is_none() {
            out[i] = Some(outcome(&message, r));
        }
        true
    };
    with_parser(|p| match p.parse(&message) {
        Message::Batch(b) => {
            for item in b.iter() {
                match item {
                    Item::Response(r) => {
                        // A null-id error answers an element the server could
                        // not read: it matches none of ours.
                        let _ = put(&r);
                    }
                    Item::Error(e) => {
                        return Err(Error::InvalidResponse(format!(
                            "a batch element is not a response ({e})"
                        )));
                    }
                    _ => {
                        return Err(Error::InvalidResponse(
                            "a batch element is a request or notification, not a response".into(),
                        ));
                    }
                }
            }
            Ok(())
        }
        Message::Response(r) => {
            if put(&r) {
                Ok(())
            } else {
                // The batch as a whole was refused (too long, unreadable).
                Err(outcome(&message, &r).map_or_else(
                    |e| e,
                    |_| Error::InvalidResponse("a result for no request of the batch".into()),
                ))
            }
        }
        other => Err(Error::InvalidResponse(format!(
            "expected a batch of responses, got {}",
            what(&other)
        ))),
    })?;
    Ok(out
        .into_iter()
        .map(|o| {
            o.unwrap_or_else(|| Err(Error::InvalidResponse("no answer to this request".into())))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn ids_match_by_their_exact_bytes() {
        let mut p = Parser::new();
        for (id, want) in [
            ("7", Some(7)),
            ("0", Some(0)),
            ("18446744073709551615", Some(u64::MAX)),
            ("18446744073709551616", None),
            ("7.0", None),
            ("7e0", None),
            ("-7", None),
            (r#""7""#, None),
            ("null", None),
        ] {
            let msg = format!(r#"{{"jsonrpc":"2.0","result":1,"id":{id}}}"#);
            let Message::Response(r) = p.parse(msg.as_bytes()) else {
                panic!("{msg}")
            };
            assert_eq!(sent_id(r.id()), want, "{id}");
        }
    }

    #[test]
    fn a_single_answer_is_its_result_or_its_error() {
        let r = single(b(r#"{"jsonrpc":"2.0","result":{"a":[1, 2]},"id":3}"#), 3).unwrap();
        assert_eq!(r, r#"{"a":[1, 2]}"#);
        assert_eq!(r.as_raw().get("a").unwrap().as_str(), "[1, 2]");
        let e = single(
            b(r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"m":"x"}},"id":3}"#),
            3,
        )
        .unwrap_err();
        let o = e.rpc().unwrap();
        assert_eq!(
            (o.code(), o.message(), o.data_json()),
            (-32601, "Method not found", Some(r#"{"m":"x"}"#))
        );
        assert_eq!(
            o.to_json(),
            r#"{"code":-32601,"message":"Method not found","data":{"m":"x"}}"#
        );
        // The server's answer to what it could not read.
        let e = single(
            b(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}"#),
            3,
        );
        assert_eq!(e.unwrap_err().rpc().unwrap().code(), -32700);
    }

    #[test]
    fn a_wrong_answer_is_an_invalid_response() {
        for bad in [
            r#"{"jsonrpc":"2.0","result":1,"id":4}"#,
            r#"{"jsonrpc":"2.0","result":1,"id":"3"}"#,
            r#"{"jsonrpc":"2.0","result":1,"id":null}"#,
            r#"{"jsonrpc":"2.0","method":"m","id":3}"#,
            r#"[{"jsonrpc":"2.0","result":1,"id":3}]"#,
            r#"{"jsonrpc":"2.0","error":{"code":"x","message":"m"},"id":3}"#,
            "<html>",
            "",
        ] {
            match single(b(bad), 3) {
                Err(Error::InvalidResponse(_)) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn batch_answers_come_back_in_request_order() {
        let msg = b(concat!(
            r#"[{"jsonrpc":"2.0","result":"c","id":12},"#,
            r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"no"},"id":10},"#,
            r#"{"jsonrpc":"2.0","result":"other","id":99},"#,
            r#"{"jsonrpc":"2.0","result":"a-again","id":12}]"#
        ));
        let out = batch(msg, 10, 3).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().rpc().unwrap().code(), -1);
        assert!(
            matches!(out[1], Err(Error::InvalidResponse(_))),
            "no answer for 11"
        );
        assert_eq!(out[2].as_ref().unwrap(), "\"c\"");
        // Refused as a whole.
        let e = batch(
            b(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}"#),
            10,
            3,
        );
        assert_eq!(e.unwrap_err().rpc().unwrap().code(), -32600);
        // Not responses.
        assert!(matches!(
            batch(b(r#"[{"jsonrpc":"2.0","method":"m"}]"#), 10, 1),
            Err(Error::InvalidResponse(_))
        ));
        assert!(matches!(
            batch(b("[1]"), 10, 1),
            Err(Error::InvalidResponse(_))
        ));
    }
}
