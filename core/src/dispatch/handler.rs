//! What a handler receives ([`Call`]), how it answers ([`ResultWriter`]) and how
//! it fails ([`RpcError`]).

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use crate::connection::{CancellationToken, Connection};
use crate::params::Params;
use crate::parse::{Code, Id, Method, Reason};
use crate::write;

/// One call as a handler sees it: borrowed views into the message.
///
/// ```
/// use switchboard::{Router, Session};
/// let router = Router::builder()
///     .method("describe", |call, out| {
///         let id = call.id().map_or("none".to_owned(), |id| id.as_str().to_owned());
///         let n = call.params().map_or(0, |p| p.iter().count());
///         out.str(&format!("{} id={id} params={n}", call.method()))
///     })
///     .method("log", |call, out| {
///         assert!(call.is_notification()); // its answer is discarded
///         out.null()
///     })
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"describe","params":[1,2],"id":"x"}"#);
/// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"describe id=\"x\" params=2","id":"x"}"#);
/// assert!(session.handle(br#"{"jsonrpc":"2.0","method":"log"}"#).is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub(crate) method: Method<'a>,
    pub(crate) id: Option<Id<'a>>,
    pub(crate) params: Option<Params<'a>>,
    /// The connection the call came on, when the session is attached to one.
    pub(crate) conn: Option<&'a Connection>,
    /// An async call's cancellation token (set only while its future is made).
    pub(crate) token: Option<&'a CancellationToken>,
}

impl<'a> Call<'a> {
    /// The method name.
    #[inline]
    pub fn method(&self) -> Method<'a> {
        self.method
    }

    /// The id (raw bytes), or `None` for a notification.
    #[inline]
    pub fn id(&self) -> Option<Id<'a>> {
        self.id
    }

    /// The params; `None` when absent or `null`.
    #[inline]
    pub fn params(&self) -> Option<Params<'a>> {
        self.params
    }

    /// Whether this call is a notification (its answer is discarded).
    #[inline]
    pub fn is_notification(&self) -> bool {
        self.id.is_none()
    }

    /// The connection this call came on: its id, per-connection state and the
    /// [`Peer`](crate::connection::Peer) that talks back to the client; `None`
    /// when the session is attached to none ([`Session::attach`](crate::Session::attach)).
    ///
    /// ```
    /// use switchboard::connection::{Connection, ConnectionConfig};
    /// use switchboard::{Router, Session};
    /// struct User(String);
    /// let router = Router::builder()
    ///     .method("whoami", |call, out| {
    ///         let conn = call.connection().expect("attached");
    ///         match conn.extensions().get::<User>() {
    ///             Some(u) => out.str(&u.0),
    ///             None => out.null(),
    ///         }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
    /// conn.extensions().insert(User("ada".into())); // set by the transport, say
    /// let mut session = Session::new(router);
    /// session.attach(conn);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"whoami","id":1}"#).unwrap();
    /// assert_eq!(resp, br#"{"jsonrpc":"2.0","result":"ada","id":1}"#);
    /// ```
    #[inline]
    pub fn connection(&self) -> Option<&'a Connection> {
        self.conn
    }
}

/// An error a handler answers with: code, message and optional `data` (raw JSON).
///
/// Application errors use codes outside -32768..-32000 and put machine-readable
/// detail in `data`.
///
/// ```
/// use switchboard::RpcError;
/// let e = RpcError::new(42, "insufficient funds").with_data(&serde_json::json!({"missing": 5}));
/// assert_eq!(e.code(), 42);
/// assert_eq!(e.data_json(), Some(r#"{"missing":5}"#));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    code: i32,
    message: Cow<'static, str>,
    data: Option<Cow<'static, str>>,
}

