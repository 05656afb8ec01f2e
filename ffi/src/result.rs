//! Result codes: what every entry point returns, and their text.

use core::ffi::c_char;

use crate::boundary::{self, out_ptr};

/// What a `swb_*` function returns: `SWB_RESULT_OK` (0) or why it failed.
///
/// These codes are about the call itself, never about a JSON-RPC message: a message
/// that earns a JSON-RPC error (-32700, -32600, ...) is handled successfully and the
/// error is inside the response bytes.
///
/// Ranges: 1000-1999 bad arguments, 2000-2999 wrong state or sequence, 3000-3999
/// method registration, 4000-4999 reading a value (`swb_value_*`), 9000-9999
/// internal failures. A number, once given out, is
/// never reused for another meaning. In C the type is a `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum swb_result {
    /// Success.
    Ok = 0,
    /// A required pointer argument is NULL (a buffer pointer may be NULL only when
    /// its length is 0).
    NullParameter = 1000,
    /// An argument is out of its range (for example a length above `PTRDIFF_MAX`).
    InvalidArgument = 1001,
    /// Text that must be UTF-8 (a method name, a string, a message) is not.
    InvalidUtf8 = 1002,
    /// Bytes that must be exactly one JSON value are not.
    InvalidJson = 1003,
    /// A double that is NaN or infinite: JSON cannot carry it.
    NotFinite = 1004,
    /// A limit outside its accepted range (see the `swb_config_set_*` functions).
    InvalidLimit = 1005,
    /// The output buffer is too small (`SWB_RESULT_MESSAGE_MAX` bytes always suffice
    /// for `swb_result_message`).
    BufferTooSmall = 1006,
    /// The call already has its answer (a result or an error): a callback answers once.
    AlreadyAnswered = 2000,
    /// The session is in use: `swb_session_handle` was called again from inside one
    /// of its own callbacks.
    SessionBusy = 2001,
    /// The classifier's last message was not a batch.
    NotABatch = 2002,
    /// A batch or array index at or past its length.
    IndexOutOfRange = 2003,
    /// A `swb_value` or `swb_value_iter` that is not from the callback running on
    /// this thread: kept after its callback returned, used on another thread, or
    /// not made by switchboard. Nothing was read.
    ValueNotLive = 2004,
    /// The writer cannot take this now: a value inside an object where its key is
    /// due, a key outside an object or right after another key, or an end that does
    /// not match the innermost begin (`swb_writer_begin_object`). Nothing was written.
    WriterState = 2005,
    /// A method name is empty.
    EmptyMethodName = 3000,
    /// A method name starts with `rpc.`, reserved for extensions (`rpc.discover` is built in).
    ReservedMethodName = 3001,
    /// A method name is registered twice on one builder.
    DuplicateMethod = 3002,
    /// A schema given to `swb_router_builder_schema` is not valid JSON of the right
    /// shape (params: an array of content descriptors; result: one descriptor).
    InvalidSchema = 3003,
    /// A schema was given for a method that is not registered.
    UnknownMethod = 3004,
    /// The router could not be built for a reason this version does not name.
    BuildFailed = 3099,
    /// The value is not of the kind the reader needs (a number for
    /// `swb_value_as_int64`, an object for `swb_value_get`...), or it is absent.
    WrongKind = 4000,
    /// The number does not fit the requested type: a fraction or exponent for an
    /// integer (`1.0` is not an `int64_t`), out of the type's range, or beyond a
    /// double's.
    NotRepresentable = 4001,
    /// The object has no member of that name.
    NotFound = 4002,
    /// The string holds escapes, so it cannot be borrowed as it is: copy it
    /// unescaped with `swb_value_copy_str`.
    StringEscaped = 4003,
    /// Not an error: the iterator has given every element or member.
    IterEnd = 4004,
    /// An internal bug was caught at the boundary (a Rust panic); the handle involved
    /// is still safe to free.
    Panic = 9000,
}

/// Every code, for `swb_result_message` and the tests.
pub(crate) const ALL: [swb_result; 26] = {
    use swb_result::*;
    [
        Ok,
        NullParameter,
        InvalidArgument,
        InvalidUtf8,
        InvalidJson,
        NotFinite,
        InvalidLimit,
        BufferTooSmall,
        AlreadyAnswered,
        SessionBusy,
        NotABatch,
        IndexOutOfRange,
        ValueNotLive,
        WriterState,
        EmptyMethodName,
        ReservedMethodName,
        DuplicateMethod,
        InvalidSchema,
        UnknownMethod,
        BuildFailed,
        WrongKind,
        NotRepresentable,
        NotFound,
        StringEscaped,
        IterEnd,
        Panic,
    ]
};

/// A buffer of this many bytes always holds the text of any result code and its NUL.
pub const SWB_RESULT_MESSAGE_MAX: usize = 128;

const UNKNOWN: &str = "unknown result code\0";

