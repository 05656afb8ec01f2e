//! The line of [`SubscriptionSink::send_async`](super::SubscriptionSink::send_async)
//! calls waiting for room in one subscription: first come, first served, each
//! woken when the one before it is done, when the driver takes one of the
//! subscription's notifications off the outgoing queue, or when the
//! subscription closes. No runtime: `std` locks and wakers.
//!
//! Wakeups are not lost: a waiter checks its condition under the line's lock
//! after it is in the line (counted in `waiters` before that), and a waker
//! (`wake_front`) changes the condition before it reads `waiters` and takes the
//! lock; so either the waiter sees the change or the waker sees the waiter.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// One subscription's waiting senders, in the order they came.
#[derive(Default)]
pub(crate) struct Room {
    line: Mutex<Line>,
    /// How many are in the line (read without the lock by `wake_front`).
    waiters: AtomicUsize,
}

#[derive(Default)]
struct Line {
    next: u64,
    /// Tickets in order, each with the waker of its last poll.
    waiting: VecDeque<(u64, Option<Waker>)>,
}

impl Room {
    fn line(&self) -> MutexGuard<'_, Line> {
        self.line.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Joins the end of the line; the ticket leaves it when dropped.
    pub(crate) fn enter(&self) -> Ticket<'_> {
        let mut line = self.line();
        let n = line.next;
        line.next += 1;
        line.waiting.push_back((n, None));
        self.waiters.fetch_add(1, Ordering::SeqCst);
        Ticket { room: self, n }
    }

    /// Ready once `ticket` is first in line and `ready()` holds (checked under
    /// the lock); otherwise keeps `cx`'s waker for [`Room::wake_front`].
    pub(crate) fn poll_turn(
        &self,
        ticket: &Ticket<'_>,
        cx: &mut Context<'_>,
        ready: impl Fn() -> bool,
    ) -> Poll<()> {
        let mut line = self.line();
        let first = line.waiting.front().is_some_and(|(n, _)| *n == ticket.n);
        if first && ready() {
            return Poll::Ready(());
        }
        if let Some((_, w)) = line.waiting.iter_mut().find(|(n, _)| *n == ticket.n) {
            match w {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => *w = Some(cx.waker().clone()),
            }
        }
        Poll::Pending
    }

    /// Wakes the first in line: its condition may hold now (room freed, the
    /// one before it left). Call it after changing the condition.
    pub(crate) fn wake_front(&self) {
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let waker = self.line().waiting.front_mut().and_then(|(_, w)| w.take());
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes every one in line (the subscription closed: all of them finish).
    pub(crate) fn wake_all(&self) {
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let wakers: Vec<Waker> = self
            .line()
            .waiting
            .iter_mut()
            .filter_map(|(_, w)| w.take())
            .collect();
        for w in wakers {
            w.wake();
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.waiters.load(Ordering::SeqCst)
    }
}

/// A place in a [`Room`]'s line; dropping it leaves the line and, if it was
/// first, wakes the next one.
pub(crate) struct Ticket<'a> {
    room: &'a Room,
    n: u64,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let next = {
            let mut line = self.room.line();
            let Some(i) = line.waiting.iter().position(|(n, _)| *n == self.n) else {
                return;
            };
            line.waiting.remove(i);
            self.room.waiters.fetch_sub(1, Ordering::SeqCst);
            if i == 0 {
                line.waiting.front_mut().and_then(|(_, w)| w.take())
            } else {
                None
            }
        };
        if let Some(w) = next {
            w.wake();
        }
    }
}
