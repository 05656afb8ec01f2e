//! Limits and leniency options.

/// Limits the parser enforces, with the defaults of SPEC.md.
///
/// ```
/// use switchboard::{Parser, ParserConfig};
/// let mut config = ParserConfig::new();
/// config.max_depth(32).max_batch_len(100).allow_batches(false);
/// let parser = Parser::with_config(config);
/// assert_eq!(parser.config().get_max_depth(), 32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParserConfig {
    pub(crate) max_depth: usize,
    pub(crate) max_batch_len: usize,
    pub(crate) max_message_bytes: usize,
    pub(crate) allow_batches: bool,
}

impl Default for ParserConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl ParserConfig {
    /// Default depth limit: 128 levels (the outermost array or object is level 1).
    pub const DEFAULT_MAX_DEPTH: usize = 128;
    /// Default batch length limit.
    pub const DEFAULT_MAX_BATCH_LEN: usize = 1000;
    /// Default message size limit: 8 MiB.
    pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 << 20;
    /// The largest accepted `max_message_bytes` (spans are 32-bit).
    pub const MAX_MESSAGE_BYTES_CAP: usize = u32::MAX as usize - 1;
    /// The largest accepted `max_depth`.
    pub const MAX_DEPTH_CAP: usize = 1 << 16;

    /// The defaults of SPEC.md.
    pub const fn new() -> Self {
        ParserConfig {
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_batch_len: Self::DEFAULT_MAX_BATCH_LEN,
            max_message_bytes: Self::DEFAULT_MAX_MESSAGE_BYTES,
            allow_batches: true,
        }
    }

    /// Deepest nesting accepted; deeper input is a -32700 whose `data` says why.
    /// Clamped to `1..=MAX_DEPTH_CAP`.
    ///
    /// # Background
    /// RFC 8259 §9 lets a parser limit nesting depth.
    ///
    /// ```
    /// use switchboard::{Code, Message, Parser, ParserConfig, Reason};
    /// let mut config = ParserConfig::new();
    /// config.max_depth(2); // the message object, and one level inside it
    /// let mut parser = Parser::with_config(config);
    /// let ok = parser.parse(br#"{"jsonrpc":"2.0","method":"m","params":[1],"id":1}"#);
    /// assert!(matches!(ok, Message::Request(_)));
    /// let Message::Error(e) = parser.parse(br#"{"jsonrpc":"2.0","method":"m","params":[[1]],"id":1}"#) else {
    ///     panic!()
    /// };
    /// assert_eq!((e.reason(), e.code(), e.limit()), (Reason::TooDeep, Code::ParseError, Some(2)));
    /// ```
    pub fn max_depth(&mut self, n: usize) -> &mut Self {
        self.max_depth = n.clamp(1, Self::MAX_DEPTH_CAP);
        self
    }

    /// Longest batch accepted; a longer one gets one single -32600 object.
    ///
    /// # Background
    /// JSON-RPC 2.0 §6 sets no bound; SPEC.md defaults it to 1000.
    ///
    /// ```
    /// use switchboard::{Code, Message, Parser, ParserConfig, Reason};
    /// let mut config = ParserConfig::new();
    /// config.max_batch_len(2);
    /// let mut parser = Parser::with_config(config);
    /// let three = br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","method":"c"}]"#;
    /// let Message::Error(e) = parser.parse(three) else { panic!() };
    /// assert_eq!((e.reason(), e.code(), e.limit()), (Reason::BatchTooLong, Code::InvalidRequest, Some(2)));
    /// ```
    pub fn max_batch_len(&mut self, n: usize) -> &mut Self {
        self.max_batch_len = n;
        self
    }

    /// Largest message accepted, refused before parsing (-32600, or HTTP 413).
    /// Clamped to [`ParserConfig::MAX_MESSAGE_BYTES_CAP`].
    ///
    /// # Background
    /// RFC 8259 §9 lets a parser limit the size of texts it accepts.
    ///
    /// ```
    /// use switchboard::{Message, Parser, ParserConfig, Reason};
    /// let mut config = ParserConfig::new();
    /// config.max_message_bytes(48);
    /// let mut parser = Parser::with_config(config);
    /// let short = br#"{"jsonrpc":"2.0","method":"ping","id":1}"#; // 40 bytes
    /// assert!(matches!(parser.parse(short), Message::Request(_)));
    /// let long = br#"{"jsonrpc":"2.0","method":"ping","params":[1,2,3],"id":1}"#;
    /// let Message::Error(e) = parser.parse(long) else { panic!() };
    /// assert_eq!((e.reason(), e.limit()), (Reason::TooLarge, Some(48)));
    /// assert_eq!(e.data().to_string(), r#"{"reason":"message larger than max_message_bytes","limit":48}"#);
    /// ```
    pub fn max_message_bytes(&mut self, n: usize) -> &mut Self {
        self.max_message_bytes = n.min(Self::MAX_MESSAGE_BYTES_CAP);
        self
    }

    /// Whether batches are accepted at all; when off, any batch gets one -32600.
    ///
    /// # Background
    /// JSON-RPC 2.0 §6 defines batches; the Model Context Protocol dropped them (2025-06-18).
    ///
    /// ```
    /// use switchboard::{Message, Parser, ParserConfig, Reason};
    /// let mut config = ParserConfig::new();
    /// config.allow_batches(false);
    /// let mut parser = Parser::with_config(config);
    /// let Message::Error(e) = parser.parse(br#"[{"jsonrpc":"2.0","method":"a","id":1}]"#) else { panic!() };
    /// assert_eq!(e.reason(), Reason::BatchesDisabled);
    /// assert_eq!(e.code().as_i32(), -32600);
    /// ```
    pub fn allow_batches(&mut self, yes: bool) -> &mut Self {
        self.allow_batches = yes;
        self
    }

    /// The configured depth limit.
    pub fn get_max_depth(&self) -> usize {
        self.max_depth
    }

    /// The configured batch length limit.
    pub fn get_max_batch_len(&self) -> usize {
        self.max_batch_len
    }

    /// The configured message size limit.
    pub fn get_max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Whether batches are accepted.
    pub fn get_allow_batches(&self) -> bool {
        self.allow_batches
    }
}
