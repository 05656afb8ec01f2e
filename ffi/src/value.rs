//! Reading a call's params from C without a second JSON library: value views over
//! the params the core already validated, and readers on top of the core's
//! [`RawValue`] (no parser here, no allocation).
//!
//! Values are only ever made by switchboard, and only used during the callback
//! that received them: the callback adapters record the running call's params
//! ([`LiveParams`]), and every reader first checks that the value it is handed
//! lies inside them. A value kept after its callback returned, used on another
//! thread, or made up by the caller from other memory is refused
//! (`SWB_RESULT_VALUE_NOT_LIVE`) before a byte of it is read. What C can still
//! forge is a value over other bytes of the same params (a slice that is not one
//! JSON value): the core's walks then give wrong answers or panic (the boundary
//! returns `SWB_RESULT_PANIC`), and never read outside those bytes (they index
//! the slice, bounds checked).

use core::cell::Cell;
use core::ffi::c_char;

#[cfg(test)]
use switchboard::Kind;
use switchboard::RawValue;

use crate::boundary::{self, out_ptr, text};
use crate::result::swb_result;
use crate::router::swb_call;
use crate::slice::swb_slice;

/// What a `swb_value` holds. `SWB_VALUE_KIND_ABSENT` (0, a zeroed `swb_value`) is no
/// JSON at all: the params of a call that has none, or the key of an array element.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum swb_value_kind {
    /// No value: params absent (or `null`), or no key. Readers answer
    /// `SWB_RESULT_WRONG_KIND`.
    Absent = 0,
    /// `null`
    Null = 1,
    /// `true` or `false`
    Bool = 2,
    /// A number, kept as its token (`1`, `-0.5`, `1e3`).
    Number = 3,
    /// A string, kept with its quotes and escapes.
    String = 4,
    /// An array.
    Array = 5,
    /// An object.
    Object = 6,
}

/// A borrowed view of one JSON value inside a call's params (or the params
/// themselves), as switchboard hands it out: `json` is the value's exact bytes as
/// received (a string with its quotes and escapes) and `kind` what it is.
///
/// Read its fields, copy it, but never write them: only switchboard makes values
/// (`swb_call_params`, `swb_value_get`, `swb_value_index`, `swb_value_iter_next`).
/// Every reader checks that `json` lies inside the params of the callback running
/// on this thread and answers `SWB_RESULT_VALUE_NOT_LIVE` otherwise.
///
/// Lifetime: valid only until the callback whose call it came from returns (it
/// borrows the message); using it later, or on another thread, gives
/// `SWB_RESULT_VALUE_NOT_LIVE`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct swb_value {
    /// The value's exact JSON bytes; empty for `SWB_VALUE_KIND_ABSENT`.
    pub json: swb_slice,
    /// What the value is (read from its first byte).
    pub kind: swb_value_kind,
}

/// An iterator over the elements of an array or the members of an object, kept by
/// the caller (on its stack: no allocation, nothing to free). Set it up with
/// `swb_value_iterate`, then call `swb_value_iter_next` until it returns
/// `SWB_RESULT_ITER_END`.
///
/// Its fields are private: never read or write them. Valid, like the value it
/// walks, only until the callback returns; it may be copied (the copy goes on from
/// the same place).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct swb_value_iter {
    /// Private: the array's or object's bytes.
    _json: swb_slice,
    /// Private: where the next element or member starts, from the start of `_json`.
    _offset: usize,
    /// Private: `SWB_VALUE_KIND_ARRAY` or `SWB_VALUE_KIND_OBJECT`, as a number.
    pub(crate) _kind: u32,
}

impl swb_value_iter {
    /// An iterator over nothing (for initialising one before `swb_value_iterate`).
    #[cfg(test)]
    pub(crate) const EMPTY: swb_value_iter = swb_value_iter {
        _json: swb_slice::EMPTY,
        _offset: 0,
        _kind: 0,
    };
}

thread_local! {
    /// The params of the callback running on this thread: their first byte and
    /// length; `(null, 0)` outside callbacks and for calls without params.
    static LIVE: Cell<(*const u8, usize)> = const { Cell::new((core::ptr::null(), 0)) };
}

