//! Writing JSON-RPC 2.0 envelopes: responses (success and error), error objects,
//! requests and notifications. The one place that knows their shape: the session,
//! the core's own errors, the server and the C ABI all write through it.
//!
//! Every function appends to a caller's `Vec<u8>` and allocates nothing beyond that
//! vector's growth. Ids, params, results and error data are raw JSON bytes, written
//! verbatim: **the caller guarantees they are valid JSON** (an [`Id`](crate::Id)'s
//! [`as_bytes`](crate::Id::as_bytes), a [`RawValue`](crate::RawValue)'s
//! [`as_bytes`](crate::RawValue::as_bytes) or `serde_json`'s output are). Method
//! names and messages are text, escaped here.
//!
//! ```
//! use switchboard::envelope;
//! let mut out = Vec::new();
//! envelope::request(&mut out, "subtract", Some(b"[42,23]"), b"1");
//! assert_eq!(out, br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#);
//! ```
#![forbid(unsafe_code)]

use crate::parse::{Error, Reason};
use crate::write;

/// `{"jsonrpc":"2.0",`: how every envelope starts.
pub(crate) const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",";

/// The name of a result member.
pub(crate) const RESULT: &[u8] = b"\"result\":";

/// [`HEAD`] and [`RESULT`], for one copy.
pub(crate) const HEAD_RESULT: &[u8] = b"{\"jsonrpc\":\"2.0\",\"result\":";

/// Appends a success response: `{"jsonrpc":"2.0","result":<result>,"id":<id>}`.
/// `result` and `id` are raw JSON, written verbatim (see the [module](self)).
///
/// ```
/// let mut out = Vec::new();
/// switchboard::envelope::response(&mut out, br#"{"balance":"0x1"}"#, br#""a""#);
/// assert_eq!(out, br#"{"jsonrpc":"2.0","result":{"balance":"0x1"},"id":"a"}"#);
/// ```
#[inline]
pub fn response(out: &mut Vec<u8>, result: &[u8], id: &[u8]) {
    out.extend_from_slice(HEAD_RESULT);
    out.extend_from_slice(result);
    end_response(out, id);
}

/// Appends an error response:
/// `{"jsonrpc":"2.0","error":{"code":…,"message":"…","data":…},"id":<id>}`, the
/// `data` member only when given. `message` is escaped; `data` and `id` are raw
/// JSON, written verbatim (see the [module](self)).
///
/// ```
/// let mut out = Vec::new();
/// switchboard::envelope::error_response(&mut out, 42, "insufficient \"funds\"", Some(br#"{"missing":5}"#), b"7");
/// assert_eq!(out, br#"{"jsonrpc":"2.0","error":{"code":42,"message":"insufficient \"funds\"","data":{"missing":5}},"id":7}"#);
/// out.clear();
/// switchboard::envelope::error_response(&mut out, -32000, "busy", None, b"null");
/// assert_eq!(out, br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"busy"},"id":null}"#);
/// ```
pub fn error_response(out: &mut Vec<u8>, code: i32, message: &str, data: Option<&[u8]>, id: &[u8]) {
    out.extend_from_slice(HEAD);
    error_member(out, code, message, data);
    end_response(out, id);
}

/// Appends the response to a core error ([`Error`]: a message the parser refused,
/// or an unknown method): `{"jsonrpc":"2.0","error":{"code":…,"message":…,`
/// `"data":{…}},"id":…}`, the id the error's [`Error::id`], the data its
/// [`Error::data`]. Exactly the bytes a [`Session`](crate::Session) answers it
/// with; the static part, laid out at compile time for each [`Reason`], in one
/// copy.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":1,"id":7}"#) else {
///     panic!()
/// };
/// let mut out = Vec::new();
/// switchboard::envelope::core_error_response(&mut out, &e);
/// assert_eq!(out, br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"field":"method","reason":"must be a string"}},"id":7}"#);
/// ```
#[inline(always)]
pub fn core_error_response(out: &mut Vec<u8>, error: &Error<'_>) {
    let head = &RESPONSE_HEADS[error.reason().index()];
    let len = out.len();
    out.extend_from_slice(&head.bytes);
    out.truncate(len + head.len);
    if error.limit.is_none() && error.id().as_bytes() == b"null" {
        const END: &[u8; 13] = b"}},\"id\":null}";
        match error.offset {
            None => return out.extend_from_slice(END),
            Some(o) if o < 100 => {
                // `,"offset":` and one or two digits, then the end, laid out
                // in one fixed-size array and cut to length.
                let mut tail = *b",\"offset\":00}},\"id\":null}\0\0\0\0\0\0\0";
                let n = if o < 10 {
                    tail[10] = b'0' + o as u8;
                    11
                } else {
                    tail[10] = b'0' + (o / 10) as u8;
                    tail[11] = b'0' + (o % 10) as u8;
                    12
                };
                tail[n..n + 13].copy_from_slice(END);
                let len = out.len();
                out.extend_from_slice(&tail);
                out.truncate(len + n + 13);
                return;
            }
            Some(_) => {}
        }
    }
    core_error_response_end(out, error);
}

