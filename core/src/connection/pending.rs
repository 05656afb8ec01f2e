//! The connection's two tables: the requests it sent the client that await an
//! answer ([`Pending`], keyed by the id's exact bytes), and the client's calls now
//! running ([`InFlight`], each with its cancellation token).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use super::{CancellationToken, OwnedValue, PeerError};

/// Locks `m`; a panic while it was held cannot leave these tables inconsistent
/// (every update is one map operation), so a poisoned lock is taken as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Requests sent to the client, waiting for its response.
#[derive(Default)]
pub(crate) struct Pending {
    state: Mutex<PendingState>,
}

#[derive(Default)]
struct PendingState {
    entries: HashMap<Box<[u8]>, Slot>,
    /// Set by [`Pending::close`]: nothing is waited for any more.
    closed: bool,
    /// The driver's timer ([`Pending::poll_expire`]) and the deadline it sleeps
    /// until (`None`: no deadline, it sleeps until woken).
    timer: Option<(Waker, Option<Instant>)>,
}

struct Slot {
    deadline: Option<Instant>,
    state: SlotState,
}

enum SlotState {
    /// No answer yet; the waker of the future awaiting it.
    Waiting(Option<Waker>),
    /// Answered (or failed): taken by the awaiting future.
    Done(Result<OwnedValue, PeerError>),
}

impl Pending {
    /// Registers the request `id` (bytes of an id the connection allocated).
    pub(crate) fn insert(&self, id: Box<[u8]>, deadline: Option<Instant>) -> Result<(), PeerError> {
        let mut s = lock(&self.state);
        if s.closed {
            return Err(PeerError::Closed);
        }
        let wake_timer = match (&s.timer, deadline) {
            (Some((_, None)), Some(_)) => true,
            (Some((_, Some(t))), Some(d)) => d < *t,
            _ => false,
        };
        s.entries.insert(
            id,
            Slot {
                deadline,
                state: SlotState::Waiting(None),
            },
        );
        if wake_timer && let Some((w, _)) = s.timer.take() {
            drop(s);
            w.wake();
        }
        Ok(())
    }

    /// The outcome for `id` once there is one; registers `cx`'s waker otherwise.
    /// A ready outcome removes the entry.
    pub(crate) fn poll(
        &self,
        id: &[u8],
        cx: &mut Context<'_>,
    ) -> Poll<Result<OwnedValue, PeerError>> {
        let mut s = lock(&self.state);
        let Some(slot) = s.entries.get_mut(id) else {
            // Only removed once taken: polled again after completion.
            return Poll::Ready(Err(PeerError::Closed));
        };
        match &mut slot.state {
            SlotState::Waiting(w) => {
                match w {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *w = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
            SlotState::Done(_) => {
                let Some(Slot {
                    state: SlotState::Done(outcome),
                    ..
                }) = s.entries.remove(id)
                else {
                    unreachable!("the entry was just seen done");
                };
                Poll::Ready(outcome)
            }
        }
    }

    /// Forgets `id` (its future was dropped, or took its outcome).
    pub(crate) fn remove(&self, id: &[u8]) {
        lock(&self.state).entries.remove(id);
    }

    /// Completes the request `id` with `outcome`; `false` when no request with
    /// these exact id bytes is waiting (unknown, answered already, timed out).
    /// The outcome is made only for a match: an unmatched response costs no
    /// allocation.
    pub(crate) fn complete(
        &self,
        id: &[u8],
        outcome: impl FnOnce() -> Result<OwnedValue, PeerError>,
    ) -> bool {
        let mut s = lock(&self.state);
        let Some(slot) = s.entries.get_mut(id) else {
            return false;
        };
        let SlotState::Waiting(w) = &mut slot.state else {
            return false; // answered twice: the first answer stands
        };
        let w = w.take();
        slot.state = SlotState::Done(outcome());
        drop(s);
        if let Some(w) = w {
            w.wake();
        }
        true
    }

    /// Fails every waiting request with [`PeerError::Closed`] and refuses new
    /// ones; wakes the timer so that it can end.
    pub(crate) fn close(&self) {
        let mut s = lock(&self.state);
        s.closed = true;
        let mut wakers: Vec<Waker> = Vec::new();
        for slot in s.entries.values_mut() {
            if let SlotState::Waiting(w) = &mut slot.state {
                wakers.extend(w.take());
                slot.state = SlotState::Done(Err(PeerError::Closed));
            }
        }
        wakers.extend(s.timer.take().map(|(w, _)| w));
        drop(s);
        for w in wakers {
            w.wake();
        }
    }

    /// Fails the requests whose deadline is `now` or earlier with
    /// [`PeerError::TimedOut`]; returns the next deadline, and registers `cx`'s
    /// waker to be woken when an earlier one is set (or the table closes).
    pub(crate) fn poll_expire(&self, cx: &mut Context<'_>, now: Instant) -> Option<Instant> {
        let mut s = lock(&self.state);
        let mut next: Option<Instant> = None;
        let mut wakers = Vec::new();
        for slot in s.entries.values_mut() {
            let (Some(d), SlotState::Waiting(w)) = (slot.deadline, &mut slot.state) else {
                continue;
            };
            if d <= now {
                wakers.extend(w.take());
                slot.state = SlotState::Done(Err(PeerError::TimedOut));
            } else {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
        }
        if !s.closed {
            s.timer = Some((cx.waker().clone(), next));
        }
        drop(s);
        for w in wakers {
            w.wake();
        }
        next
    }

    /// Requests still in the table (waiting, or answered and not yet taken).
    pub(crate) fn len(&self) -> usize {
        lock(&self.state).entries.len()
    }
}

/// The client's calls now running on this connection, by their id's exact bytes.
#[derive(Default)]
pub(crate) struct InFlight {
    state: Mutex<InFlightState>,
}

#[derive(Default)]
struct InFlightState {
    /// The token of the latest call with those id bytes and its sequence number.
    calls: HashMap<Box<[u8]>, (u64, CancellationToken)>,
    seq: u64,
}

impl InFlight {
    /// Registers a running call; the sequence number removes exactly it later
    /// (a client that reuses an id while the first call runs cancels the latest).
    pub(crate) fn register(&self, id: &[u8], token: CancellationToken) -> u64 {
        let mut s = lock(&self.state);
        s.seq += 1;
        let seq = s.seq;
        s.calls.insert(id.into(), (seq, token));
        seq
    }

    /// Removes the call registered as `seq`, unless a later one took its id.
    pub(crate) fn remove(&self, id: &[u8], seq: u64) {
        let mut s = lock(&self.state);
        if s.calls.get(id).is_some_and(|(q, _)| *q == seq) {
            s.calls.remove(id);
        }
    }

    /// Cancels the running call with these id bytes; `false` if there is none.
    pub(crate) fn cancel(&self, id: &[u8]) -> bool {
        let token = lock(&self.state).calls.get(id).map(|(_, t)| t.clone());
        match token {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every running call.
    pub(crate) fn cancel_all(&self) {
        let tokens: Vec<CancellationToken> = lock(&self.state)
            .calls
            .values()
            .map(|(_, t)| t.clone())
            .collect();
        for t in tokens {
            t.cancel();
        }
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.state).calls.len()
    }
}
