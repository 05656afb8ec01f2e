//! The panic boundary and the pointer checks every export goes through.
//!
//! Every `extern "C"` function body runs inside [`run`] (or [`run_or`]), so that no
//! panic unwinds into C: it becomes `SWB_RESULT_PANIC` (or a neutral default).

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::result::swb_result;

/// Runs `f` behind the panic boundary, mapping `Err(code)` and panics to codes.
#[inline(always)]
pub(crate) fn run(f: impl FnOnce() -> Result<(), swb_result>) -> swb_result {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => swb_result::Ok,
        Ok(Err(code)) => code,
        Err(_) => swb_result::Panic,
    }
}

/// Runs `f` behind the panic boundary, giving `default` if it panics.
#[inline(always)]
pub(crate) fn run_or<T>(default: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(default)
}

/// Checks that an output pointer is non-NULL. Writing through it stays the caller's
/// (unsafe) business, and happens only once everything else succeeded.
#[inline(always)]
pub(crate) fn out_ptr<T>(p: *mut T) -> Result<*mut T, swb_result> {
    if p.is_null() {
        Err(swb_result::NullParameter)
    } else {
        Ok(p)
    }
}

/// Borrows `len` bytes at `ptr`. A length of 0 gives the empty slice whatever `ptr`
/// is (C callers may pass NULL then).
///
/// # Safety
/// - When `len > 0` and `ptr` is non-null, `ptr` must point to `len` readable bytes
///   that stay valid and unmodified for `'a`.
#[inline(always)]
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], swb_result> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(swb_result::NullParameter);
    }
    if len > isize::MAX as usize {
        return Err(swb_result::InvalidArgument);
    }
    // SAFETY: non-null, `len <= isize::MAX`, and the caller promises `len` readable
    // bytes valid for 'a.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// Borrows `len` bytes of UTF-8 text at `ptr` (see [`bytes`]).
///
/// # Safety
/// - As for [`bytes`].
#[inline]
pub(crate) unsafe fn text<'a>(
    ptr: *const core::ffi::c_char,
    len: usize,
) -> Result<&'a str, swb_result> {
    // SAFETY: forwarded from the caller.
    let b = unsafe { bytes(ptr.cast(), len) }?;
    if b.is_ascii() {
        // SAFETY: ASCII is UTF-8. (`is_ascii` is a word-at-a-time check, cheaper than
        // `from_utf8`'s full validation for the short strings callbacks write.)
        return Ok(unsafe { core::str::from_utf8_unchecked(b) });
    }
    core::str::from_utf8(b).map_err(|_| swb_result::InvalidUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_codes() {
        let rc = run(|| panic!("boom"));
        assert_eq!(rc, swb_result::Panic);
        assert_eq!(run_or(7, || panic!("boom")), 7);
        assert_eq!(
            run(|| Err(swb_result::InvalidJson)),
            swb_result::InvalidJson
        );
    }

    #[test]
    fn slices_accept_null_only_when_empty() {
        // SAFETY: NULL with length 0 is the empty slice.
        assert_eq!(unsafe { bytes(core::ptr::null(), 0) }, Ok(&[][..]));
        // SAFETY: NULL with a length is refused before any read.
        let r = unsafe { bytes(core::ptr::null(), 3) };
        assert_eq!(r, Err(swb_result::NullParameter));
        let s = b"\xff";
        // SAFETY: `s` is one readable byte.
        let r = unsafe { text(s.as_ptr().cast(), 1) };
        assert_eq!(r, Err(swb_result::InvalidUtf8));
    }
}
