//! Heap allocations per message of each dispatch stack on each `rpc_*` workload or
//! corpus file (and of each parser stack on `parse:FILE.json`), in steady state: a
//! counting global allocator (over mimalloc, the benches' allocator) counts the calls
//! made while handling `N` messages after a warm-up of 100, on one reused server per
//! stack. A stack whose answer differs from switchboard's is shown as `n/a`.
//!
//! ```text
//! allocs [--tsv] [N] [workload...]   # default N = 1000, every rpc_* workload;
//!                                    # `corpus` and `parse:corpus` name every corpus file,
//!                                    # `realworld`, `parse:realworld` the real-world documents
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
    self, JsonrpcCore, Jsonrpsee, JsonrpseeCallback, RpcWorkload, SerdeServer, Server, rpc_workload,
};
use switchboard_benches::{
    SerdeJson, SimdJsonSerde, SimdJsonTape, SonicRs, Stack, Switchboard, Workload, check_stack,
    corpus, corpus_workload,
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

/// Per-message counts of one checked run: (allocs, reallocs, frees, bytes), after a
/// warm-up of 100 messages.
fn per_message(n: u64, mut one: impl FnMut() -> bool) -> [f64; 4] {
    for _ in 0..100 {
        assert!(one(), "a wrong answer during the warm-up");
    }
    let before = snapshot();
    for _ in 0..n {
        assert!(one(), "a wrong answer");
    }
    let after = snapshot();
    std::array::from_fn(|i| (after[i] - before[i]) as f64 / n as f64)
}

/// A dispatch stack on one workload; `Err` (n/a) if its answer differs.
fn measure<S: Server>(w: &RpcWorkload, n: u64) -> Result<[f64; 4], String> {
    let mut server = S::new();
    let expected = dispatch::check(&mut server, w)?;
    let input = w.bytes.as_slice();
    Ok(per_message(n, || {
        server.handle(black_box(input)) == expected.as_deref()
    }))
}

/// A parser stack on one workload; `Err` (n/a) if its outcome differs.
fn measure_parse<S: Stack + Default>(w: &Workload, n: u64) -> Result<[f64; 4], String> {
    let mut stack = S::default();
    check_stack(&mut stack, w)?;
    let input = w.bytes.as_slice();
    Ok(per_message(n, || stack.run(black_box(input), w.expect)))
}

type Rows = Vec<(&'static str, Result<[f64; 4], String>)>;

fn rows_of(name: &str, n: u64) -> Result<(usize, Rows), String> {
    if corpus::is_classify_name(name) {
        let w = corpus_workload(name)?;

        let rows = vec![
            (Switchboard::NAME, measure_parse::<Switchboard>(&w, n)),
            (SerdeJson::NAME, measure_parse::<SerdeJson>(&w, n)),
            (SonicRs::NAME, measure_parse::<SonicRs>(&w, n)),
            (SimdJsonTape::NAME, measure_parse::<SimdJsonTape>(&w, n)),
            (SimdJsonSerde::NAME, measure_parse::<SimdJsonSerde>(&w, n)),
        ];
        return Ok((w.bytes.len(), rows));
    }
    let w = rpc_workload(name).ok_or_else(|| {
        format!(
            "unknown workload {name}; one of {:?}, a corpus file or parse:FILE",
            dispatch::RPC_WORKLOAD_NAMES
        )
    })?;
    let rows = vec![
        (
            dispatch::Switchboard::NAME,
            measure::<dispatch::Switchboard>(&w, n),
        ),
        (SerdeServer::NAME, measure::<SerdeServer>(&w, n)),
        (dispatch::SonicRs::NAME, measure::<dispatch::SonicRs>(&w, n)),
        (Jsonrpsee::NAME, measure::<Jsonrpsee>(&w, n)),
        (JsonrpseeCallback::NAME, measure::<JsonrpseeCallback>(&w, n)),
        (JsonrpcCore::NAME, measure::<JsonrpcCore>(&w, n)),
    ];
    Ok((w.bytes.len(), rows))
}

fn main() -> ExitCode {
    let mut tsv = false;
    let mut n = 1000;
    let mut names = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--tsv" {
            tsv = true;
        } else if let (true, Ok(v)) = (names.is_empty(), a.parse::<u64>()) {
            n = v;
        } else if let Some(group) = corpus::expand_group(&a) {
            names.extend(group);
        } else {
            names.push(a);
        }
    }
    if names.is_empty() {
        names = dispatch::RPC_WORKLOAD_NAMES.map(str::to_owned).to_vec();
    }
    if tsv {
        println!("family\tworkload\tbytes\tstack\tallocs\treallocs\tfrees\tbytes_allocated\tnote");
    } else {
        println!(
            "{:<34} {:>6} {:<20} {:>10} {:>12} {:>10} {:>10}",
            "workload", "bytes", "stack", "allocs/msg", "reallocs/msg", "frees/msg", "bytes/msg"
        );
    }
    for name in &names {
        let family = if corpus::is_classify_name(name) {
            "parse"
        } else {
            "rpc"
        };
        let (len, rows) = match rows_of(name, n) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        for (stack, r) in rows {
            match (r, tsv) {
                (Ok([a, r, f, b]), true) => {
                    println!("{family}\t{name}\t{len}\t{stack}\t{a:.2}\t{r:.2}\t{f:.2}\t{b:.1}\t")
                }
                (Ok([a, r, f, b]), false) => println!(
                    "{name:<34} {len:>6} {stack:<20} {a:>10.2} {r:>12.2} {f:>10.2} {b:>10.1}"
                ),
                (Err(e), true) => println!(
                    "{family}\t{name}\t{len}\t{stack}\tn/a\tn/a\tn/a\tn/a\t{}",
                    e.replace(['\t', '\n'], " ")
                ),
                (Err(e), false) => println!("{name:<34} {len:>6} {stack:<20} n/a: {e}"),
            }
        }
    }
    ExitCode::SUCCESS
}
