//! The exact JSON-RPC error a message earns, with machine-readable detail.

use core::fmt;

use super::Id;

/// A JSON-RPC 2.0 error code that the core produces.
///
/// ```
/// use switchboard::{Code, Message, Parser};
/// let mut parser = Parser::new();
/// let cases: [(&[u8], Code); 3] = [
///     (b"{\"jsonrpc\":", Code::ParseError),
///     (br#"{"jsonrpc":"2.0","method":42,"id":1}"#, Code::InvalidRequest),
///     (br#"{"jsonrpc":"2.0","method":"m","params":3,"id":1}"#, Code::InvalidRequest),
/// ];
/// for (input, code) in cases {
///     let Message::Error(e) = parser.parse(input) else { panic!() };
///     assert_eq!(e.code(), code);
/// }
/// // The number and sentence an error response carries.
/// assert_eq!(Code::MethodNotFound.as_i32(), -32601);
/// assert_eq!(Code::MethodNotFound.message(), "Method not found");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// -32700: the bytes are not one valid JSON text.
    ParseError,
    /// -32600: valid JSON, but not a valid Request object (or batch).
    InvalidRequest,
    /// -32601: the method is not registered.
    MethodNotFound,
    /// -32602: the params do not fit the method.
    InvalidParams,
    /// -32603: the server failed while handling the call.
    InternalError,
}

impl Code {
    /// The numeric code as the specification gives it.
    ///
    /// ```
    /// assert_eq!(switchboard::Code::ParseError.as_i32(), -32700);
    /// ```
    pub const fn as_i32(self) -> i32 {
        match self {
            Code::ParseError => -32700,
            Code::InvalidRequest => -32600,
            Code::MethodNotFound => -32601,
            Code::InvalidParams => -32602,
            Code::InternalError => -32603,
        }
    }

    /// The short sentence the specification pairs with the code.
    pub const fn message(self) -> &'static str {
        match self {
            Code::ParseError => "Parse error",
            Code::InvalidRequest => "Invalid Request",
            Code::MethodNotFound => "Method not found",
            Code::InvalidParams => "Invalid params",
            Code::InternalError => "Internal error",
        }
    }
}

/// A top-level member of a Request or Response object.
///
/// ```
/// use switchboard::{Field, Message, Parser, Reason};
/// let mut parser = Parser::new();
/// // A duplicate member names the member, also when its second spelling is escaped.
/// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":"a","\u006dethod":"b","id":1}"#) else {
///     panic!()
/// };
/// assert_eq!(e.reason(), Reason::Duplicate(Field::Method));
/// assert_eq!(e.reason().field().map(Field::name), Some("method"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// `jsonrpc`
    Jsonrpc,
    /// `method`
    Method,
    /// `params`
    Params,
    /// `id`
    Id,
    /// `result`
    Result,
    /// `error`
    Error,
}

impl Field {
    /// The member's name as it appears in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Jsonrpc => "jsonrpc",
            Field::Method => "method",
            Field::Params => "params",
            Field::Id => "id",
            Field::Result => "result",
            Field::Error => "error",
        }
    }

    pub(crate) const ALL: [Field; 6] = [
        Field::Jsonrpc,
        Field::Method,
        Field::Params,
        Field::Id,
        Field::Result,
        Field::Error,
    ];
}