/// Records `params` as the running call's params on this thread until dropped
/// (then the previous record, if callbacks nest through another session, comes
/// back).
pub(crate) struct LiveParams {
    /// This thread's record (one thread-local access per call, not two: in a
    /// shared library each one is a call to `__tls_get_addr`). The raw pointer also
    /// keeps the guard on its thread (`!Send`).
    cell: *const Cell<(*const u8, usize)>,
    prev: (*const u8, usize),
}

impl LiveParams {
    /// Records `params` (empty when the call has none).
    ///
    /// The caller must keep `params` alive and unmodified, and this guard on its
    /// frame, for as long as the callback runs: readers build slices from the record.
    #[inline(always)]
    pub(crate) fn enter(params: &[u8]) -> LiveParams {
        LIVE.with(|cell| LiveParams {
            prev: cell.replace((params.as_ptr(), params.len())),
            cell,
        })
    }
}

impl Drop for LiveParams {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `cell` is this thread's `LIVE` (the guard is `!Send`, so it is
        // dropped on the thread that made it); a const-initialised thread-local
        // without a destructor stays valid for the whole life of its thread.
        unsafe { (*self.cell).set(self.prev) };
    }
}

/// The `len` bytes at address `addr`, if they lie inside the running callback's
/// params (`len > 0`); built from the recorded params pointer, not from `addr`.
#[inline(always)]
fn live_bytes<'a>(addr: usize, len: usize) -> Result<&'a [u8], swb_result> {
    let (base, live_len) = LIVE.get();
    let offset = addr.wrapping_sub(base as usize);
    if len == 0 || base.is_null() || len > live_len || offset > live_len - len {
        return Err(swb_result::ValueNotLive);
    }
    // SAFETY: `[offset, offset + len)` lies inside the recorded params
    // (`offset + len <= live_len`, checked above). `LiveParams` records them only
    // while the callback given them runs on this thread, which keeps them alive and
    // unmodified; this export runs inside that callback (the record is this
    // thread's, and it is cleared when the callback returns), so the slice does not
    // outlive them.
    Ok(unsafe { core::slice::from_raw_parts(base.add(offset), len) })
}

/// The kind of a value starting with each byte, as [`RawValue::kind`] derives it
/// (anything else is a number), read in one load rather than through a jump
/// table: the readers derive a kind on every call.
static KIND_OF_BYTE: [swb_value_kind; 256] = {
    let mut t = [swb_value_kind::Number; 256];
    t[b'n' as usize] = swb_value_kind::Null;
    t[b't' as usize] = swb_value_kind::Bool;
    t[b'f' as usize] = swb_value_kind::Bool;
    t[b'"' as usize] = swb_value_kind::String;
    t[b'[' as usize] = swb_value_kind::Array;
    t[b'{' as usize] = swb_value_kind::Object;
    t
};

/// The kind of the (non-empty) bytes `b`, as `kind_of(RawValue::kind())`.
#[inline(always)]
fn kind_from(b: &[u8]) -> swb_value_kind {
    KIND_OF_BYTE[usize::from(b[0])]
}

/// The kind number (`swb_value_kind as u32`) of the (non-empty) bytes `b`.
#[inline(always)]
fn kind_num(b: &[u8]) -> u32 {
    kind_from(b) as u32
}

#[cfg(test)]
fn kind_of(k: Kind) -> swb_value_kind {
    match k {
        Kind::Null => swb_value_kind::Null,
        Kind::Bool => swb_value_kind::Bool,
        Kind::Number => swb_value_kind::Number,
        Kind::String => swb_value_kind::String,
        Kind::Array => swb_value_kind::Array,
        Kind::Object => swb_value_kind::Object,
    }
}

/// The view of `v`, whose bytes are inside the live params.
#[inline(always)]
fn view_of(v: &RawValue<'_>) -> swb_value {
    let b = v.as_bytes();
    swb_value {
        json: swb_slice {
            ptr: b.as_ptr(),
            len: b.len(),
        },
        kind: kind_from(b),
    }
}

const ABSENT: swb_value = swb_value {
    json: swb_slice::EMPTY,
    kind: swb_value_kind::Absent,
};

/// The live bytes `json` and a kind number describe: `None` for the absent value.
#[inline(always)]
fn live_value<'a>(
    ptr: *const u8,
    len: usize,
    kind: u32,
) -> Result<Option<RawValue<'a>>, swb_result> {
    if len == 0 {
        return if kind == swb_value_kind::Absent as u32 {
            Ok(None)
        } else {
            Err(swb_result::ValueNotLive)
        };
    }
    let bytes = live_bytes(ptr as usize, len)?;
    if kind_num(bytes) != kind {
        return Err(swb_result::ValueNotLive);
    }
    let v = RawValue::from_validated(bytes).ok_or(swb_result::ValueNotLive)?;
    Ok(Some(v))
}

