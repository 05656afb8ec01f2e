//! Test helpers shared by the conformance suites.
//!
//! - [`jsontestsuite_dir`]: where the JSONTestSuite corpus lives (never silently absent).
//! - [`reference_accepts`]: an independent verdict on "is this exactly one JSON text
//!   (RFC 8259, UTF-8) within our depth limit", built on `serde_json`, for
//!   differential tests against [`switchboard::Parser::validate`].
//! - [`json_depth`]: the nesting depth of a text, counted the way SPEC.md counts it.
//! - [`counting`]: a counting global allocator for the zero-allocation tests.
//! - [`spec_examples`]: the specification's examples with the demo router's answers,
//!   for the end-to-end suites (session, HTTP, stdio).

use std::path::{Path, PathBuf};

/// The environment variable that overrides where the JSONTestSuite corpus is read
/// from. It names the `test_parsing` folder (or a folder that holds `test_parsing/`).
pub const JSONTESTSUITE_ENV: &str = "SWITCHBOARD_JSONTESTSUITE";

/// The `test_parsing/` folder of the JSONTestSuite corpus.
///
/// Taken from [`JSONTESTSUITE_ENV`] when set, otherwise from
/// `shared/data/jsontestsuite/test_parsing` beside the workspace.
///
/// # Panics
/// When the folder does not exist: a suite that skips itself silently is a test
/// that cannot fail, so a missing corpus fails loudly instead.
pub fn jsontestsuite_dir() -> PathBuf {
    let (dir, origin) = match std::env::var_os(JSONTESTSUITE_ENV) {
        Some(v) => {
            let p = PathBuf::from(v);
            let nested = p.join("test_parsing");
            (if nested.is_dir() { nested } else { p }, format!("${JSONTESTSUITE_ENV}"))
        }
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/data/jsontestsuite/test_parsing"),
            "the default location (CARGO_MANIFEST_DIR/../../shared/data/jsontestsuite/test_parsing)"
                .to_string(),
        ),
    };
    assert!(
        dir.is_dir(),
        "JSONTestSuite corpus not found at {} (from {origin}).\n\
         This suite never skips itself: provide the corpus (the `test_parsing/` folder of \
         nst/JSONTestSuite, as copied into shared/data/jsontestsuite/) or point \
         ${JSONTESTSUITE_ENV} at it.",
        dir.display()
    );
    dir
}

/// Every file of a corpus folder as `(file name, bytes)`, sorted by name.
///
/// # Panics
/// When the folder cannot be read, or holds no file at all.
pub fn read_corpus(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
            let name = entry.file_name().to_string_lossy().into_owned();
            let bytes = std::fs::read(entry.path())
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", entry.path().display()));
            (name, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no file", dir.display());
    files
}

/// The deepest nesting of arrays and objects in `bytes`, the outermost one being
/// level 1 (brackets inside strings do not count). Meaningful for valid JSON; for
/// other bytes it is a best effort that never panics.
pub fn json_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The reference verdict: is `bytes` exactly one JSON text (RFC 8259), in UTF-8,
/// nested at most `max_depth` levels?
///
/// Built on `serde_json::from_str::<serde::de::IgnoredAny>`, whose behaviour was
/// checked against its source (1.0.154) and is pinned by the `serde_json_facts`
/// test in `tests/prop.rs`:
/// - `from_slice` does **not** check UTF-8 inside strings when the target is
///   `IgnoredAny`, so the bytes are checked with `std::str::from_utf8` first
///   (outside strings JSON is ASCII-only, so "the whole text is UTF-8" is the
///   same rule as RFC 8259 §8.1 for any text the grammar accepts).
/// - `IgnoredAny` skips values iteratively: no recursion limit applies (the limit
///   of 128 is for `Value` and typed targets, and it rejects 128 levels already),
///   so the depth is checked here with [`json_depth`].
/// - `IgnoredAny` checks the number grammar only, never the range: `1e400` and a
///   10 000-digit integer are accepted, as SPEC.md wants ("passed through untouched").
/// - Lone surrogate escapes (`"\ud800"`) are accepted, as SPEC.md wants.
/// - A byte-order mark is refused (U+FEFF is not JSON whitespace), and so is
///   anything but JSON whitespace after the value.
pub fn reference_accepts_with_depth(bytes: &[u8], max_depth: usize) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() && json_depth(bytes) <= max_depth
}

