//! The C ABI's own cost per call: the same messages through the Rust API
//! (`Session::handle`, a Rust closure handler) and through the C ABI
//! (`swb_session_handle` reached through a function pointer, an `extern "C"` callback
//! answering through `swb_writer_*`, also through function pointers, as a C program
//! would), interleaved in one run.
//!
//! Run: `cargo bench -p switchboard-ffi --bench overhead` (add `-- --quick` for fewer
//! rounds). Prints, per message, the median and the best round in ns per message for
//! each path and their difference: the ABI's overhead.
//!
//! Set `SWB_BENCH_ONLY=rust|ffi` (and `SWB_BENCH_MSG=0..4` for one message) to run one
//! path alone, 10,000 times per message, for `valgrind --tool=callgrind`: see
//! `ffi/bench/callgrind.sh`, which reports instructions per message for each path.

use core::ffi::{c_char, c_int, c_void};
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use switchboard::{Router, Session};
use switchboard_ffi::*;

const ETH: &[u8] = br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}"#;
const NOTIFY: &[u8] = br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]}"#;
const UNKNOWN: &[u8] = br#"{"jsonrpc":"2.0","method":"eth_unknown","params":[],"id":7}"#;
const PARSE_ERROR: &[u8] = br#"{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1"#;

fn batch10() -> Vec<u8> {
    let mut b = b"[".to_vec();
    for i in 0..10 {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":{i}}}"#)
                .as_bytes(),
        );
    }
    b.push(b']');
    b
}

const ANSWER: &str = "0x1b1ae4d6e2ef500000";

type WriteStr = unsafe extern "C" fn(*mut swb_writer, *const c_char, usize) -> swb_result;
type Handle = unsafe extern "C" fn(
    *mut swb_session,
    *const u8,
    usize,
    *mut *const u8,
    *mut usize,
) -> swb_result;

/// The C callback: answers through the writer, reached through a function pointer
/// stored in user_data (as a C program links it: no inlining across the boundary).
unsafe extern "C" fn c_callback(
    ud: *mut c_void,
    _call: *const swb_call,
    w: *mut swb_writer,
) -> c_int {
    // SAFETY: `ud` points to the WriteStr below; `w` is the running callback's writer.
    unsafe {
        let write: WriteStr = *ud.cast::<WriteStr>();
        write(w, ANSWER.as_ptr().cast(), ANSWER.len()) as c_int
    }
}

struct Paths {
    rust: Session,
    ffi: *mut swb_session,
    handle: Handle,
    _write: Box<WriteStr>,
    router: *const swb_router,
}

impl Paths {
    fn new() -> Self {
        let router = Router::builder()
            .method("eth_getBalance", |_call, out| out.str(black_box(ANSWER)))
            .build()
            .unwrap();
        let rust = Session::new(router);

        let write: Box<WriteStr> = Box::new(black_box(swb_writer_string as WriteStr));
        let mut b = ptr::null_mut();
        let mut r = ptr::null();
        let mut s = ptr::null_mut();
        // SAFETY: valid out pointers; the user data (the boxed function pointer)
        // outlives the router (both freed in Drop, the router first).
        unsafe {
            assert_eq!(swb_router_builder_new(&mut b), swb_result::Ok);
            let ud = (&*write as *const WriteStr).cast_mut().cast::<c_void>();
            assert_eq!(
                swb_router_builder_method(
                    b,
                    c"eth_getBalance".as_ptr(),
                    14,
                    Some(c_callback),
                    ud,
                    None
                ),
                swb_result::Ok
            );
            assert_eq!(swb_router_builder_build(b, &mut r), swb_result::Ok);
            assert_eq!(swb_session_new(r, &mut s), swb_result::Ok);
        }
        Paths {
            rust,
            ffi: s,
            handle: black_box(swb_session_handle as Handle),
            _write: write,
            router: r,
        }
    }

    #[inline(never)]
    fn run_rust(&mut self, msg: &[u8], n: usize) -> usize {
        let mut total = 0;
        for _ in 0..n {
            total += self.rust.handle(black_box(msg)).map_or(0, <[u8]>::len);
        }
        total
    }

