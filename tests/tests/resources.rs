//! Resource bounds: the memory a session keeps after handling hostile inputs is
//! bounded by the input size and the configured limits. Its own test binary, with an
//! allocator that tracks live bytes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use switchboard::{Router, Session};

struct Tracking;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the bookkeeping is one atomic
// add, which never allocates.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Bytes the session holds after handling `input` (the input itself freed).
fn held_after(session: &mut Session, input: Vec<u8>) -> isize {
    let before = LIVE.load(Ordering::Relaxed) - input.capacity() as isize;
    let _ = session.handle(&input);
    drop(input);
    LIVE.load(Ordering::Relaxed) - before
}

fn router() -> std::sync::Arc<Router> {
    Router::builder()
        .method("echo", |call, out| {
            out.raw_json(call.params().map_or(&b"null"[..], |p| p.as_bytes()))
        })
        .method("m", |_, out| out.null())
        .build()
        .unwrap()
}

#[test]
fn session_memory_is_bounded_by_input_size_and_limits() {
    // One test: the tracker is process-wide, so nothing else may run at the same time.
    let mut s = Session::new(router());
    const KIB: isize = 1024;
    let cases: Vec<(&str, Vec<u8>, isize)> = vec![
        (
            "100 000 levels of nesting",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
            64 * KIB,
        ),
        (
            "100 000 levels of objects",
            format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000)).into_bytes(),
            64 * KIB,
        ),
        (
            "1000-element batch",
            format!(
                "[{}]",
                vec![r#"{"jsonrpc":"2.0","method":"m","id":1}"#; 1000].join(",")
            )
            .into_bytes(),
            // element spans (1000 × ~80 B) + the response (1000 × ~40 B), with growth slack
            512 * KIB,
        ),
        (
            "10 000-digit number",
            format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":[{}],"id":1}}"#,
                "9".repeat(10_000)
            )
            .into_bytes(),
            64 * KIB,
        ),
        (
            "100 000 escapes in a method name",
            format!(
                r#"{{"jsonrpc":"2.0","method":"{}","id":1}}"#,
                r"\u0061".repeat(100_000)
            )
            .into_bytes(),
            // the arena block is sized by the escaped length (600 000 B) rounded up to a
            // power of two: at most twice the input
            2 * 600_036 + 64 * KIB,
        ),
        ("over the size limit", vec![b' '; (8 << 20) + 1], 64 * KIB),
        (
            "8 MiB of params echoed",
            format!(
                r#"{{"jsonrpc":"2.0","method":"echo","params":["{}"],"id":1}}"#,
                "x".repeat((8 << 20) - 100)
            )
            .into_bytes(),
            // the response holds the params once, in a buffer grown by doubling
            2 * (8 << 20) + 256 * KIB,
        ),
    ];
    for (name, input, bound) in cases {
        let len = input.len();
        let held = held_after(&mut s, input);
        assert!(
            held <= bound,
            "{name} ({len} B): the session holds {held} B more, bound {bound}"
        );
    }
    // The next small message gives the big response buffer back.
    let before = LIVE.load(Ordering::Relaxed);
    let _ = s.handle(br#"{"jsonrpc":"2.0","method":"m","id":1}"#);
    let released = before - LIVE.load(Ordering::Relaxed);
    assert!(released >= 8 << 20, "released only {released} B");
    // Handling small messages afterwards does not grow anything further.
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..1000 {
        let _ = s.handle(br#"{"jsonrpc":"2.0","method":"m","id":1}"#);
    }
    assert_eq!(LIVE.load(Ordering::Relaxed) - before, 0);
}