/// [`reference_accepts_with_depth`] with the default limit of SPEC.md (128).
pub fn reference_accepts(bytes: &[u8]) -> bool {
    reference_accepts_with_depth(bytes, switchboard::ParserConfig::DEFAULT_MAX_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_like_the_spec() {
        assert_eq!(json_depth(b"1"), 0);
        assert_eq!(json_depth(b"[]"), 1);
        assert_eq!(json_depth(br#"{"a":[{}]}"#), 3);
        assert_eq!(json_depth(br#"["[[[\"[", []]"#), 2);
    }

    #[test]
    fn reference_verdicts() {
        assert!(reference_accepts(br#" {"a":[1,2.5e-3,"\ud800",null]} "#));
        assert!(reference_accepts(b"1e400"));
        assert!(!reference_accepts(b"[\"\xff\"]"));
        assert!(!reference_accepts(b"\xEF\xBB\xBF{}"));
        assert!(!reference_accepts(b"{} x"));
        assert!(!reference_accepts(b""));
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(reference_accepts(deep(128).as_bytes()));
        assert!(!reference_accepts(deep(129).as_bytes()));
    }
}

/// The JSON-RPC 2.0 specification's examples (its section 7) that have one exact
/// answer from switchboard-server's demo router (`subtract`, `update`, `notify_*`
/// registered; `foobar` not): `(message, the response as JSON, or None when nothing
/// is answered)`. The end-to-end suites (a session, the HTTP server, the stdio
/// server) all run this one table; the error examples whose `data` says where the
/// input broke are checked by each suite on its own terms.
///
/// ```
/// let examples = switchboard_tests::spec_examples();
/// assert!(examples.iter().any(|(_, answer)| answer.is_none()));
/// ```
#[must_use]
pub fn spec_examples() -> Vec<(&'static str, Option<serde_json::Value>)> {
    use serde_json::json;
    vec![
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#,
            Some(json!({"jsonrpc": "2.0", "result": 19, "id": 1})),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#,
            Some(json!({"jsonrpc": "2.0", "result": -19, "id": 2})),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
            Some(json!({"jsonrpc": "2.0", "result": 19, "id": 3})),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
            Some(json!({"jsonrpc": "2.0", "result": 19, "id": 4})),
        ),
        (
            r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#,
            None,
        ),
        (r#"{"jsonrpc": "2.0", "method": "foobar"}"#, None),
        (
            r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#,
            Some(
                json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found", "data": {"field": "method", "reason": "is not registered"}}, "id": "1"}),
            ),
        ),
        (
            r#"[
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ]"#,
            None,
        ),
    ]
}

pub mod counting {
    //! A global allocator that counts allocations per thread, for the tests that
    //! assert "no allocation after warm-up". A test binary installs it with
    //!
    //! ```
    //! #[global_allocator]
    //! static GLOBAL: switchboard_tests::counting::Counting = switchboard_tests::counting::Counting;
    //! # fn main() {
    //! let (v, n) = switchboard_tests::counting::allocations(|| vec![1u8; 8]);
    //! assert_eq!((v.len(), n), (8, 1));
    //! # }
    //! ```
    //!
    //! The test harness runs tests on several threads, so allocations are counted per
    //! thread (a `const`-initialised thread-local `Cell`, which itself never
    //! allocates) and each test only looks at its own thread's count.

    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Wraps [`System`], counting every allocation (and reallocation) of the
    /// current thread.
    #[derive(Debug)]
    pub struct Counting;

    thread_local! {
        static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    }

    fn count_one() {
        // `try_with`: during thread teardown the slot may be gone; such allocations
        // happen outside any measurement.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }

    // SAFETY: every method forwards to `System` with the caller's own arguments, so
    // `System`'s guarantees are ours; counting touches only a thread-local `Cell<u64>`
    // with a `const` initialiser and no destructor, which neither allocates nor unwinds.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            count_one();
            // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract (non-zero
            // size), which is `System`'s.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            count_one();
            // SAFETY: same contract as `alloc`, forwarded unchanged.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            count_one();
            // SAFETY: `ptr` was allocated by this allocator, that is by `System`, with
            // `layout`; the caller upholds the rest of `realloc`'s contract.
            unsafe { System.realloc(ptr, layout, new_size) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` was allocated by this allocator, that is by `System`,
            // with `layout`.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    /// Runs `f`, returning its result and how many allocations this thread made
    /// meanwhile (counted only where [`Counting`] is the global allocator).
    pub fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = so_far();
        let r = f();
        (r, so_far() - before)
    }

    /// How many allocations this thread has made so far: the difference of two
    /// readings counts a stretch that [`allocations`] cannot wrap, such as the
    /// part of an `async` block between two `.await`s.
    ///
    /// ```
    /// #[global_allocator]
    /// static GLOBAL: switchboard_tests::counting::Counting = switchboard_tests::counting::Counting;
    /// # fn main() {
    /// use switchboard_tests::counting::so_far;
    /// let before = so_far();
    /// let v = vec![1u8; 8];
    /// assert_eq!(so_far() - before, 1);
    /// # drop(v);
    /// # }
    /// ```
    #[must_use]
    pub fn so_far() -> u64 {
        ALLOCATIONS.with(Cell::get)
    }
}

/// The workspace README's Rust examples, compiled and run as doctests (here, in a crate
/// that is not published: the README lies outside every package).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
