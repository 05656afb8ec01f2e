//! The binary's allocator settings: mimalloc (v3, the `mimalloc` crate's
//! default) tuned so that idle connections cost what they touch and a
//! server's memory goes back to the system once connections close.
//!
//! - Built with `no_thp` (cli/Cargo.toml): no transparent huge pages for
//!   mimalloc's arenas, which otherwise make untouched memory resident. 3 000
//!   idle HTTP connections after one call each (`switchboard serve --threads 2`,
//!   RSS from /proc): 6.6 MB before they open (10.6 MB with huge pages), 20.2
//!   KiB per connection (27.6).
//! - `purge_delay` 0 (default 1 000 ms in this mimalloc), set at the start of
//!   `main`: a page given back to the arena is returned to the system at once.
//!   With any delay the purge waits for a later call into the allocator after
//!   it, which an idle server never makes. (1 ms, this setting until
//!   2026-12-06, left 2-5 MB resident after a burst of closes; the default
//!   left 67 MB after 3 000 closed connections.)
//! - A worker about to sleep (tokio's `on_thread_park`) first settles its heap
//!   ([`on_park`]: `mi_collect(false)`, at most once per 10 ms per thread): the
//!   blocks other threads freed into its pages are taken back and pages left
//!   empty go back to the arena. Without it those pages stay with the worker
//!   until it next wakes: 8 000 keep-alive connections after one call each,
//!   closed (`benches/http_idle.py … 8000 PID call`, `--threads 2`): RSS 6.8
//!   MB before, 125 MB open, 37-40 MB 3 s after they closed without this, 8.9
//!   MB with it; 1 000 closed at once (test
//!   `memory_goes_back_when_connections_close`): +4.7-5.4 MB without, +1.1-1.6
//!   with.
//!
//! The cost, measured with `wrk -t1 -c8 -d4s` (`strace -f -c -e trace=madvise`
//! on the server): 630 `madvise` calls over 24 000 requests on fresh
//! connections (`Connection: close`), 50 over 22 000 on keep-alive ones; a
//! collect costs ~1 us (a forced one ~30 us, hence not forced), so the 10 ms
//! bound keeps it under 0.01% of a worker's time.
//!
//! The option number is mimalloc v3's `mi_option_e` (its `mimalloc.h`), which
//! `libmimalloc-sys` does not name; a test checks it against its default.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e`.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Applies the setting above, unless `MIMALLOC_PURGE_DELAY` is set (mimalloc
/// read it at its start: the user's choice wins).
pub(crate) fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` only stores the value for mimalloc to read
        // (options are atomics inside mimalloc; this one is read afresh at
        // every purge decision); any option number and value are accepted.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) };
    }
}

/// How often a worker may collect on going to sleep ([`on_park`]).
const COLLECT_EVERY: Duration = Duration::from_millis(10);

/// For a runtime's `on_thread_park`: returns the free memory of this thread's
/// heap, unless it did within [`COLLECT_EVERY`].
pub(crate) fn on_park() {
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    LAST.with(|last| {
        if last
            .get()
            .is_none_or(|t| now.duration_since(t) >= COLLECT_EVERY)
        {
            last.set(Some(now));
            // SAFETY: `mi_collect` frees, in the calling thread's own heap,
            // pages that hold no live block; it takes no pointer and may be
            // called from any thread at any time.
            unsafe { libmimalloc_sys::mi_collect(false) };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number names the option meant: its default is mimalloc v3's
    /// `purge_delay` (1 000 ms, `src/options.c`), and setting it is read back.
    #[test]
    fn the_option_number_is_mimalloc_v3s_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return; // overridden by the environment: nothing to compare
        }
        // SAFETY: `mi_option_get` reads an option; any number is accepted.
        let before = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        // (`tune` runs in `main` only, never in a test.)
        assert_eq!(before, 1000, "purge_delay's default");
        tune();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
    }
}