/// Why a message was refused: each reason belongs to exactly one [`Code`].
///
/// ```
/// use switchboard::{Code, Field, Message, Parser, Reason};
/// let mut parser = Parser::new();
/// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":"m","id":[1]}"#) else {
///     panic!()
/// };
/// let reason = e.reason();
/// assert_eq!(reason, Reason::IdWrongType);
/// assert_eq!(reason.code(), Code::InvalidRequest);
/// assert_eq!(reason.field(), Some(Field::Id));
/// assert_eq!(reason.as_str(), "must be a string, a number or null");
/// // An unusable id is never echoed: the error is answered with `null`.
/// assert!(e.id().is_null());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    // ---- -32700 Parse error ----
    /// The body is empty or only whitespace.
    Empty,
    /// The body starts with a UTF-8 byte-order mark (RFC 8259 §8.1 forbids adding one).
    ByteOrderMark,
    /// A byte that the JSON grammar does not allow here.
    UnexpectedByte,
    /// The input ends inside a value.
    UnexpectedEnd,
    /// Bytes other than whitespace follow the JSON value.
    TrailingBytes,
    /// A string holds bytes that are not UTF-8 (overlong, surrogate, truncated...).
    InvalidUtf8,
    /// A string holds a raw control character (below U+0020).
    ControlCharacter,
    /// A backslash escape that JSON does not define.
    InvalidEscape,
    /// A number that does not follow the JSON number grammar.
    InvalidNumber,
    /// A misspelled `true`, `false` or `null`.
    InvalidLiteral,
    /// Arrays and objects nest deeper than `max_depth`.
    TooDeep,
    // ---- -32600 Invalid Request ----
    /// The message is larger than `max_message_bytes`.
    TooLarge,
    /// `[]`.
    EmptyBatch,
    /// A batch longer than `max_batch_len`.
    BatchTooLong,
    /// A batch arrived while batches are switched off.
    BatchesDisabled,
    /// The message (or batch element) is not an object.
    NotAnObject,
    /// A top-level member appears twice (escaped spellings included).
    Duplicate(Field),
    /// `jsonrpc` is absent.
    MissingVersion,
    /// `jsonrpc` is not exactly the string `"2.0"`.
    WrongVersion,
    /// `method` is absent (and neither `result` nor `error` is present).
    MissingMethod,
    /// `method` is not a string.
    MethodNotString,
    /// `params` is neither an array, an object nor null.
    ParamsNotStructured,
    /// `id` is an object, an array or a boolean.
    IdWrongType,
    /// A Response object without an `id`.
    ResponseWithoutId,
    /// A Response object with both `result` and `error`.
    ResultAndError,
    /// A Response object whose `error` is not `{"code": integer, "message": string, ...}`.
    MalformedErrorObject,
    // ---- -32601 / -32602 / -32603 (router) ----
    /// No method of that name is registered.
    UnknownMethod,
    /// The params do not fit the method.
    ParamsMismatch,
    /// The handler failed.
    HandlerFailed,
}

impl Reason {
    /// The JSON-RPC code this reason is answered with.
    ///
    /// ```
    /// use switchboard::{Code, Reason};
    /// assert_eq!(Reason::TooDeep.code(), Code::ParseError);
    /// assert_eq!(Reason::EmptyBatch.code(), Code::InvalidRequest);
    /// ```
    pub const fn code(self) -> Code {
        use Reason::*;
        match self {
            Empty | ByteOrderMark | UnexpectedByte | UnexpectedEnd | TrailingBytes
            | InvalidUtf8 | ControlCharacter | InvalidEscape | InvalidNumber | InvalidLiteral
            | TooDeep => Code::ParseError,
            TooLarge | EmptyBatch | BatchTooLong | BatchesDisabled | NotAnObject | Duplicate(_)
            | MissingVersion | WrongVersion | MissingMethod | MethodNotString
            | ParamsNotStructured | IdWrongType | ResponseWithoutId | ResultAndError
            | MalformedErrorObject => Code::InvalidRequest,
            UnknownMethod => Code::MethodNotFound,
            ParamsMismatch => Code::InvalidParams,
            HandlerFailed => Code::InternalError,
        }
    }

    /// The member the reason is about, if it is about one.
    pub const fn field(self) -> Option<Field> {
        use Reason::*;
        match self {
            Duplicate(f) => Some(f),
            MissingVersion | WrongVersion => Some(Field::Jsonrpc),
            MissingMethod | MethodNotString | UnknownMethod => Some(Field::Method),
            ParamsNotStructured | ParamsMismatch => Some(Field::Params),
            IdWrongType | ResponseWithoutId => Some(Field::Id),
            ResultAndError => Some(Field::Result),
            MalformedErrorObject => Some(Field::Error),
            _ => None,
        }
    }

