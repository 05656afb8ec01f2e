//! Sessions: one per thread or connection, handling whole messages.

use core::cell::{Cell, UnsafeCell};

use switchboard::Session;

use crate::boundary::{self, bytes, out_ptr};
use crate::result::swb_result;
use crate::router::{router_arc, swb_router};

/// Handles messages against a router, reusing its parser state and response buffer:
/// after warm-up a message costs no heap allocation in the core.
///
/// Ownership: owned by the caller (Box) from `swb_session_new` until
/// `swb_session_free`; it holds its own reference to the router.
/// Thread safety: one thread at a time (not safe for concurrent use); it may move
/// between threads between calls. Give each thread or connection its own session.
pub struct swb_session {
    _private: [u8; 0],
}

struct FfiSession {
    /// Set while `handle` runs, to refuse a re-entrant call from a callback.
    busy: Cell<bool>,
    inner: UnsafeCell<Session>,
}

/// Clears the busy flag when `handle` ends, even by a panic.
struct Busy<'a>(&'a Cell<bool>);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// The session behind a handle. Only a shared reference is made: a re-entrant call
/// from a callback may make another while the outer call mutates the inner session.
///
/// # Safety
/// - `p` must be NULL or a live session from `swb_session_new`, used by this thread
///   only.
unsafe fn session_ref<'a>(p: *const swb_session) -> Result<&'a FfiSession, swb_result> {
    if p.is_null() {
        return Err(swb_result::NullParameter);
    }
    // SAFETY: per the contract, a live Box<FfiSession>; shared access only.
    Ok(unsafe { &*p.cast::<FfiSession>() })
}

/// Creates a session for `router` (the session takes its own reference).
///
/// - `out`: receives the session; free it with `swb_session_free`.
///
/// # Safety
/// - `router` must be NULL or a live router reference.
/// - `out` must be NULL or point to a writable `swb_session *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_session_new(
    router: *const swb_router,
    out: *mut *mut swb_session,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let router = unsafe { router_arc(router) }?;
        let s = Box::new(FfiSession {
            busy: Cell::new(false),
            inner: UnsafeCell::new(Session::new(router)),
        });
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(Box::into_raw(s).cast()) };
        Ok(())
    })
}

/// Frees a session and releases its router reference. NULL is a no-op; so is a call
/// from inside one of the session's own callbacks (the session is not freed then).
///
/// # Safety
/// - `session` must be NULL or a live session, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_session_free(session: *mut swb_session) {
    boundary::run_or((), || {
        // SAFETY: forwarded from the caller's contract.
        let Ok(s) = (unsafe { session_ref(session) }) else {
            return;
        };
        if s.busy.get() {
            return;
        }
        // SAFETY: per the contract, a Box<FfiSession> leaked by `swb_session_new`,
        // not in use (checked above), freed exactly once, here.
        drop(unsafe { Box::from_raw(session.cast::<FfiSession>()) });
    })
}

/// Handles one whole message (a request, a notification, a response, a batch, or bad
/// bytes: all get exactly what JSON-RPC 2.0 and SPEC.md prescribe) and runs the
/// callbacks it calls.
///
/// - `input`, `input_len`: the message, borrowed for this call only. It must not
///   point into this session's own response buffer.
/// - `out_response`, `out_response_len`: receive the response bytes (one JSON text,
///   not NUL-terminated), valid until the next call on this session or its free.
///   When there is nothing to send (a notification, a Response object, a batch of
///   them) they receive NULL and 0: a response is never empty, so a length of 0
///   always means "send nothing" (HTTP: 204).
///
/// Returns `SWB_RESULT_OK` for every message, bad ones included (their JSON-RPC error
/// is in the response). `SWB_RESULT_SESSION_BUSY` if called from inside one of this
/// session's own callbacks.
///
/// # Safety
/// - `session` must be NULL or a live session, not used by another thread now.
/// - `input` must be NULL or point to `input_len` readable bytes, unchanged during
///   the call.
/// - `out_response` and `out_response_len` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_session_handle(
    session: *mut swb_session,
    input: *const u8,
    input_len: usize,
    out_response: *mut *const u8,
    out_response_len: *mut usize,
) -> swb_result {
    boundary::run(|| {
        let out_response = out_ptr(out_response)?;
        let out_response_len = out_ptr(out_response_len)?;
        // SAFETY: forwarded from the caller's contract.
        let s = unsafe { session_ref(session) }?;
        // SAFETY: forwarded from the caller's contract.
        let input = unsafe { bytes(input, input_len) }?;
        if s.busy.replace(true) {
            return Err(swb_result::SessionBusy);
        }
        let _busy = Busy(&s.busy);
        // SAFETY: the busy flag makes this the only live reference to the inner
        // session: a re-entrant call stops at the check above, and other threads are
        // excluded by the contract.
        let inner = unsafe { &mut *s.inner.get() };
        let (ptr, len) = match inner.handle(input) {
            Some(resp) => (resp.as_ptr(), resp.len()),
            None => (core::ptr::null(), 0),
        };
        // SAFETY: both outputs are non-null and writable per the contract.
        unsafe {
            out_response.write(ptr);
            out_response_len.write(len);
        }
        Ok(())
    })
}

/// The number of Response objects this session received and dropped because the
/// router has no response sink.
///
/// # Safety
/// - `session` must be NULL or a live session, not used by another thread now.
/// - `out` must be NULL or point to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn swb_session_dropped_responses(
    session: *const swb_session,
    out: *mut u64,
) -> swb_result {
    boundary::run(|| {
        let out = out_ptr(out)?;
        // SAFETY: forwarded from the caller's contract.
        let s = unsafe { session_ref(session) }?;
        if s.busy.get() {
            return Err(swb_result::SessionBusy);
        }
        // SAFETY: not busy: no mutable reference to the inner session is live.
        let n = unsafe { &*s.inner.get() }.dropped_responses();
        // SAFETY: `out` is non-null and writable per the contract.
        unsafe { out.write(n) };
        Ok(())
    })
}