/// [`core_error_response`] after the head, in general.
#[inline(never)]
fn core_error_response_end(out: &mut Vec<u8>, error: &Error<'_>) {
    if error.offset.is_some() || error.limit.is_some() {
        core_error_numbers(out, error);
    }
    out.extend_from_slice(b"}},\"id\":");
    out.extend_from_slice(error.id().as_bytes());
    out.push(b'}');
}

/// Appends a core error's response up to its id member:
/// `{"jsonrpc":"2.0","error":{"code":…,"message":…,"data":{…}}` (the static
/// part in one copy, then the offset and limit, if any). The tests' reference
/// for [`core_error_response`].
#[cfg(test)]
pub(crate) fn core_error_response_head(out: &mut Vec<u8>, error: &Error<'_>) {
    core_error_from(out, error, 0);
}

/// Appends a core error's `"error":{…}` member alone (the bytes after [`HEAD`]
/// in its response).
#[inline]
pub(crate) fn core_error_member(out: &mut Vec<u8>, error: &Error<'_>) {
    core_error_from(out, error, HEAD.len());
}

#[inline(always)]
fn core_error_from(out: &mut Vec<u8>, error: &Error<'_>, from: usize) {
    let head = &RESPONSE_HEADS[error.reason().index()];
    if from == 0 {
        // The whole fixed-size array (a copy of constant length, which the
        // compiler may still make a `memcpy` call for an array this size),
        // the excess cut off again: no copy of a run-time length.
        let len = out.len();
        out.extend_from_slice(&head.bytes);
        out.truncate(len + head.len);
    } else {
        out.extend_from_slice(&head.bytes[from..head.len]);
    }
    if error.offset.is_some() || error.limit.is_some() {
        core_error_numbers(out, error);
    }
    out.extend_from_slice(b"}}");
}

fn core_error_numbers(out: &mut Vec<u8>, error: &Error<'_>) {
    if let Some(o) = error.offset {
        out.extend_from_slice(b",\"offset\":");
        write::write_u64(out, o as u64);
    }
    if let Some(l) = error.limit {
        out.extend_from_slice(b",\"limit\":");
        write::write_u64(out, l as u64);
    }
}

/// Appends an error member, `"error":{"code":…,"message":"…","data":…}` (no
/// braces around it: the member of a response object), the `data` member only
/// when given. `message` is escaped; `data` is raw JSON, written verbatim (see
/// the [module](self)).
///
/// ```
/// let mut out = b"{".to_vec();
/// switchboard::envelope::error_member(&mut out, -32602, "Invalid params", Some(br#"{"field":"params"}"#));
/// assert_eq!(out, br#"{"error":{"code":-32602,"message":"Invalid params","data":{"field":"params"}}"#);
/// ```
#[inline]
pub fn error_member(out: &mut Vec<u8>, code: i32, message: &str, data: Option<&[u8]>) {
    out.extend_from_slice(b"\"error\":");
    error_object(out, code, message, data);
}

/// Appends an error object, `{"code":…,"message":"…","data":…}`, the `data`
/// member only when given. `message` is escaped; `data` is raw JSON, written
/// verbatim (see the [module](self)).
///
/// ```
/// let mut out = Vec::new();
/// switchboard::envelope::error_object(&mut out, 7, "line\nbreak", None);
/// assert_eq!(out, br#"{"code":7,"message":"line\nbreak"}"#);
/// ```
#[inline]
pub fn error_object(out: &mut Vec<u8>, code: i32, message: &str, data: Option<&[u8]>) {
    out.extend_from_slice(b"{\"code\":");
    write::write_i64(out, code as i64);
    out.extend_from_slice(b",\"message\":");
    write::write_str_escaped(out, message);
    if let Some(d) = data {
        out.extend_from_slice(b",\"data\":");
        out.extend_from_slice(d);
    }
    out.push(b'}');
}