/// The value behind a pointer from C: `None` for the absent value.
///
/// # Safety
/// - `p` must be NULL or point to a readable `swb_value` (any bytes: the kind is
///   read as a number, the view checked against the live params).
#[inline(always)]
unsafe fn value_in<'a>(p: *const swb_value) -> Result<Option<RawValue<'a>>, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: `p` is non-null and readable per the contract. The fields are read one
    // by one, the kind as a `u32`: C may have stored any number there, which read as
    // `swb_value_kind` would be undefined behaviour.
    let (ptr, len, kind) = unsafe {
        (
            (&raw const (*p).json.ptr).read(),
            (&raw const (*p).json.len).read(),
            (&raw const (*p).kind).cast::<u32>().read(),
        )
    };
    live_value(ptr, len, kind)
}

/// A value that must be present (any kind).
///
/// # Safety
/// - As for [`value_in`].
#[inline(always)]
unsafe fn present<'a>(p: *const swb_value) -> Result<RawValue<'a>, swb_result> {
    // SAFETY: forwarded from the caller's contract.
    unsafe { value_in(p) }?.ok_or(swb_result::WrongKind)
}

/// A value that must be of kind `k`.
///
/// # Safety
/// - As for [`value_in`].
#[inline(always)]
unsafe fn of_kind<'a>(p: *const swb_value, k: swb_value_kind) -> Result<RawValue<'a>, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: as in `value_in`: `p` is non-null and readable per the contract, the
    // fields are read one by one, the kind as a `u32`.
    let (ptr, len, kind) = unsafe {
        (
            (&raw const (*p).json.ptr).read(),
            (&raw const (*p).json.len).read(),
            (&raw const (*p).kind).cast::<u32>().read(),
        )
    };
    // `live_value` checked that `kind` is the kind of the bytes' first byte, so
    // comparing it with `k` is comparing the value's kind (no second derivation).
    match live_value(ptr, len, kind)? {
        Some(v) if kind == k as u32 => Ok(v),
        _ => Err(swb_result::WrongKind),
    }
}

/// The body of the scalar readers: the value of kind `k` at `value`, read by
/// `read` (`None`, a number out of the output's range, gives
/// `SWB_RESULT_NOT_REPRESENTABLE`), written to `out` on success only.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `T`.
#[inline(always)]
unsafe fn read_scalar<T>(
    value: *const swb_value,
    out: *mut T,
    k: swb_value_kind,
    read: impl FnOnce(&RawValue<'_>) -> Option<T>,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(value, k) }?;
        let x = read(&v).ok_or(swb_result::NotRepresentable)?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(x) };
        Ok(())
    })
}

/// Gives the params of the running call as a value: an array or an object, or
/// `SWB_VALUE_KIND_ABSENT` (with an empty view) when the call has none (absent or
/// `null`); the readers then answer `SWB_RESULT_WRONG_KIND`.
///
/// - `call`: the call the running callback received.
/// - `out`: receives the value, valid until the callback returns.
///
/// Returns `SWB_RESULT_VALUE_NOT_LIVE` if `call` is not the call of a callback
/// running on this thread (kept from an earlier callback, or made up).
///
/// # Safety
/// - `call` must be NULL or point to a readable `swb_call`.
/// - `out` must be NULL or point to a writable `swb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_call_params(call: *const swb_call, out: *mut swb_value) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        if call.is_null() {
            return Err(swb_result::NullParameter);
        }
        // SAFETY: `call` is non-null and readable per the contract; the view is
        // read as two plain numbers.
        let (ptr, len) = unsafe {
            (
                (&raw const (*call).params.ptr).read(),
                (&raw const (*call).params.len).read(),
            )
        };
        let value = if len == 0 {
            ABSENT
        } else {
            let (base, live_len) = LIVE.get();
            if ptr != base || len != live_len {
                return Err(swb_result::ValueNotLive);
            }
            let bytes = live_bytes(ptr as usize, len)?;
            view_of(&RawValue::from_validated(bytes).ok_or(swb_result::ValueNotLive)?)
        };
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// Reads a boolean (`true` or `false`).
///
/// Every `swb_value_*` reader returns `SWB_RESULT_WRONG_KIND` for a value of
/// another kind (the absent value included), `SWB_RESULT_VALUE_NOT_LIVE` for a
/// value not from the callback running on this thread, and writes its output only
/// on `SWB_RESULT_OK`.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_as_bool(value: *const swb_value, out: *mut bool) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { read_scalar(value, out, swb_value_kind::Bool, |v| v.as_bool()) }
}

