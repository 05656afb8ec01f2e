//! Issue 3 benches: full request bytes to response bytes, switchboard side by side
//! with jsonrpsee, jsonrpc-core and a hand-written server on serde_json and on sonic-rs, the same
//! methods and the same answers on every stack (see `switchboard_benches::dispatch`
//! for what each row runs).
//!
//! Before timing, every stack's response is checked to be the same answer as
//! switchboard's; every iteration then compares the response with that stack's
//! checked bytes, so a wrong or missing answer fails the run. A stack whose answer
//! differs on a corpus message is not timed there: it is printed as `n/a` with the
//! reason. Groups `rpc:<file>` run the corpus files (`benches/corpus/`). Run with:
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-benches cargo bench -p switchboard-benches --bench dispatch -- --warm-up-time 1 --measurement-time 3
//! cargo bench -p switchboard-benches --bench dispatch -- rpc:       # the corpus only
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use switchboard_benches::corpus;
use switchboard_benches::dispatch::{
    JsonrpcCore, Jsonrpsee, JsonrpseeCallback, RpcWorkload, SerdeServer, Server, SonicRs,
    Switchboard, check, rpc_workload, sonic_rs_backend,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One stack on one workload, its state reused across iterations.
fn bench_server<S: Server>(g: &mut BenchmarkGroup<'_, WallTime>, w: &RpcWorkload) {
    let mut server = S::new();
    let expected = match check(&mut server, w) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{}/{}: n/a: {e}", w.name, S::NAME);
            return;
        }
    };
    let input = w.bytes.as_slice();
    g.bench_function(S::NAME, |b| {
        b.iter(|| {
            let resp = server.handle(black_box(input));
            assert!(
                resp == expected.as_deref(),
                "{} is wrong on {}",
                S::NAME,
                w.name
            );
        })
    });
}

fn dispatch(c: &mut Criterion) {
    for (group_name, name) in [
        ("dispatch_eth_getBalance", "rpc_eth_getBalance"),
        ("dispatch_subtract", "rpc_subtract"),
        ("dispatch_batch10_subtract", "rpc_batch10_subtract"),
        (
            "dispatch_batch10_eth_getBalance",
            "rpc_batch10_eth_getBalance",
        ),
    ] {
        let w = rpc_workload(name).unwrap_or_else(|| panic!("no workload {name}"));
        let mut g = c.benchmark_group(group_name);
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        bench_server::<Switchboard>(&mut g, &w);
        bench_server::<SerdeServer>(&mut g, &w);
        bench_server::<SonicRs>(&mut g, &w);
        bench_server::<JsonrpseeCallback>(&mut g, &w);
        bench_server::<Jsonrpsee>(&mut g, &w);
        bench_server::<JsonrpcCore>(&mut g, &w);
        g.finish();
    }
}

/// The corpus, request to response: one group per file, `rpc:<file>`.
fn corpus_groups(c: &mut Criterion) {
    for file in corpus::file_names() {
        let w = rpc_workload(&file).unwrap_or_else(|| panic!("cannot read corpus file {file}"));
        let mut g = c.benchmark_group(format!("rpc:{file}"));
        g.throughput(Throughput::Bytes(w.bytes.len() as u64));
        bench_server::<Switchboard>(&mut g, &w);
        bench_server::<SerdeServer>(&mut g, &w);
        bench_server::<SonicRs>(&mut g, &w);
        bench_server::<JsonrpseeCallback>(&mut g, &w);
        bench_server::<Jsonrpsee>(&mut g, &w);
        bench_server::<JsonrpcCore>(&mut g, &w);
        g.finish();
    }
}

fn main() {
    println!(
        "switchboard simd backend: {}; sonic-rs kernels: {}",
        switchboard::_benchable::simd_backend(),
        sonic_rs_backend()
    );
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    dispatch(&mut c);
    corpus_groups(&mut c);
    c.final_summary();
}