impl swb_result {
    /// The code's text, NUL-terminated.
    pub(crate) const fn text_nul(self) -> &'static str {
        use swb_result::*;
        match self {
            Ok => "success\0",
            NullParameter => "a required pointer argument is NULL\0",
            InvalidArgument => "an argument is out of range\0",
            InvalidUtf8 => "text is not valid UTF-8\0",
            InvalidJson => "bytes are not exactly one valid JSON value\0",
            NotFinite => "a number is NaN or infinite\0",
            InvalidLimit => "a limit is out of its accepted range\0",
            BufferTooSmall => "the output buffer is too small\0",
            AlreadyAnswered => "the call already has its answer\0",
            SessionBusy => "the session is already handling a message on this thread\0",
            NotABatch => "the last classified message is not a batch\0",
            IndexOutOfRange => "the index is out of range\0",
            ValueNotLive => "the value is not from a callback running on this thread\0",
            WriterState => "the writer expects a key, a value or another end here\0",
            EmptyMethodName => "a method name is empty\0",
            ReservedMethodName => "method names starting with rpc. are reserved\0",
            DuplicateMethod => "a method name is registered twice\0",
            InvalidSchema => "a method schema is not valid\0",
            UnknownMethod => "a schema names a method that is not registered\0",
            BuildFailed => "the router could not be built\0",
            WrongKind => "the value is not of the kind this reader needs\0",
            NotRepresentable => "the number does not fit the requested type\0",
            NotFound => "the object has no member of that name\0",
            StringEscaped => "the string has escapes: copy it to read it\0",
            IterEnd => "the iterator has no more values\0",
            Panic => "internal error: a panic was caught at the C boundary\0",
        }
    }

    /// The code for a number received from C, if this version knows it.
    pub(crate) fn from_u32(n: u32) -> Option<Self> {
        ALL.iter().copied().find(|r| *r as u32 == n)
    }
}

const _: () = {
    let mut i = 0;
    while i < ALL.len() {
        assert!(ALL[i].text_nul().len() <= SWB_RESULT_MESSAGE_MAX);
        i += 1;
    }
    assert!(UNKNOWN.len() <= SWB_RESULT_MESSAGE_MAX);
};

fn text_of(result: u32) -> &'static str {
    swb_result::from_u32(result).map_or(UNKNOWN, swb_result::text_nul)
}

/// The English text of a result code as a static NUL-terminated string (never NULL,
/// never to be freed); unknown numbers give "unknown result code".
///
/// `result` is a plain integer, so any number may be passed.
/// Thread safety: may be called from any thread at any time.
#[unsafe(no_mangle)]
pub extern "C" fn swb_result_str(result: u32) -> *const c_char {
    text_of(result).as_ptr().cast()
}

/// Copies the English text of a result code, and a terminating NUL, into `buf`.
///
/// - `buf`, `len`: the destination and its size in bytes; `SWB_RESULT_MESSAGE_MAX`
///   bytes always suffice.
/// - `out_n`: receives the text's length, without the NUL.
///
/// Returns `SWB_RESULT_BUFFER_TOO_SMALL` (and writes nothing) when the text and its
/// NUL do not fit. Unknown numbers give "unknown result code".
///
/// # Safety
/// - `buf` must be NULL or point to `len` writable bytes.
/// - `out_n` must be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_result_message(
    result: u32,
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> swb_result {
    boundary::run(|| {
        let out_n = out_ptr(out_n)?;
        if buf.is_null() {
            return Err(swb_result::NullParameter);
        }
        let text = text_of(result);
        if text.len() > len {
            return Err(swb_result::BufferTooSmall);
        }
        // SAFETY: `buf` is non-null and the caller promises `len` writable bytes;
        // `text.len() <= len` was checked; the static text cannot overlap `buf`'s
        // writable memory.
        unsafe { core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len()) };
        // SAFETY: `out_n` is non-null and the caller promises it is writable.
        unsafe { out_n.write(text.len() - 1) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_distinct_text_and_roundtrips() {
        let known = &ALL[..];
        let mut texts: Vec<&str> = known.iter().map(|r| r.text_nul()).collect();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), known.len());
        for r in known {
            assert_eq!(swb_result::from_u32(*r as u32), Some(*r));
        }
        assert_eq!(swb_result::from_u32(12345), None);
    }

    #[test]
    fn message_copies_or_refuses() {
        let mut buf = [0 as c_char; SWB_RESULT_MESSAGE_MAX];
        let mut n = 0usize;
        // SAFETY: valid buffer and out pointer.
        let rc = unsafe { swb_result_message(0, buf.as_mut_ptr(), buf.len(), &mut n) };
        assert_eq!(rc, swb_result::Ok);
        assert_eq!(n, "success".len());
        // SAFETY: too small: nothing is written.
        let rc = unsafe { swb_result_message(0, buf.as_mut_ptr(), 7, &mut n) };
        assert_eq!(rc, swb_result::BufferTooSmall);
        // SAFETY: NULL buffer is refused.
        let rc = unsafe { swb_result_message(0, core::ptr::null_mut(), 8, &mut n) };
        assert_eq!(rc, swb_result::NullParameter);
    }
}
