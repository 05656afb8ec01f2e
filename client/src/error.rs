//! What a call can fail with.

use std::fmt;

use switchboard::RawValue;

/// A JSON-RPC error object as the server sent it: `code`, `message` and the raw
/// JSON text of `data`, if any.
///
/// ```
/// use switchboard_client::ErrorObject;
/// let e = ErrorObject::new(-32601, "Method not found");
/// assert_eq!(e.to_string(), "-32601 Method not found");
/// assert_eq!(e.to_json(), r#"{"code":-32601,"message":"Method not found"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorObject {
    code: i64,
    message: String,
    data: Option<String>,
    raw: Option<String>,
}

impl ErrorObject {
    /// An error object with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
            raw: None,
        }
    }

    /// Reads an error object the parser validated (an object with an integer
    /// `code` and a string `message`); `None` if it is not one after all.
    pub(crate) fn from_raw(v: RawValue<'_>) -> Option<Self> {
        #[derive(serde::Deserialize)]
        struct Obj<'a> {
            code: i64,
            message: String,
            #[serde(borrow)]
            data: Option<&'a serde_json::value::RawValue>,
        }
        let o: Obj<'_> = serde_json::from_slice(v.as_bytes()).ok()?;
        Some(ErrorObject {
            code: o.code,
            message: o.message,
            data: o.data.map(|d| d.get().to_owned()),
            raw: Some(v.as_str().to_owned()),
        })
    }

    /// The error code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `data` member's JSON text, exactly as received.
    pub fn data_json(&self) -> Option<&str> {
        self.data.as_deref()
    }

    /// The whole error object as JSON: its exact text when it was received,
    /// else written out.
    pub fn to_json(&self) -> String {
        if let Some(raw) = &self.raw {
            return raw.clone();
        }
        let mut s = format!(
            "{{\"code\":{},\"message\":{}",
            self.code,
            serde_json::to_string(&self.message).unwrap_or_else(|_| "\"\"".into())
        );
        if let Some(d) = &self.data {
            s.push_str(",\"data\":");
            s.push_str(d);
        }
        s.push('}');
        s
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.code, self.message)?;
        if let Some(d) = &self.data {
            write!(f, " (data: {d})")?;
        }
        Ok(())
    }
}

/// Why a call failed.
///
/// ```
/// use switchboard_client::{Error, ErrorObject};
/// let e = Error::Rpc(ErrorObject::new(-32602, "Invalid params"));
/// assert_eq!(e.rpc().map(|o| o.code()), Some(-32602));
/// assert!(Error::Timeout.is_transport());
/// ```
#[derive(Debug)]
pub enum Error {
    /// The server answered with an error object.
    Rpc(ErrorObject),
    /// No answer within the call's timeout.
    Timeout,
    /// The connection could not be made, broke, or was closed.
    Transport(String),
    /// The HTTP server answered with a status other than 200 (or 204 for
    /// notifications): the status and the start of the body.
    Http {
        /// The status code.
        status: u16,
        /// Up to 1 KiB of the body, lossily decoded.
        body: String,
    },
    /// The answer is not a valid JSON-RPC response to what was sent (not JSON,
    /// another id, too large, a result of the wrong type...).
    InvalidResponse(String),
    /// The params could not be sent: not serializable, or not a JSON array or
    /// object.
    InvalidParams(String),
    /// The URL is not one this client speaks (`http://`, `ws://`), or the
    /// transport cannot do what was asked (a subscription over HTTP).
    Unsupported(String),
    /// A subscription's consumer did not keep up: its buffer filled, so the
    /// subscription was ended (and unsubscribed).
    Lagged,
}

impl Error {
    /// The error object, when the server answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc(o) => Some(o),
            _ => None,
        }
    }

    /// Whether the call failed on the way (transport, HTTP status, timeout)
    /// rather than being answered.
    pub fn is_transport(&self) -> bool {
        matches!(
            self,
            Error::Transport(_) | Error::Timeout | Error::Http { .. }
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(o) => write!(f, "the server answered with an error: {o}"),
            Error::Timeout => f.write_str("no answer in time"),
            Error::Transport(why) => write!(f, "transport: {why}"),
            Error::Http { status, body } => write!(f, "HTTP status {status}: {}", body.trim_end()),
            Error::InvalidResponse(why) => write!(f, "invalid response: {why}"),
            Error::InvalidParams(why) => write!(f, "invalid params: {why}"),
            Error::Unsupported(why) => write!(f, "unsupported: {why}"),
            Error::Lagged => f.write_str("the subscription's buffer filled: it was ended"),
        }
    }
}

impl std::error::Error for Error {}
