//! Issue 2 benches: the scanner and classifier side by side with serde_json,
//! sonic-rs and simd-json, each group in one run so that ratios between stacks are meaningful
//! on a noisy machine.
//!
//! - `classify_*`: validate a whole message, classify it, and extract the method
//!   name (a `&str` into the input); every element for the batch.
//! - `validate_*`: is this one valid JSON text (params payloads of 4 KB and 64 KB).
//!   `serde_json` there is `IgnoredAny`, which does not check UTF-8 inside strings;
//!   `serde_json_raw` (`&RawValue`) does, like switchboard and simd-json.
//!
//! - `parse:<file>`: the corpus files (`benches/corpus/`), each classified as
//!   switchboard classifies it; a stack that classifies it otherwise is printed as
//!   `n/a` with the reason and not timed.
//!
//! Every iteration asserts its result, so nothing is optimized away and a wrong
//! answer fails the run. Run with, e.g.:
//!
//! ```text
//! cargo bench -p switchboard-benches --bench classify -- --warm-up-time 1 --measurement-time 3
//! cargo bench -p switchboard-benches --bench classify -- parse:     # the corpus only
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use switchboard_benches::{
    SerdeJson, SerdeJsonRaw, SimdJsonSerde, SimdJsonTape, SonicRs, Stack, Switchboard, Workload,
    check_stack, corpus, corpus_workload, dispatch::sonic_rs_backend, simd_json_backend, workload,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One stack on one workload, its state (parser, buffers) reused across
/// iterations as a session would reuse it.
fn bench_stack<S: Stack + Default>(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    let mut stack = S::default();
    let input = w.bytes.as_slice();
    let expect = w.expect;
    if let Err(e) = check_stack(&mut stack, w) {
        eprintln!("{}/{}: n/a: {e}", w.name, S::NAME);
        return;
    }
    g.bench_function(S::NAME, |b| {
        b.iter(|| {
            let ok = stack.run(black_box(input), black_box(expect));
            assert!(ok, "{} is wrong on {}", S::NAME, w.name);
        })
    });
}

/// The copy alone that the simd-json stacks pay for first (input into a reused
/// `Vec`), to show its share of their time.
fn bench_input_copy(g: &mut BenchmarkGroup<'_, WallTime>, w: &Workload) {
    let mut scratch: Vec<u8> = Vec::with_capacity(w.bytes.len());
    let input = w.bytes.as_slice();
    g.bench_function("input_copy_only", |b| {
        b.iter(|| {
            scratch.clear();
            scratch.extend_from_slice(black_box(input));
            assert_eq!(black_box(&scratch).len(), input.len());
        })
    });
}

fn group<'c>(c: &'c mut Criterion, name: &str, w: &Workload) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(w.bytes.len() as u64));
    g
}

fn load(name: &str) -> Workload {
    workload(name).unwrap_or_else(|| panic!("no workload {name}"))
}

fn classify(c: &mut Criterion) {
    for (group_name, name, copy) in [
        ("classify_eth_getBalance", "eth_getBalance", true),
        ("classify_subtract_positional", "subtract_positional", false),
        ("classify_subtract_named", "subtract_named", false),
        ("classify_batch10", "batch10_eth_getBalance", false),
    ] {
        let w = load(name);
        let mut g = group(c, group_name, &w);
        bench_stack::<Switchboard>(&mut g, &w);
        bench_stack::<SerdeJson>(&mut g, &w);
        bench_stack::<SonicRs>(&mut g, &w);
        bench_stack::<SimdJsonTape>(&mut g, &w);
        bench_stack::<SimdJsonSerde>(&mut g, &w);
        if copy {
            bench_input_copy(&mut g, &w);
        }
        g.finish();
    }
}

fn validate(c: &mut Criterion) {
    for (group_name, name, copy) in [
        ("validate_4k_params", "params_4k", true),
        ("validate_64k_text", "text_64k", false),
        ("validate_64k_base64", "base64_64k", false),
    ] {
        let w = load(name);
        let mut g = group(c, group_name, &w);
        bench_stack::<Switchboard>(&mut g, &w);
        bench_stack::<SerdeJson>(&mut g, &w);
        bench_stack::<SerdeJsonRaw>(&mut g, &w);
        bench_stack::<SonicRs>(&mut g, &w);
        bench_stack::<SimdJsonTape>(&mut g, &w);
        if copy {
            bench_input_copy(&mut g, &w);
        }
        g.finish();
    }
}

/// The corpus, classification only: one group per file, `parse:<file>`.
fn corpus_groups(c: &mut Criterion) {
    for file in corpus::file_names() {
        let w = corpus_workload(&format!("{}{file}", corpus::PARSE_PREFIX))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut g = group(c, w.name, &w);
        bench_stack::<Switchboard>(&mut g, &w);
        bench_stack::<SerdeJson>(&mut g, &w);
        bench_stack::<SonicRs>(&mut g, &w);
        bench_stack::<SimdJsonTape>(&mut g, &w);
        bench_stack::<SimdJsonSerde>(&mut g, &w);
        g.finish();
    }
}

fn main() {
    println!(
        "switchboard simd backend: {}; simd-json backend: {}; sonic-rs kernels: {}",
        switchboard::_benchable::simd_backend(),
        simd_json_backend(),
        sonic_rs_backend()
    );
    // Modest defaults for a shared 2-core machine; command-line flags override them.
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    classify(&mut c);
    validate(&mut c);
    corpus_groups(&mut c);
    c.final_summary();
}