impl RpcError {
    /// An error with `code` and a one-sentence `message` (a `&'static str` allocates nothing).
    pub fn new(code: i32, message: impl Into<Cow<'static, str>>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`, serialized to JSON. If `data` cannot be serialized (a map
    /// with non-string keys, a `Serialize` impl that fails), `data` says so
    /// instead: `{"reason":"the error data could not be serialized","detail":…}`;
    /// [`RpcError::try_with_data`] hands the failure back instead.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use switchboard::RpcError;
    /// let e = RpcError::new(42, "insufficient funds").with_data(&serde_json::json!({"missing": 5}));
    /// assert_eq!(e.data_json(), Some(r#"{"missing":5}"#));
    /// // JSON object keys must be strings: this map cannot be written.
    /// let bad: BTreeMap<(u8, u8), u8> = BTreeMap::from([((1, 2), 3)]);
    /// let e = RpcError::new(42, "insufficient funds").with_data(&bad);
    /// let data: serde_json::Value = serde_json::from_str(e.data_json().unwrap()).unwrap();
    /// assert_eq!(data["reason"], "the error data could not be serialized");
    /// assert!(RpcError::new(42, "x").try_with_data(&bad).is_err());
    /// ```
    pub fn with_data<T: Serialize + ?Sized>(self, data: &T) -> Self {
        match serde_json::to_string(data) {
            Ok(json) => RpcError {
                data: Some(Cow::Owned(json)),
                ..self
            },
            Err(e) => {
                let why = serde_json::json!({
                    "reason": "the error data could not be serialized",
                    "detail": e.to_string(),
                });
                RpcError {
                    data: Some(Cow::Owned(why.to_string())),
                    ..self
                }
            }
        }
    }

    /// Adds `data`, serialized to JSON, or says why it cannot be.
    pub fn try_with_data<T: Serialize + ?Sized>(self, data: &T) -> Result<Self, serde_json::Error> {
        let json = serde_json::to_string(data)?;
        Ok(RpcError {
            data: Some(Cow::Owned(json)),
            ..self
        })
    }

    /// Adds `data` given as JSON text (a `&'static str` allocates nothing). Text
    /// that is not exactly one valid JSON value is never written as it is: as
    /// with [`RpcError::with_data`], `data` then says so
    /// (`{"reason":"the error data is not one JSON value","detail":<the text as a string>}`),
    /// so the client still gets valid JSON and the mistake shows.
    ///
    /// ```
    /// use switchboard::RpcError;
    /// let e = RpcError::new(-32602, "Invalid params")
    ///     .with_data_json(r#"{"field":"params","reason":"expected two numbers"}"#);
    /// assert_eq!(e.data_json(), Some(r#"{"field":"params","reason":"expected two numbers"}"#));
    /// let e = RpcError::new(1, "x").with_data_json("{oops");
    /// let data: serde_json::Value = serde_json::from_str(e.data_json().unwrap()).unwrap();
    /// assert_eq!(data["reason"], "the error data is not one JSON value");
    /// assert_eq!(data["detail"], "{oops");
    /// ```
    pub fn with_data_json(mut self, json: impl Into<Cow<'static, str>>) -> Self {
        let json = json.into();
        if is_one_json_value(json.as_bytes()) {
            self.data = Some(json);
        } else {
            let why = serde_json::json!({
                "reason": "the error data is not one JSON value",
                "detail": json,
            });
            self.data = Some(Cow::Owned(why.to_string()));
        }
        self
    }

    /// Adds `data` given as JSON text if it is exactly one valid JSON value;
    /// otherwise hands the error back unchanged (`Err`).
    ///
    /// ```
    /// use switchboard::RpcError;
    /// let e = RpcError::new(1, "x").try_with_data_json(r#"[1,2]"#).unwrap();
    /// assert_eq!(e.data_json(), Some("[1,2]"));
    /// let e = RpcError::new(1, "x").try_with_data_json("{oops").unwrap_err();
    /// assert_eq!(e.data_json(), None);
    /// ```
    pub fn try_with_data_json(mut self, json: impl Into<Cow<'static, str>>) -> Result<Self, Self> {
        let json = json.into();
        if !is_one_json_value(json.as_bytes()) {
            return Err(self);
        }
        self.data = Some(json);
        Ok(self)
    }

    /// -32602 Invalid params, with `detail` in `data`.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        let data = serde_json::json!({
            "field": "params",
            "reason": Reason::ParamsMismatch.as_str(),
            "detail": detail.to_string(),
        });
        RpcError::new(Code::InvalidParams.as_i32(), Code::InvalidParams.message()).with_data(&data)
    }

    /// -32603 Internal error, with `detail` in `data`.
    pub fn internal(detail: impl fmt::Display) -> Self {
        let data = serde_json::json!({ "reason": Reason::HandlerFailed.as_str(), "detail": detail.to_string() });
        RpcError::new(Code::InternalError.as_i32(), Code::InternalError.message()).with_data(&data)
    }

    /// The error code.
    #[inline]
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The message.
    #[inline]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `data` member as JSON text, if any.
    #[inline]
    pub fn data_json(&self) -> Option<&str> {
        self.data.as_deref()
    }

    /// Appends `"error":{...}` (the member, without braces around it) to `out`.
    pub(crate) fn write_member(&self, out: &mut Vec<u8>) {
        let data = self.data.as_deref().map(str::as_bytes);
        crate::envelope::error_member(out, self.code, &self.message, data);
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// Turns any error into an [`RpcError`] with a code you choose, so that a
/// handler can use `?` on results whose error types are not `RpcError`:
/// `.rpc_error(code)` keeps the error's `Display` as the message,
/// `.internal_error()` answers -32603 with it in `data`.
///
/// For an error type of your own, `impl From<MyError> for RpcError` makes a
/// bare `?` work (its code chosen once, in the impl).
///
/// ```
/// use switchboard::{ResultExt, Router, RpcError, Session};
///
/// #[derive(Debug)]
/// enum BankError { Insufficient { missing: u64 }, Frozen }
/// impl From<BankError> for RpcError {
///     fn from(e: BankError) -> Self {
///         match e {
///             BankError::Insufficient { missing } => RpcError::new(1001, "insufficient funds")
///                 .with_data(&serde_json::json!({ "missing": missing })),
///             BankError::Frozen => RpcError::new(1002, "account frozen"),
///         }
///     }
/// }
/// fn withdraw(amount: u64) -> Result<u64, BankError> {
///     if amount > 10 { Err(BankError::Insufficient { missing: amount - 10 }) } else { Ok(10 - amount) }
/// }
///
/// let router = Router::builder()
///     .typed("parse", |(s,): (String,)| Ok(s.parse::<u32>().rpc_error(1000)?))
///     .typed("withdraw", |(amount,): (u64,)| Ok(withdraw(amount)?))
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"parse","params":["x1"],"id":1}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","error":{"code":1000,"message":"invalid digit found in string"},"id":1}"#);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"withdraw","params":[15],"id":2}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","error":{"code":1001,"message":"insufficient funds","data":{"missing":5}},"id":2}"#);
/// ```
pub trait ResultExt<T> {
    /// The error becomes an [`RpcError`] with `code` and the error's
    /// `Display` as its message.
    fn rpc_error(self, code: i32) -> Result<T, RpcError>;

