//! Heap allocations per message of each dispatch stack on each `rpc_*` workload,
//! in steady state: a counting global allocator (over mimalloc, the benches'
//! allocator) counts the calls made while handling `N` messages after a warm-up of
//! 100, on one reused server per stack.
//!
//! ```text
//! allocs [N] [workload...]     # default N = 1000, every rpc_* workload
//! ```
//!
//! Columns: `allocs/msg` counts `alloc` and `alloc_zeroed` calls, `reallocs/msg`
//! the `realloc` calls (a `Vec` or `String` growing), `bytes/msg` the bytes those
//! calls asked for (a `realloc` counts its new size), `frees/msg` the `dealloc`s.
//! Kept apart from `count` so that the instruction counts there do not include
//! the counting.

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use switchboard_benches::dispatch::{
    self, JsonrpcCore, Jsonrpsee, JsonrpseeCallback, RpcWorkload, SerdeServer, Server, Switchboard,
    rpc_workload,
};

/// mimalloc, with every call counted.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static REALLOCS: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;

// SAFETY: every call is forwarded unchanged to mimalloc, a correct allocator; the
// counters are only atomics on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { INNER.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: the caller's contract for `alloc_zeroed` is passed on as is.
        unsafe { INNER.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        FREES.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract for `dealloc` is passed on as is.
        unsafe { INNER.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        // SAFETY: the caller's contract for `realloc` is passed on as is.
        unsafe { INNER.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counters now: (allocs, reallocs, frees, bytes).
fn snapshot() -> [u64; 4] {
    [
        ALLOCS.load(Relaxed),
        REALLOCS.load(Relaxed),
        FREES.load(Relaxed),
        BYTES.load(Relaxed),
    ]
}

/// Per-message counts of one stack on one workload: (allocs, reallocs, frees, bytes).
fn measure<S: Server>(w: &RpcWorkload, n: u64) -> [f64; 4] {
    let mut server = S::new();
    let expected = dispatch::check(&mut server, w).unwrap_or_else(|e| panic!("{e}"));
    let input = w.bytes.as_slice();
    for _ in 0..100 {
        assert!(server.handle(black_box(input)) == Some(expected.as_slice()));
    }
    let before = snapshot();
    for _ in 0..n {
        let ok = server.handle(black_box(input)) == Some(expected.as_slice());
        assert!(ok, "{} is wrong on {}", S::NAME, w.name);
    }
    let after = snapshot();
    std::array::from_fn(|i| (after[i] - before[i]) as f64 / n as f64)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    let n: u64 = match args.peek().map(|a| a.parse::<u64>()) {
        Some(Ok(n)) => {
            args.next();
            n
        }
        _ => 1000,
    };
    let names: Vec<String> = args.collect();
    let names: Vec<&str> = if names.is_empty() {
        dispatch::RPC_WORKLOAD_NAMES.to_vec()
    } else {
        names.iter().map(String::as_str).collect()
    };
    println!(
        "{:<28} {:>6} {:<20} {:>10} {:>12} {:>10} {:>10}",
        "workload", "bytes", "stack", "allocs/msg", "reallocs/msg", "frees/msg", "bytes/msg"
    );
    for name in names {
        let Some(w) = rpc_workload(name) else {
            eprintln!(
                "unknown workload {name}; one of {:?}",
                dispatch::RPC_WORKLOAD_NAMES
            );
            return ExitCode::from(2);
        };
        let rows = [
            (Switchboard::NAME, measure::<Switchboard>(&w, n)),
            (SerdeServer::NAME, measure::<SerdeServer>(&w, n)),
            (JsonrpseeCallback::NAME, measure::<JsonrpseeCallback>(&w, n)),
            (Jsonrpsee::NAME, measure::<Jsonrpsee>(&w, n)),
            (JsonrpcCore::NAME, measure::<JsonrpcCore>(&w, n)),
        ];
        for (stack, [a, r, f, b]) in rows {
            println!(
                "{:<28} {:>6} {:<20} {:>10.2} {:>12.2} {:>10.2} {:>10.1}",
                w.name,
                w.bytes.len(),
                stack,
                a,
                r,
                f,
                b
            );
        }
    }
    ExitCode::SUCCESS
}