/// Reads a number as a signed 64-bit integer: only an integer token (no fraction,
/// no exponent: `1.0` and `1e2` are refused) in range. `SWB_RESULT_NOT_REPRESENTABLE`
/// for any other number.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_as_int64(value: *const swb_value, out: *mut i64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { read_scalar(value, out, swb_value_kind::Number, |v| v.as_i64()) }
}

/// Reads a number as an unsigned 64-bit integer: only a non-negative integer
/// token (no sign, fraction or exponent) in range. `SWB_RESULT_NOT_REPRESENTABLE`
/// for any other number (`-0` included).
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_as_uint64(value: *const swb_value, out: *mut u64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { read_scalar(value, out, swb_value_kind::Number, |v| v.as_u64()) }
}

/// Reads a number as a double (the nearest one; integers too). A number beyond a
/// double's range (`1e400`) gives `SWB_RESULT_NOT_REPRESENTABLE`.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_as_double(value: *const swb_value, out: *mut f64) -> swb_result {
    // SAFETY: forwarded from the caller's contract.
    unsafe { read_scalar(value, out, swb_value_kind::Number, |v| v.as_f64()) }
}

/// Borrows a string's text without copying, when it holds no escapes: `out`
/// receives a view of the UTF-8 between the quotes (not NUL-terminated; the empty
/// view for `""`), valid until the callback returns. A string with an escape
/// (`\n`, `\u00e9`, ...) gives `SWB_RESULT_STRING_ESCAPED`: copy it with
/// `swb_value_copy_str`.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `swb_slice`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_as_plain_str(
    value: *const swb_value,
    out: *mut swb_slice,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(value, swb_value_kind::String) }?;
        let s = v.as_plain_str().ok_or(swb_result::StringEscaped)?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(swb_slice::of(s.as_bytes())) };
        Ok(())
    })
}

/// Copies a string's text, unescaped, as UTF-8 and a terminating NUL into `buf`
/// (snprintf-style). A lone surrogate escape (`\ud800` alone, valid JSON) becomes
/// U+FFFD; `\u0000` becomes a NUL byte inside the text (use `*out_n`, not `strlen`).
///
/// - `buf`, `len`: the destination and its size in bytes; never written past `len`.
///   `len` may be 0 (and `buf` NULL) to ask for the size only.
/// - `out_n`: receives the text's length in bytes, without the NUL.
///
/// Returns `SWB_RESULT_BUFFER_TOO_SMALL` when the text and its NUL do not fit: then
/// `*out_n` still receives the text's length (`*out_n + 1` bytes are needed) and
/// `buf` is left untouched.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `buf` must be NULL or point to `len` writable bytes, not overlapping the value.
/// - `out_n` must be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_copy_str(
    value: *const swb_value,
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> swb_result {
    boundary::run(|| {
        let out_n = out_ptr(out_n)?;
        if buf.is_null() && len > 0 {
            return Err(swb_result::NullParameter);
        }
        if len > isize::MAX as usize {
            return Err(swb_result::InvalidArgument);
        }
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(value, swb_value_kind::String) }?;
        let raw_len = v.as_raw_str().ok_or(swb_result::ValueNotLive)?.len();
        // The text is never longer than its escaped form: only a buffer shorter
        // than that needs the decoded length, one pass, before anything is written.
        let cap = len.saturating_sub(1).min(raw_len);
        if len <= raw_len {
            let need = v.unescaped_len().ok_or(swb_result::ValueNotLive)?;
            if need >= len {
                // SAFETY: `out_n` is non-null and writable per the contract (the
                // one output this failure writes, as documented).
                unsafe { out_n.write(need) };
                return Err(swb_result::BufferTooSmall);
            }
        }
        // It fits in `cap` bytes. Zero them first, so that the slice below covers
        // initialised bytes only.
        let buf = buf.cast::<u8>();
        // SAFETY: `cap + 1 <= len` (`len > 0` here: the text plus its NUL fit) and
        // `buf` points to `len` writable bytes per the contract.
        unsafe { core::ptr::write_bytes(buf, 0, cap + 1) };
        // SAFETY: as above; the bytes are initialised, and the caller promises they
        // do not overlap the value, the one other memory used meanwhile.
        let dst = unsafe { core::slice::from_raw_parts_mut(buf, cap + 1) };
        let n = v
            .unescape_into(&mut dst[..cap])
            .ok_or(swb_result::ValueNotLive)?;
        dst[n] = 0;
        // SAFETY: `out_n` is non-null and writable per the contract.
        unsafe { out_n.write(n) };
        Ok(())
    })
}

