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
    pub fn max_depth(&mut self, n: usize) -> &mut Self {
        self.max_depth = n.clamp(1, Self::MAX_DEPTH_CAP);
        self
    }

    /// Longest batch accepted; a longer one gets one single -32600 object.
    ///
    /// # Background
    /// JSON-RPC 2.0 §6 sets no bound; SPEC.md defaults it to 1000.
    pub fn max_batch_len(&mut self, n: usize) -> &mut Self {
        self.max_batch_len = n;
        self
    }

    /// Largest message accepted, refused before parsing (-32600, or HTTP 413).
    /// Clamped to [`ParserConfig::MAX_MESSAGE_BYTES_CAP`].
    ///
    /// # Background
    /// RFC 8259 §9 lets a parser limit the size of texts it accepts.
    pub fn max_message_bytes(&mut self, n: usize) -> &mut Self {
        self.max_message_bytes = n.min(Self::MAX_MESSAGE_BYTES_CAP);
        self
    }

    /// Whether batches are accepted at all; when off, any batch gets one -32600.
    ///
    /// # Background
    /// JSON-RPC 2.0 §6 defines batches; the Model Context Protocol dropped them (2025-06-18).
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