/// Appends a request: `{"jsonrpc":"2.0","method":"…","params":…,"id":<id>}`, the
/// `params` member only when given. `method` is escaped; `params` (an array or an
/// object) and `id` (a string, a number or `null`) are raw JSON, written verbatim
/// (see the [module](self)).
///
/// ```
/// let mut out = Vec::new();
/// switchboard::envelope::request(&mut out, "eth_blockNumber", None, br#""req-1""#);
/// assert_eq!(out, br#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":"req-1"}"#);
/// ```
pub fn request(out: &mut Vec<u8>, method: &str, params: Option<&[u8]>, id: &[u8]) {
    call_head(out, method, params);
    end_response(out, id);
}

/// Appends a notification: `{"jsonrpc":"2.0","method":"…","params":…}`, the
/// `params` member only when given. `method` is escaped; `params` (an array or an
/// object) is raw JSON, written verbatim (see the [module](self)).
///
/// ```
/// let mut out = Vec::new();
/// switchboard::envelope::notification(&mut out, "notifications/progress", Some(br#"{"progress":50}"#));
/// assert_eq!(out, br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":50}}"#);
/// ```
pub fn notification(out: &mut Vec<u8>, method: &str, params: Option<&[u8]>) {
    call_head(out, method, params);
    out.push(b'}');
}

/// A request or notification up to its id: `{"jsonrpc":"2.0","method":…` and the
/// params member, if any.
fn call_head(out: &mut Vec<u8>, method: &str, params: Option<&[u8]>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write::write_str_escaped(out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(p);
    }
}

/// Appends `,"id":`, the id's raw bytes and `}`, ending an envelope: one
/// fixed-size copy for ids up to 16 bytes (numbers, short strings), no `memcpy`
/// call; longer ones take a call.
#[inline(always)]
pub(crate) fn end_response(out: &mut Vec<u8>, id: &[u8]) {
    if id.len() <= 16 {
        let mut buf = [b'}'; 23];
        buf[..6].copy_from_slice(b",\"id\":");
        let n = write::copy_short(&mut buf[6..22], id);
        write::extend_prefix(out, &buf, n + 7);
        return;
    }
    end_response_long(out, id);
}

/// [`end_response`] for ids longer than 16 bytes.
#[inline(never)]
fn end_response_long(out: &mut Vec<u8>, id: &[u8]) {
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id);
    out.push(b'}');
}

/// The start of a response a core error is answered with, the same for every
/// error of one reason: `{"jsonrpc":"2.0","error":{"code":…,"message":"…",`
/// `"data":{"field":"…","reason":"…"` (laid out at compile time, written with one
/// copy). The optional `offset` and `limit`, the closing braces and the id follow.
struct ResponseHead {
    bytes: [u8; RESPONSE_HEAD_CAP],
    len: usize,
}

const RESPONSE_HEAD_CAP: usize = 192;