/// Whether a string's text, unescaped, equals `str` (`len` bytes of UTF-8): for
/// example to tell object keys from `swb_value_iter_next` apart without copying.
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `str` must be NULL or point to `len` readable bytes.
/// - `out` must be NULL or point to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_str_eq(
    value: *const swb_value,
    str: *const c_char,
    len: usize,
    out: *mut bool,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(value, swb_value_kind::String) }?;
        // SAFETY: forwarded from the caller's contract.
        let s = unsafe { text(str, len) }?;
        let eq = v.str_eq(s);
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(eq) };
        Ok(())
    })
}

/// Looks up the member of an object called `key` (`key_len` bytes of UTF-8),
/// compared after unescaping (`"min\u0075end"` is `minuend`); the first one if the
/// name repeats. `SWB_RESULT_NOT_FOUND` if there is none.
///
/// - `out`: receives the member's value, valid until the callback returns.
///
/// # Safety
/// - `object` must be NULL or point to a readable `swb_value`.
/// - `key` must be NULL or point to `key_len` readable bytes.
/// - `out` must be NULL or point to a writable `swb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_get(
    object: *const swb_value,
    key: *const c_char,
    key_len: usize,
    out: *mut swb_value,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(object, swb_value_kind::Object) }?;
        // SAFETY: forwarded from the caller's contract.
        let key = unsafe { text(key, key_len) }?;
        let mut members = v.object_iter().ok_or(swb_result::WrongKind)?;
        let (_, m) = members
            .find(|(k, _)| k.eq_str(key))
            .ok_or(swb_result::NotFound)?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(view_of(&m)) };
        Ok(())
    })
}

/// The element of an array at `index` (from 0). `SWB_RESULT_INDEX_OUT_OF_RANGE` at
/// or past the array's length.
///
/// - `out`: receives the element, valid until the callback returns.
///
/// # Safety
/// - `array` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `swb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_index(
    array: *const swb_value,
    index: usize,
    out: *mut swb_value,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { of_kind(array, swb_value_kind::Array) }?;
        let mut elements = v.array_iter().ok_or(swb_result::WrongKind)?;
        let e = elements.nth(index).ok_or(swb_result::IndexOutOfRange)?;
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(view_of(&e)) };
        Ok(())
    })
}

/// The number of elements of an array or members of an object (one pass over its
/// bytes, 64 at a time; nothing else is read).
///
/// # Safety
/// - `value` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_count(value: *const swb_value, out: *mut usize) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { present(value) }?;
        let n = match (v.array_iter(), v.object_iter()) {
            (Some(e), _) => e.count(),
            (_, Some(m)) => m.count(),
            _ => return Err(swb_result::WrongKind),
        };
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Sets up `out` to walk the elements of an array or the members of an object, in
/// order, with `swb_value_iter_next`. Nothing is allocated: the iterator lives
/// where the caller put it (its stack) and is valid until the callback returns.
///
/// ```c
/// swb_value_iter it;
/// swb_value key, v;
/// swb_result rc;
/// if (swb_value_iterate(&params, &it) != SWB_RESULT_OK) return ...;
/// while ((rc = swb_value_iter_next(&it, &key, &v)) == SWB_RESULT_OK) { ... }
/// if (rc != SWB_RESULT_ITER_END) return ...;   // an error, not the end
/// ```
///
/// # Safety
/// - `container` must be NULL or point to a readable `swb_value`.
/// - `out` must be NULL or point to a writable `swb_value_iter`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_iterate(
    container: *const swb_value,
    out: *mut swb_value_iter,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let v = unsafe { present(container) }?;
        let b = v.as_bytes();
        let kind = kind_num(b);
        let offset = if kind == swb_value_kind::Array as u32 {
            v.array_iter().ok_or(swb_result::WrongKind)?.offset()
        } else if kind == swb_value_kind::Object as u32 {
            v.object_iter().ok_or(swb_result::WrongKind)?.offset()
        } else {
            return Err(swb_result::WrongKind);
        };
        let it = swb_value_iter {
            _json: swb_slice {
                ptr: b.as_ptr(),
                len: b.len(),
            },
            _offset: offset,
            _kind: kind,
        };
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(it) };
        Ok(())
    })
}