    /// A short, static, machine-stable description (the `reason` in `data`).
    pub const fn as_str(self) -> &'static str {
        use Reason::*;
        match self {
            Empty => "empty message",
            ByteOrderMark => "byte-order mark is not allowed",
            UnexpectedByte => "unexpected byte",
            UnexpectedEnd => "unexpected end of input",
            TrailingBytes => "trailing bytes after the JSON value",
            InvalidUtf8 => "invalid UTF-8",
            ControlCharacter => "unescaped control character in a string",
            InvalidEscape => "invalid escape sequence",
            InvalidNumber => "invalid number",
            InvalidLiteral => "invalid literal",
            TooDeep => "nesting deeper than max_depth",
            TooLarge => "message larger than max_message_bytes",
            EmptyBatch => "empty batch",
            BatchTooLong => "batch longer than max_batch_len",
            BatchesDisabled => "batches are disabled",
            NotAnObject => "must be an object",
            Duplicate(_) => "duplicate member",
            MissingVersion => "is missing",
            WrongVersion => "must be the string \"2.0\"",
            MissingMethod => "is missing",
            MethodNotString => "must be a string",
            ParamsNotStructured => "must be an array or an object",
            IdWrongType => "must be a string, a number or null",
            ResponseWithoutId => "is missing from a response",
            ResultAndError => "result and error are mutually exclusive",
            MalformedErrorObject => "must be an object with an integer code and a string message",
            UnknownMethod => "is not registered",
            ParamsMismatch => "do not fit the method",
            HandlerFailed => "the handler failed",
        }
    }
}

impl Reason {
    /// Every reason, `Duplicate` once per field, in [`Reason::index`] order.
    pub(crate) const ALL: [Reason; 34] = {
        use Reason::*;
        [
            Empty,
            ByteOrderMark,
            UnexpectedByte,
            UnexpectedEnd,
            TrailingBytes,
            InvalidUtf8,
            ControlCharacter,
            InvalidEscape,
            InvalidNumber,
            InvalidLiteral,
            TooDeep,
            TooLarge,
            EmptyBatch,
            BatchTooLong,
            BatchesDisabled,
            NotAnObject,
            Duplicate(Field::Jsonrpc),
            Duplicate(Field::Method),
            Duplicate(Field::Params),
            Duplicate(Field::Id),
            Duplicate(Field::Result),
            Duplicate(Field::Error),
            MissingVersion,
            WrongVersion,
            MissingMethod,
            MethodNotString,
            ParamsNotStructured,
            IdWrongType,
            ResponseWithoutId,
            ResultAndError,
            MalformedErrorObject,
            UnknownMethod,
            ParamsMismatch,
            HandlerFailed,
        ]
    };

    /// This reason's position in [`Reason::ALL`].
    pub(crate) const fn index(self) -> usize {
        use Reason::*;
        match self {
            Empty => 0,
            ByteOrderMark => 1,
            UnexpectedByte => 2,
            UnexpectedEnd => 3,
            TrailingBytes => 4,
            InvalidUtf8 => 5,
            ControlCharacter => 6,
            InvalidEscape => 7,
            InvalidNumber => 8,
            InvalidLiteral => 9,
            TooDeep => 10,
            TooLarge => 11,
            EmptyBatch => 12,
            BatchTooLong => 13,
            BatchesDisabled => 14,
            NotAnObject => 15,
            Duplicate(f) => 16 + f as usize,
            MissingVersion => 22,
            WrongVersion => 23,
            MissingMethod => 24,
            MethodNotString => 25,
            ParamsNotStructured => 26,
            IdWrongType => 27,
            ResponseWithoutId => 28,
            ResultAndError => 29,
            MalformedErrorObject => 30,
            UnknownMethod => 31,
            ParamsMismatch => 32,
            HandlerFailed => 33,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field() {
            Some(field) => write!(f, "{}: {}", field.name(), self.as_str()),
            None => f.write_str(self.as_str()),
        }
    }
}

impl std::error::Error for Reason {}

/// The exact JSON-RPC error for a message: what to answer, to which id, and why.
///
/// ```
/// use switchboard::{Code, Message, Parser};
/// let mut parser = Parser::new();
/// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":1,"id":7}"#) else {
///     panic!()
/// };
/// assert_eq!(e.code(), Code::InvalidRequest);
/// assert_eq!(e.id().as_bytes(), b"7");
/// assert_eq!(e.data().to_string(), r#"{"field":"method","reason":"must be a string"}"#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error<'a> {
    reason: Reason,
    id: Id<'a>,
    pub(crate) offset: Option<usize>,
    pub(crate) limit: Option<usize>,
}