    #[inline(never)]
    fn run_ffi(&mut self, msg: &[u8], n: usize) -> usize {
        let mut total = 0;
        let mut out = ptr::null();
        let mut len = 0usize;
        for _ in 0..n {
            let msg = black_box(msg);
            // SAFETY: live session, valid buffers.
            let rc =
                unsafe { (self.handle)(self.ffi, msg.as_ptr(), msg.len(), &mut out, &mut len) };
            debug_assert_eq!(rc, swb_result::Ok);
            total += len;
        }
        total
    }
}

impl Drop for Paths {
    fn drop(&mut self) {
        // SAFETY: live handles, freed once.
        unsafe {
            swb_session_free(self.ffi);
            swb_router_free(self.router);
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let only = std::env::var("SWB_BENCH_ONLY").ok();
    let rounds: usize = std::env::var("SWB_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 7 } else { 31 });
    let batch = batch10();
    let messages: [(&str, &[u8]); 5] = [
        ("eth_getBalance request (115 B)", ETH),
        ("notification (answer discarded)", NOTIFY),
        ("unknown method (-32601)", UNKNOWN),
        ("parse error (-32700)", PARSE_ERROR),
        ("batch of 10 requests (1.2 KB)", &batch),
    ];
    let mut p = Paths::new();

    // The two paths must answer byte for byte the same.
    for (name, msg) in messages {
        let rust = p.rust.handle(msg).map(<[u8]>::to_vec);
        let mut out = ptr::null();
        let mut len = 0usize;
        // SAFETY: live session, valid buffers; the view is read before the next call.
        let ffi = unsafe {
            assert_eq!(
                (p.handle)(p.ffi, msg.as_ptr(), msg.len(), &mut out, &mut len),
                swb_result::Ok
            );
            (len > 0).then(|| std::slice::from_raw_parts(out, len).to_vec())
        };
        assert_eq!(rust, ffi, "{name}");
    }

    if let Some(only) = only {
        // One path alone, for instruction counting.
        let n = 10_000;
        let pick: Option<usize> = std::env::var("SWB_BENCH_MSG")
            .ok()
            .and_then(|v| v.parse().ok());
        for (i, (_, msg)) in messages.into_iter().enumerate() {
            if pick.is_some_and(|k| k != i) {
                continue;
            }
            let t = match only.as_str() {
                "rust" => p.run_rust(msg, n),
                "ffi" => p.run_ffi(msg, n),
                other => panic!("SWB_BENCH_ONLY={other}: rust or ffi"),
            };
            black_box(t);
        }
        return;
    }

    println!(
        "C ABI overhead: {rounds} interleaved rounds per path, ns per message (median / best round)"
    );
    println!(
        "{:<34} {:>17} {:>17} {:>17}",
        "message", "Rust API", "C ABI", "overhead"
    );
    for (name, msg) in messages {
        // Size each round to about 20 ms.
        let per = {
            let t = Instant::now();
            black_box(p.run_rust(msg, 2000));
            t.elapsed().as_secs_f64() / 2000.0
        };
        let n = ((0.02 / per) as usize).clamp(1000, 2_000_000);
        black_box(p.run_rust(msg, n / 4));
        black_box(p.run_ffi(msg, n / 4));
        let (mut rust, mut ffi, mut diff) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..rounds {
            let mut one = |which: bool| {
                let t = Instant::now();
                black_box(if which {
                    p.run_ffi(msg, n)
                } else {
                    p.run_rust(msg, n)
                });
                t.elapsed().as_secs_f64() * 1e9 / n as f64
            };
            // Alternate the order so that neither path always runs second.
            let (r, f) = if i % 2 == 0 {
                let r = one(false);
                (r, one(true))
            } else {
                let f = one(true);
                (one(false), f)
            };
            rust.push(r);
            ffi.push(f);
            diff.push(f - r);
        }
        let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let (rb, fb) = (best(&rust), best(&ffi));
        println!(
            "{:<34} {:>8.1} / {:>6.1} {:>8.1} / {:>6.1} {:>8.1} / {:>6.1}",
            name,
            median(&mut rust),
            rb,
            median(&mut ffi),
            fb,
            median(&mut diff),
            fb - rb
        );
    }
}