    /// The error becomes -32603 Internal error, the error's `Display` in
    /// `data` (`{"reason":"the handler failed","detail":…}`).
    fn internal_error(self) -> Result<T, RpcError>;
}

impl<T, E: fmt::Display> ResultExt<T> for Result<T, E> {
    fn rpc_error(self, code: i32) -> Result<T, RpcError> {
        self.map_err(|e| RpcError::new(code, e.to_string()))
    }

    fn internal_error(self) -> Result<T, RpcError> {
        self.map_err(RpcError::internal)
    }
}

impl From<crate::ParamsError> for RpcError {
    fn from(e: crate::ParamsError) -> Self {
        RpcError::invalid_params(e.detail())
    }
}

/// Whether `json` is exactly one valid JSON value (default depth limit); no allocation.
pub(crate) fn is_one_json_value(json: &[u8]) -> bool {
    const DEPTH: usize = crate::ParserConfig::DEFAULT_MAX_DEPTH;
    let mut stack = [0u64; DEPTH / 64 + 1];
    crate::parse::scan::Scanner::new(json, DEPTH, &mut stack, &mut Default::default())
        .validate()
        .is_ok()
}

/// Where a handler writes its result: straight into the session's response buffer.
/// Exactly one value may be written; writing nothing answers `null`.
///
/// ```
/// use switchboard::{Router, Session};
/// let router = Router::builder()
///     .method("hello", |_call, out| out.str("world"))
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"hello","id":1}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","result":"world","id":1}"#);
/// ```
pub struct ResultWriter<'o> {
    pub(crate) out: &'o mut Vec<u8>,
    pub(crate) written: bool,
}

