//! The binary's allocator settings: mimalloc (v3, the `mimalloc` crate's
//! default) tuned so that idle connections cost what they touch and a
//! server's memory goes back to the system once connections close.
//!
//! - Built with `no_thp` (cli/Cargo.toml): no transparent huge pages for
//!   mimalloc's arenas, which otherwise make untouched memory resident. 3 000
//!   idle HTTP connections after one call each (`switchboard serve --threads 2`,
//!   RSS from /proc): 6.6 MB before they open (10.6 MB with huge pages), 20.2
//!   KiB per connection (27.6).
//! - `purge_delay` 1 ms (default 1 000 in this mimalloc), set at the start of `main`: memory freed
//!   when connections close is returned while the closing burst is handled;
//!   with the default, the purge waits for each thread's next allocation after
//!   the delay, which an idle server never makes. The 3 000 closed, 3 s later:
//!   23 MB resident, against 67 MB with the default delay (93 MB with huge
//!   pages too, as before). The cost: 523 `madvise` calls over 18 800 requests on fresh
//!   connections (wrk, `Connection: close`), 0.6% of the server's system-call
//!   time.
//!
//! The option number is mimalloc v3's `mi_option_e` (its `mimalloc.h`), which
//! `libmimalloc-sys` does not name; a test checks it against its default.

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e`.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Applies the setting above, unless `MIMALLOC_PURGE_DELAY` is set (mimalloc
/// read it at its start: the user's choice wins).
pub(crate) fn tune() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` only stores the value for mimalloc to read
        // (options are atomics inside mimalloc; this one is read afresh at
        // every purge decision); any option number and value are accepted.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 1) };
    }
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
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 1);
    }
}