/// Steps an iterator: `out_value` receives the next element or member value and
/// `out_key` (optional: may be NULL) the member's name as a string value (use
/// `swb_value_str_eq`, `swb_value_as_plain_str` or `swb_value_copy_str` on it), or
/// `SWB_VALUE_KIND_ABSENT` for an array element. Both are valid until the callback
/// returns.
///
/// Returns `SWB_RESULT_ITER_END` (and writes nothing) once every element or member
/// was given, and on every call after that. Nested arrays and objects are handed
/// out whole: iterate them with an iterator of their own.
///
/// # Safety
/// - `iter` must be NULL or point to a `swb_value_iter` set up by
///   `swb_value_iterate` (readable and writable).
/// - `out_key` must be NULL or point to a writable `swb_value`.
/// - `out_value` must be NULL or point to a writable `swb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_value_iter_next(
    iter: *mut swb_value_iter,
    out_key: *mut swb_value,
    out_value: *mut swb_value,
) -> swb_result {
    boundary::run(|| {
        let out_value = out_ptr(out_value)?;
        if iter.is_null() {
            return Err(swb_result::NullParameter);
        }
        // SAFETY: `iter` is non-null and readable per the contract; its fields are
        // plain numbers and pointers (any bytes are valid), and the view is checked
        // against the live params before use.
        let (ptr, len, offset, kind) = unsafe {
            (
                (&raw const (*iter)._json.ptr).read(),
                (&raw const (*iter)._json.len).read(),
                (&raw const (*iter)._offset).read(),
                (&raw const (*iter)._kind).read(),
            )
        };
        let v = live_value(ptr, len, kind)?.ok_or(swb_result::ValueNotLive)?;
        // `live_value` checked `kind` against the bytes' first byte.
        let (key, value, next) = if kind == swb_value_kind::Array as u32 {
            let mut e = v.array_iter_at(offset).ok_or(swb_result::ValueNotLive)?;
            let value = e.next().ok_or(swb_result::IterEnd)?;
            (ABSENT, value, e.offset())
        } else if kind == swb_value_kind::Object as u32 {
            let mut m = v.object_iter_at(offset).ok_or(swb_result::ValueNotLive)?;
            let (k, value) = m.next_delimited().ok_or(swb_result::IterEnd)?;
            // The key's quotes are the bytes either side of its name.
            let b = v.as_bytes();
            let at = (k.raw().as_ptr() as usize).wrapping_sub(b.as_ptr() as usize);
            let quoted = at
                .checked_sub(1)
                .and_then(|start| b.get(start..at + k.raw().len() + 1))
                .ok_or(swb_result::ValueNotLive)?;
            let key = RawValue::from_validated(quoted).ok_or(swb_result::ValueNotLive)?;
            (view_of(&key), value, m.offset())
        } else {
            return Err(swb_result::ValueNotLive);
        };
        // SAFETY: `iter` is non-null and writable per the contract.
        unsafe { (&raw mut (*iter)._offset).write(next) };
        if !out_key.is_null() {
            // SAFETY: non-null, and writable per the contract.
            unsafe { out_key.write(key) };
        }
        // SAFETY: `out_value` is non-null and writable per the contract.
        unsafe { out_value.write(view_of(&value)) };
        Ok(())
    })
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    #[test]
    fn kind_table_agrees_with_raw_value_kind() {
        for b in 0..=255u8 {
            let bytes = [b];
            let v = RawValue::from_validated(&bytes).unwrap();
            assert_eq!(kind_num(&bytes), kind_of(v.kind()) as u32, "byte {b}");
            assert_eq!(kind_from(&bytes), kind_of(v.kind()), "byte {b}");
        }
    }
}
