//! [`CancellationToken`]: a flag a call's handler can check or await, fired by the
//! protocol's cancel notification or by the connection's end. Runtime-neutral:
//! `std::task` wakers only.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// A cancellation flag shared by a call and whoever may cancel it: cheap to clone,
/// fired once ([`CancellationToken::cancel`]), checked
/// ([`CancellationToken::is_cancelled`]) or awaited ([`CancellationToken::cancelled`]).
///
/// A cancelled async call's future is dropped by the connection's driver; the token
/// lets a handler notice it earlier (between steps of a long computation, say) or
/// hand cancellation on to work it spawned.
///
/// ```
/// use switchboard::connection::CancellationToken;
/// let token = CancellationToken::new();
/// let seen_by_handler = token.clone();
/// assert!(!seen_by_handler.is_cancelled());
/// token.cancel();
/// assert!(seen_by_handler.is_cancelled());
/// // Already cancelled: the future is ready at its first poll.
/// let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// let mut fut = std::pin::pin!(seen_by_handler.cancelled());
/// assert!(fut.as_mut().poll(&mut cx).is_ready());
/// # use std::future::Future;
/// ```
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    /// The wakers of the [`Cancelled`] futures now waiting, by slot.
    wakers: Mutex<Slots>,
}

/// Waker slots; a future takes one at its first pending poll and frees it when
/// dropped, so the list never outgrows the futures alive.
#[derive(Default)]
struct Slots {
    wakers: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl CancellationToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels: every clone sees it, every waiting [`Cancelled`] future wakes.
    /// Cancelling again does nothing.
    pub fn cancel(&self) {
        if self.inner.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        let wakers = std::mem::take(&mut self.inner.lock().wakers);
        for w in wakers.into_iter().flatten() {
            w.wake();
        }
    }

    /// Whether [`CancellationToken::cancel`] was called on this token or a clone.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// A future that completes once the token is cancelled (at once if it is).
    /// It owns a clone of the token, so it may be moved into a spawned task.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            token: self.clone(),
            slot: None,
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Slots> {
        // A panic while holding the lock cannot leave the slots inconsistent.
        self.wakers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// The future [`CancellationToken::cancelled`] returns.
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use switchboard::connection::CancellationToken;
/// let token = CancellationToken::new();
/// let mut cancelled = pin!(token.cancelled());
/// let mut cx = Context::from_waker(Waker::noop());
/// assert_eq!(cancelled.as_mut().poll(&mut cx), Poll::Pending);
/// token.cancel();
/// assert_eq!(cancelled.as_mut().poll(&mut cx), Poll::Ready(()));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct Cancelled {
    token: CancellationToken,
    slot: Option<usize>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        let inner = Arc::clone(&self.token.inner);
        let mut slots = inner.lock();
        // Checked again under the lock: `cancel` sets the flag before it takes
        // the wakers, so a waker stored now is either taken by it or not needed.
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        let waker = Some(cx.waker().clone());
        match self.slot {
            Some(i) if i < slots.wakers.len() => slots.wakers[i] = waker,
            _ => {
                let i = match slots.free.pop() {
                    Some(i) => {
                        slots.wakers[i] = waker;
                        i
                    }
                    None => {
                        slots.wakers.push(waker);
                        slots.wakers.len() - 1
                    }
                };
                self.slot = Some(i);
            }
        }
        Poll::Pending
    }
}

impl Drop for Cancelled {
    fn drop(&mut self) {
        let Some(i) = self.slot else { return };
        let mut slots = self.token.inner.lock();
        // After `cancel` took the wakers the list is empty: nothing to free.
        if i < slots.wakers.len() {
            slots.wakers[i] = None;
            slots.free.push(i);
        }
    }
}

impl fmt::Debug for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancelled")
            .field("token", &self.token)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn waiting_futures_wake_once_and_free_their_slots() {
        let token = CancellationToken::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut a = Box::pin(token.cancelled());
        let mut b = Box::pin(token.cancelled());
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(a.as_mut().poll(&mut cx).is_pending()); // same slot again
        assert!(b.as_mut().poll(&mut cx).is_pending());
        assert_eq!(token.inner.lock().wakers.len(), 2);
        drop(b);
        assert_eq!(token.inner.lock().free, vec![1]);
        // A new future reuses the freed slot: the list does not grow.
        let mut c = Box::pin(token.cancelled());
        assert!(c.as_mut().poll(&mut cx).is_pending());
        assert_eq!(token.inner.lock().wakers.len(), 2);
        token.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 2); // a and c
        token.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert!(a.as_mut().poll(&mut cx).is_ready());
        assert!(c.as_mut().poll(&mut cx).is_ready());
        drop((a, c)); // slots beyond the emptied list: nothing to free
        assert!(token.inner.lock().wakers.is_empty());
    }

    #[test]
    #[cfg_attr(target_os = "wasi", ignore = "spawns threads: wasm32-wasip1 has none")]
    fn cancel_from_another_thread_wakes_a_blocked_waiter() {
        let token = CancellationToken::new();
        let t = token.clone();
        let h = std::thread::spawn(move || crate::dispatch::async_call::block_on(t.cancelled()));
        std::thread::sleep(std::time::Duration::from_millis(10));
        token.cancel();
        h.join().unwrap();
    }
}
