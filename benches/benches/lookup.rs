//! Issue 3 benches: looking up a 20-byte method name (`eth_getBlockByNumber`) among
//! 10, 100, 1000 and 10 000 registered names: switchboard's perfect-hash method
//! table against `HashMap<String, _>` (std's SipHash and ahash), a `phf` map
//! generated at compile time (`phf_codegen` in `build.rs`), and, for the 10-name
//! set, a `match`. Every lookup asserts its index. Also the table's build time for
//! 10 000 names (`build_10000`: switchboard's seed search against filling the hash
//! maps). Run with:
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-benches cargo bench -p switchboard-benches --bench lookup -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use switchboard::_benchable::MethodTable;
use switchboard_benches::lookup::{Tables, match_ten};
use switchboard_benches::names::{PROBE, SIZES};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn one(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    want: u32,
    get: impl Fn(&str) -> Option<u32>,
) {
    assert_eq!(get(PROBE), Some(want), "{name}");
    g.bench_function(name, |b| {
        b.iter(|| {
            let got = get(black_box(PROBE));
            assert!(got == Some(want), "{name} is wrong");
        })
    });
}

fn lookup(c: &mut Criterion) {
    for n in SIZES {
        let t = Tables::new(n);
        assert!(t.switchboard.is_perfect(), "{n}: fallback map in use");
        let want = t.probe_index();
        let mut g = c.benchmark_group(format!("lookup_{n}"));
        one(&mut g, "switchboard", want, |k| t.switchboard.get(k));
        one(&mut g, "std_hashmap", want, |k| t.std.get(k).copied());
        one(&mut g, "ahash_hashmap", want, |k| t.ahash.get(k).copied());
        one(&mut g, "phf", want, |k| t.phf.get(k).copied());
        if n == 10 {
            one(&mut g, "match", want, match_ten);
        }
        g.finish();
    }
}

/// Building each table from 10 000 names (the names are generated once, outside
/// the timing; `phf` is built at compile time and has no row).
fn build(c: &mut Criterion) {
    let names = switchboard_benches::names::method_names(10_000);
    let mut g = c.benchmark_group("build_10000");
    g.sample_size(20);
    g.bench_function("switchboard", |b| {
        b.iter(|| {
            let t = MethodTable::build(black_box(&names));
            assert!(t.is_perfect(), "fallback map in use");
            t
        })
    });
    g.bench_function("std_hashmap", |b| {
        b.iter(|| {
            black_box(&names)
                .iter()
                .enumerate()
                .map(|(i, s)| (s.clone(), i as u32))
                .collect::<std::collections::HashMap<String, u32>>()
        })
    });
    g.finish();
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    lookup(&mut c);
    build(&mut c);
    c.final_summary();
}
