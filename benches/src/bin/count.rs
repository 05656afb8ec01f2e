//! Instruction-count harness: runs one stack on one workload `N` times, so that
//! `callgrind.sh` can take instructions per message as
//! `(Ir(N2) - Ir(N1)) / (N2 - N1)` (start-up and first-message costs cancel out).
//!
//! ```text
//! count <stack> <workload> <N>
//! count list
//! count backends
//! count race [workload...]
//! ```
//!
//! `race` is a wall-clock companion to the criterion benches for a noisy shared
//! machine: it interleaves the stacks in short blocks (round-robin, ~2 ms each)
//! and reports each stack's fastest and median block, so that load from other
//! processes hits all stacks alike and the minimum shows the undisturbed cost.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use switchboard_benches::{
    SerdeJson, SerdeJsonRaw, SimdJsonSerde, SimdJsonTape, Stack, Switchboard, Workload, workload,
    workloads,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STACKS: [&str; 4] = [
    Switchboard::NAME,
    SerdeJson::NAME,
    SimdJsonTape::NAME,
    SimdJsonSerde::NAME,
];

fn run<S: Stack + Default>(w: &Workload, n: u64) -> bool {
    let mut stack = S::default();
    let input = w.bytes.as_slice();
    for _ in 0..n {
        if !stack.run(black_box(input), black_box(w.expect)) {
            return false;
        }
    }
    true
}

/// Times blocks of `k` messages for one stack, keeping its warm state between blocks.
struct Racer {
    name: &'static str,
    /// Runs `k` messages and returns the time taken.
    block: Box<dyn FnMut(u64) -> Duration>,
    samples: Vec<f64>,
}

fn racer<S: Stack + Default + 'static>(w: &Workload) -> Racer {
    let mut stack = S::default();
    let (input, expect) = (w.bytes.clone(), w.expect);
    let name = w.name;
    Racer {
        name: S::NAME,
        block: Box::new(move |k| {
            let start = Instant::now();
            for _ in 0..k {
                let ok = stack.run(black_box(&input), black_box(expect));
                assert!(ok, "{} is wrong on {name}", S::NAME);
            }
            start.elapsed()
        }),
        samples: Vec::new(),
    }
}

fn race(w: &Workload) {
    let mut racers = vec![
        racer::<Switchboard>(w),
        racer::<SerdeJson>(w),
        racer::<SimdJsonTape>(w),
    ];
    if matches!(w.expect, switchboard_benches::Expect::Valid) {
        racers.push(racer::<SerdeJsonRaw>(w));
    } else {
        racers.push(racer::<SimdJsonSerde>(w));
    }
    // Calibrate: about 2 ms per block for the slowest stack, after a warm-up.
    let mut k = 1u64;
    for r in &mut racers {
        (r.block)(100);
        let t = (r.block)(100).as_nanos() as u64 / 100;
        k = k.max(2_000_000 / t.max(1));
    }
    let k = k.clamp(1, 200_000);
    for _ in 0..150 {
        for r in &mut racers {
            let t = (r.block)(k);
            r.samples.push(t.as_nanos() as f64 / k as f64);
        }
    }
    let stats: Vec<(f64, f64)> = racers
        .iter_mut()
        .map(|r| {
            r.samples.sort_by(f64::total_cmp);
            (r.samples[0], r.samples[r.samples.len() / 2])
        })
        .collect();
    let (serde_min, tape_min) = (stats[1].0, stats[2].0);
    for (r, (min, med)) in racers.iter().zip(&stats) {
        let gbs = w.bytes.len() as f64 / min;
        println!(
            "{:<24} {:>6} {:<16} {:>10.1} {:>10.1} {:>7.2} {:>7.2} {:>7.2}",
            w.name,
            w.bytes.len(),
            r.name,
            min,
            med,
            gbs,
            min / serde_min,
            min / tape_min
        );
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("list") {
        println!("stacks: {}", STACKS.join(" "));
        for w in workloads() {
            println!("workload {} {} bytes", w.name, w.bytes.len());
        }
        return ExitCode::SUCCESS;
    }
    if args.first().map(String::as_str) == Some("race") {
        println!(
            "{:<24} {:>6} {:<16} {:>10} {:>10} {:>7} {:>7} {:>7}",
            "workload", "bytes", "stack", "min ns", "median ns", "GB/s", "/serde", "/simdtape"
        );
        let names: Vec<&str> = if args.len() > 1 {
            args[1..].iter().map(String::as_str).collect()
        } else {
            switchboard_benches::WORKLOAD_NAMES.to_vec()
        };
        for name in names {
            let Some(w) = workload(name) else {
                eprintln!("unknown workload {name}");
                return ExitCode::from(2);
            };
            race(&w);
        }
        return ExitCode::SUCCESS;
    }
    if args.first().map(String::as_str) == Some("backends") {
        println!(
            "switchboard={} simd-json={}",
            switchboard::_benchable::simd_backend(),
            switchboard_benches::simd_json_backend()
        );
        return ExitCode::SUCCESS;
    }
    let [stack, name, n] = args.as_slice() else {
        eprintln!("usage: count <stack> <workload> <N> | list | backends | race [workload...]");
        return ExitCode::from(2);
    };
    let Some(w) = workload(name) else {
        eprintln!("unknown workload {name}");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<u64>() else {
        eprintln!("N must be a number");
        return ExitCode::from(2);
    };
    let ok = match stack.as_str() {
        "switchboard" => run::<Switchboard>(&w, n),
        "serde_json" => run::<SerdeJson>(&w, n),
        "serde_json_raw" => run::<SerdeJsonRaw>(&w, n),
        "simd_json_tape" => run::<SimdJsonTape>(&w, n),
        "simd_json_serde" => run::<SimdJsonSerde>(&w, n),
        _ => {
            eprintln!("unknown stack {stack}; one of {}", STACKS.join(" "));
            return ExitCode::from(2);
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("{stack} gave a wrong result on {name}");
        ExitCode::FAILURE
    }
}