impl<'a> Error<'a> {
    /// An error answered with `id` (use [`Id::NULL`] when no id can be echoed).
    pub const fn new(reason: Reason, id: Id<'a>) -> Self {
        Error {
            reason,
            id,
            offset: None,
            limit: None,
        }
    }

    pub(crate) const fn at(reason: Reason, offset: usize) -> Self {
        Error {
            reason,
            id: Id::NULL,
            offset: Some(offset),
            limit: None,
        }
    }

    /// This error with the configured limit that was exceeded (for limit errors:
    /// [`Reason::TooLarge`], [`Reason::TooDeep`], [`Reason::BatchTooLong`]),
    /// reported in its `data`.
    ///
    /// ```
    /// use switchboard::{Error, Id, Reason};
    /// let e = Error::new(Reason::TooLarge, Id::NULL).with_limit(1024);
    /// assert_eq!(e.data().to_string(), r#"{"reason":"message larger than max_message_bytes","limit":1024}"#);
    /// ```
    pub const fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Why the message was refused.
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// The JSON-RPC error code to answer with.
    pub const fn code(&self) -> Code {
        self.reason.code()
    }

    /// The id to echo in the error response (its raw bytes; `null` when none is usable).
    pub const fn id(&self) -> Id<'a> {
        self.id
    }

    /// The byte offset at which a parse error was detected.
    pub const fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The configured limit that was exceeded, for limit errors.
    pub const fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// The error's `data` member: a JSON object, written by its `Display`.
    pub const fn data(&self) -> ErrorData {
        ErrorData {
            reason: self.reason,
            offset: self.offset,
            limit: self.limit,
        }
    }
}

impl fmt::Display for Error<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.code().message(),
            self.code().as_i32(),
            self.reason
        )?;
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        if let Some(l) = self.limit {
            write!(f, " (limit {l})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error<'_> {}

/// The machine-readable `data` object of an error; `Display` writes it as compact JSON
/// (`{"field":"method","reason":"must be a string"}`), without allocating.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// // A parse error says where; a refused member says which.
/// let Message::Error(e) = parser.parse(b"[1,]") else { panic!() };
/// assert_eq!(e.data().to_string(), r#"{"reason":"unexpected byte","offset":3}"#);
/// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"1.0","method":"m","id":1}"#) else { panic!() };
/// assert_eq!(e.data().to_string(), r#"{"field":"jsonrpc","reason":"must be the string \"2.0\""}"#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorData {
    reason: Reason,
    pub(crate) offset: Option<usize>,
    pub(crate) limit: Option<usize>,
}

impl ErrorData {
    /// Appends the data object as compact JSON to `out` (no formatting machinery,
    /// no allocation beyond the buffer's growth). Same bytes as `Display`. The
    /// reference the static response heads are tested against.
    #[cfg(test)]
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        if let Some(field) = self.reason.field() {
            out.extend_from_slice(b"\"field\":\"");
            out.extend_from_slice(field.name().as_bytes());
            out.extend_from_slice(b"\",");
        }
        out.extend_from_slice(b"\"reason\":");
        crate::write::write_str_escaped(out, self.reason.as_str());
        if let Some(o) = self.offset {
            out.extend_from_slice(b",\"offset\":");
            crate::write::write_u64(out, o as u64);
        }
        if let Some(l) = self.limit {
            out.extend_from_slice(b",\"limit\":");
            crate::write::write_u64(out, l as u64);
        }
        out.push(b'}');
    }
}

impl fmt::Display for ErrorData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        if let Some(field) = self.reason.field() {
            write!(f, "\"field\":\"{}\",", field.name())?;
        }
        // Reason strings are static and contain no character that needs escaping
        // other than the quotes of "2.0", escaped here.
        f.write_str("\"reason\":\"")?;
        for part in self.reason.as_str().split('"').enumerate() {
            if part.0 > 0 {
                f.write_str("\\\"")?;
            }
            f.write_str(part.1)?;
        }
        f.write_str("\"")?;
        if let Some(o) = self.offset {
            write!(f, ",\"offset\":{o}")?;
        }
        if let Some(l) = self.limit {
            write!(f, ",\"limit\":{l}")?;
        }
        f.write_str("}")
    }
}