impl<'o> ResultWriter<'o> {
    #[inline]
    fn begin(&mut self) -> Result<(), RpcError> {
        if self.written {
            return Err(two_results());
        }
        self.written = true;
        Ok(())
    }

    /// A writer that appends one value to `out`, exactly as a handler's result would
    /// be written: for building a larger JSON text value by value (the C ABI's object
    /// and array writers do).
    ///
    /// ```
    /// use switchboard::ResultWriter;
    /// let mut doc = b"[".to_vec();
    /// ResultWriter::new(&mut doc).str("a \"quoted\"\nline").unwrap();
    /// doc.push(b',');
    /// ResultWriter::new(&mut doc).f64(0.1).unwrap();
    /// doc.push(b']');
    /// assert_eq!(doc, br#"["a \"quoted\"\nline",0.1]"#);
    /// ```
    #[inline]
    pub fn new(out: &'o mut Vec<u8>) -> Self {
        ResultWriter {
            out,
            written: false,
        }
    }

    /// Whether a result has been written.
    #[inline]
    pub fn is_written(&self) -> bool {
        self.written
    }

    /// Writes `json` after checking it is exactly one valid JSON value; whitespace
    /// around the value is dropped (so responses stay one line for NDJSON), the
    /// value's own bytes are copied verbatim.
    pub fn raw_json(&mut self, json: &[u8]) -> Result<(), RpcError> {
        if !is_one_json_value(json) {
            return Err(RpcError::internal("the handler wrote invalid JSON"));
        }
        // Surrounding whitespace is valid JSON but would break line-framed transports
        // (a newline inside an NDJSON response): keep only the value itself.
        let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let start = json.iter().position(|b| !ws(b)).unwrap_or(json.len());
        let end = json.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
        self.begin()?;
        self.out.extend_from_slice(&json[start..end]);
        Ok(())
    }

    /// Writes `null`.
    #[inline]
    pub fn null(&mut self) -> Result<(), RpcError> {
        self.begin()?;
        write::write_null(self.out);
        Ok(())
    }

    /// Writes `true` or `false`.
    #[inline]
    pub fn bool(&mut self, v: bool) -> Result<(), RpcError> {
        self.begin()?;
        write::write_bool(self.out, v);
        Ok(())
    }

    /// Writes an integer.
    #[inline]
    pub fn i64(&mut self, v: i64) -> Result<(), RpcError> {
        self.begin()?;
        write::write_i64(self.out, v);
        Ok(())
    }

    /// Writes an unsigned integer.
    #[inline]
    pub fn u64(&mut self, v: u64) -> Result<(), RpcError> {
        self.begin()?;
        write::write_u64(self.out, v);
        Ok(())
    }

    /// Writes a finite float (shortest form that reads back the same); NaN and
    /// infinities are refused with -32603.
    pub fn f64(&mut self, v: f64) -> Result<(), RpcError> {
        if !v.is_finite() {
            return Err(RpcError::internal("the result is not a finite number"));
        }
        self.begin()?;
        let _ = write::write_f64(self.out, v); // finite: checked above
        Ok(())
    }

    /// Writes a string, escaped.
    #[inline]
    pub fn str(&mut self, v: &str) -> Result<(), RpcError> {
        self.begin()?;
        write::write_str_escaped(self.out, v);
        Ok(())
    }

    /// Writes any `Serialize` value as JSON.
    #[inline]
    pub fn serialize<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), RpcError> {
        self.begin()?;
        let start = self.out.len();
        match write::to_vec_into(self.out, v) {
            Ok(()) => Ok(()),
            Err(e) => Err(serialize_failed(self.out, start, e)),
        }
    }
}

/// The error for a second result (out of line, as every error path here).
#[cold]
#[inline(never)]
fn two_results() -> RpcError {
    RpcError::internal("the handler wrote two results")
}

/// Why [`ResultWriter::serialize`] failed, once what it appended since `start` is
/// taken back (out of line: the error path stays out of every caller's frame).
#[cold]
#[inline(never)]
fn serialize_failed(out: &mut Vec<u8>, start: usize, e: write::SerError) -> RpcError {
    out.truncate(start);
    RpcError::internal(format_args!("the result could not be serialized: {e}"))
}