impl ResponseHead {
    const fn put(mut self, s: &[u8]) -> Self {
        let mut i = 0;
        while i < s.len() {
            self.bytes[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// `s` escaped as a JSON string body; static texts hold no control or
    /// non-ASCII byte (checked here, at compile time).
    const fn put_escaped(mut self, s: &[u8]) -> Self {
        let mut i = 0;
        while i < s.len() {
            let c = s[i];
            assert!(
                c >= 0x20 && c < 0x80,
                "static error texts are printable ASCII"
            );
            if c == b'"' || c == b'\\' {
                self = self.put(b"\\");
            }
            self = self.put(&[c]);
            i += 1;
        }
        self
    }

    const fn put_i32(self, v: i32) -> Self {
        let mut digits = [0u8; 11];
        let mut n = 0;
        let mut u = v.unsigned_abs();
        loop {
            digits[n] = b'0' + (u % 10) as u8;
            n += 1;
            u /= 10;
            if u == 0 {
                break;
            }
        }
        let mut this = if v < 0 { self.put(b"-") } else { self };
        while n > 0 {
            n -= 1;
            this = this.put(&[digits[n]]);
        }
        this
    }

    const fn of(r: Reason) -> Self {
        let head = ResponseHead {
            bytes: [0; RESPONSE_HEAD_CAP],
            len: 0,
        };
        let code = r.code();
        let head = head
            .put(HEAD)
            .put(b"\"error\":{\"code\":")
            .put_i32(code.as_i32())
            .put(b",\"message\":\"")
            .put_escaped(code.message().as_bytes())
            .put(b"\",\"data\":{");
        let head = match r.field() {
            Some(f) => head
                .put(b"\"field\":\"")
                .put_escaped(f.name().as_bytes())
                .put(b"\","),
            None => head,
        };
        head.put(b"\"reason\":\"")
            .put_escaped(r.as_str().as_bytes())
            .put(b"\"")
    }

    /// The head of every reason's response, in [`Reason::ALL`] order.
    const ALL: [ResponseHead; 34] = {
        let mut t = [const {
            ResponseHead {
                bytes: [0; RESPONSE_HEAD_CAP],
                len: 0,
            }
        }; 34];
        let mut i = 0;
        while i < t.len() {
            t[i] = ResponseHead::of(Reason::ALL[i]);
            i += 1;
        }
        t
    };
}

static RESPONSE_HEADS: [ResponseHead; 34] = ResponseHead::ALL;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RpcError;

    /// The general error writers give the bytes `serde_json` gives for the same
    /// object, and agree with the core's static heads where both apply.
    #[test]
    fn error_objects_match_serde_json() {
        for (code, message, data) in [
            (0, "", None),
            (
                i32::MIN,
                "a \"quoted\" \\ message\n\u{1}é",
                Some(&b"[1,{\"a\":null}]"[..]),
            ),
            (i32::MAX, "x", Some(&b"null"[..])),
            (
                -32603,
                "Internal error",
                Some(&b"{\"reason\":\"the handler panicked\"}"[..]),
            ),
        ] {
            let mut want = serde_json::json!({ "code": code, "message": message });
            if let Some(d) = data {
                want["data"] = serde_json::from_slice(d).unwrap();
            }
            let mut obj = Vec::new();
            error_object(&mut obj, code, message, data);
            let got: serde_json::Value = serde_json::from_slice(&obj).unwrap();
            assert_eq!(got, want);
            // serde_json keeps insertion order only with a feature; compare text
            // for the member order this crate promises.
            assert!(obj.starts_with(format!("{{\"code\":{code},\"message\":").as_bytes()));
            let mut resp = Vec::new();
            error_response(&mut resp, code, message, data, b"\"id\"");
            let mut member = Vec::new();
            error_member(&mut member, code, message, data);
            assert_eq!(resp, [HEAD, &member[..], b",\"id\":\"id\"}"].concat());
            assert_eq!(member, [&b"\"error\":"[..], &obj].concat());
            let mut rpc = Vec::new();
            let mut e = RpcError::new(code, message.to_owned());
            if let Some(d) = data {
                e = e.with_data_json(String::from_utf8(d.to_vec()).unwrap());
            }
            e.write_member(&mut rpc);
            assert_eq!(rpc, member);
        }
    }

    /// Requests, notifications and responses, for ids and params of every kind.
    #[test]
    fn calls_and_responses() {
        let mut out = Vec::new();
        for id in [
            &b"1"[..],
            b"null",
            b"\"a-long-string-id-of-many-bytes\"",
            b"-1.5e3",
        ] {
            for params in [None, Some(&b"[]"[..]), Some(b"{\"a\":[1,2]}")] {
                out.clear();
                request(&mut out, "a\"b", params, id);
                let mut want = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"b\"".to_vec();
                if let Some(p) = params {
                    want.extend_from_slice(b",\"params\":");
                    want.extend_from_slice(p);
                }
                let note = [&want[..], b"}"].concat();
                want.extend_from_slice(b",\"id\":");
                want.extend_from_slice(id);
                want.push(b'}');
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&want)
                );
                out.clear();
                notification(&mut out, "a\"b", params);
                assert_eq!(out, note);
            }
            out.clear();
            response(&mut out, b"[true]", id);
            assert_eq!(
                out,
                [
                    &b"{\"jsonrpc\":\"2.0\",\"result\":[true],\"id\":"[..],
                    id,
                    b"}"
                ]
                .concat()
            );
        }
    }
}
