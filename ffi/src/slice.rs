//! Borrowed byte views handed to C.

/// A borrowed view of bytes owned by someone else: `len` bytes at `ptr`, not
/// NUL-terminated. An empty view has `ptr == NULL` and `len == 0`.
///
/// Each function or struct that hands out a `swb_slice` says how long it stays valid
/// (for example: until the callback returns, or until the next call on the handle).
/// Never free it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct swb_slice {
    /// The first byte, or NULL when `len` is 0.
    pub ptr: *const u8,
    /// The number of bytes.
    pub len: usize,
}

impl swb_slice {
    /// The empty view.
    pub(crate) const EMPTY: swb_slice = swb_slice {
        ptr: core::ptr::null(),
        len: 0,
    };

    /// A view of `b` (the empty view when `b` is empty).
    #[inline(always)]
    pub(crate) fn of(b: &[u8]) -> swb_slice {
        if b.is_empty() {
            Self::EMPTY
        } else {
            swb_slice {
                ptr: b.as_ptr(),
                len: b.len(),
            }
        }
    }

    /// A view of `b`, or the empty view.
    #[inline(always)]
    pub(crate) fn of_opt(b: Option<&[u8]>) -> swb_slice {
        b.map_or(Self::EMPTY, Self::of)
    }

    /// The bytes again, for this crate's tests.
    ///
    /// # Safety
    /// - The view must still be valid.
    #[cfg(test)]
    pub(crate) unsafe fn as_bytes<'a>(&self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: a non-empty view points to `len` bytes, valid per the caller.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}
