//! Instruction-count harness: runs one stack on one workload `N` times, so that
//! `callgrind.sh` can take instructions per message as
//! `(Ir(N2) - Ir(N1)) / (N2 - N1)` (start-up and first-message costs cancel out).
//!
//! ```text
//! count <stack> <workload> <N>     # exit 3 with "n/a: <reason>" if the stack's answer differs
//! count list
//! count backends
//! count check [--tsv] [workload...]                 # default: the whole corpus, both families
//! count race [--tsv] [--rounds R] [--stacks A,B] [workload...]  # `corpus` = every corpus file, `parse:corpus` too; `realworld`, `parse:realworld`: the real-world documents
//! count answer <workload>|-        # switchboard's response bytes to stdout (nothing for none); `-`: request on stdin
//! count threads [--tsv] [--rounds R] [workload]     # one router shared by 1 and 2 threads
//! ```
//!
//! Families of workloads, each with its own stacks (`count list`):
//! - classify/validate (issue 2, and `parse:FILE.json` on a corpus file): `switchboard`,
//!   `serde_json`, `serde_json_raw`, `sonic_rs`, `simd_json_tape`, `simd_json_serde`;
//! - `rpc_*` (issue 3) and corpus files (`FILE.json`), request bytes to response bytes:
//!   `switchboard`, `serde_json`, `sonic_rs`, `jsonrpsee`, `jsonrpsee_callback`,
//!   `jsonrpc_core`;
//! - `lookup_<n>` (issue 3), one lookup of a 20-byte name among `n`: `switchboard`,
//!   `std_hashmap`, `ahash_hashmap`, `phf`, and `match` (for `lookup_10`).
//!
//! Before anything is timed or counted, every stack's answer is checked against
//! switchboard's (the rpc family: the same response; the parse family: the same
//! classification and method). A stack whose answer differs is not run: `check`,
//! `race` and `callgrind.sh` show it as `n/a` with the difference as the reason.
//!
//! `race` is a wall-clock companion to the criterion benches for a noisy shared
//! machine: it interleaves the stacks in short blocks (round-robin, ~2 ms each,
//! `--rounds` rounds, default 150) and reports each stack's fastest and median block,
//! so that load from other processes hits all stacks alike and the minimum shows the
//! undisturbed cost. `min/sb` and `med/sb` are each stack's time over switchboard's
//! (how many times faster switchboard is). Except for the issue-2 classify workloads
//! (equal message counts, 2 ms for the fastest stack), every stack's block lasts
//! ~2 ms (the stacks differ 10-30x, so equal message counts would give the fast
//! ones short blocks and flattering minima).
//!
//! `threads` runs switchboard on one workload with one router shared by 1 and then 2
//! threads (each with its own session), interleaved in ~50 ms rounds, and reports
//! messages per second in total: how throughput scales with cores. A control runs the
//! same threads with nothing shared (a private parser each), to tell a busy machine
//! from contention.
//!
//! Allocations per message are counted by the separate `allocs` binary, so that
//! the counting allocator does not add to the instruction counts here.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard_benches::dispatch::{
    self, JsonrpcCore, Jsonrpsee, JsonrpseeCallback, RpcWorkload, SerdeServer, Server,
    check_and_run, rpc_workload, rpc_workloads,
};
use switchboard_benches::lookup::{Tables, match_ten};
use switchboard_benches::names::{PROBE, SIZES};
use switchboard_benches::{
    Expect, PARSE_STACK_NAMES, SerdeJson, SerdeJsonRaw, SimdJsonSerde, SimdJsonTape, SonicRs,
    Stack, Switchboard, Workload, check_and_run_stack, check_stack, corpus, workload, workloads,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STACKS: [&str; 6] = [
    Switchboard::NAME,
    SerdeJson::NAME,
    SerdeJsonRaw::NAME,
    SonicRs::NAME,
    SimdJsonTape::NAME,
    SimdJsonSerde::NAME,
];

const LOOKUP_STACKS: [&str; 5] = [
    "switchboard",
    "std_hashmap",
    "ahash_hashmap",
    "phf",
    "match",
];

/// Exit code of a run whose stack cannot be measured on the workload (`n/a`).
const NOT_APPLICABLE: u8 = 3;

/// Runs one lookup `n` times (the table built once), checking every index.
fn run_lookup(size: usize, stack: &str, n: u64) -> Option<bool> {
    let t = Tables::new(size);
    let want = Some(t.probe_index());
    let ok = match stack {
        "switchboard" => (0..n).all(|_| t.switchboard.get(black_box(PROBE)) == want),
        "std_hashmap" => (0..n).all(|_| t.std.get(black_box(PROBE)).copied() == want),
        "ahash_hashmap" => (0..n).all(|_| t.ahash.get(black_box(PROBE)).copied() == want),
        "phf" => (0..n).all(|_| t.phf.get(black_box(PROBE)).copied() == want),
        "match" if size == 10 => (0..n).all(|_| match_ten(black_box(PROBE)) == want),
        _ => return None,
    };
    Some(ok)
}

/// The set size of a `lookup_<n>` workload name.
fn lookup_size(name: &str) -> Option<usize> {
    let n = name.strip_prefix("lookup_")?.parse().ok()?;
    SIZES.contains(&n).then_some(n)
}

/// The family of a workload name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// Classification only (issue 2 workloads, `parse:FILE.json`).
    Parse,
    /// Request bytes to response bytes (`rpc_*`, `FILE.json`).
    Rpc,
    /// One method lookup (`lookup_<n>`).
    Lookup,
}

impl Family {
    fn of(name: &str) -> Family {
        if name.starts_with("lookup_") {
            Family::Lookup
        } else if name.starts_with("rpc_") || (corpus::is_corpus_name(name) && !is_parse(name)) {
            Family::Rpc
        } else {
            Family::Parse
        }
    }

    fn label(self) -> &'static str {
        match self {
            Family::Parse => "parse",
            Family::Rpc => "rpc",
            Family::Lookup => "lookup",
        }
    }
}

/// A corpus name of the parser family (`parse:` or `validate:`).
fn is_parse(name: &str) -> bool {
    corpus::is_classify_name(name)
}

/// Times blocks of `k` messages for one stack, keeping its warm state between blocks.
struct Racer {
    name: &'static str,
    /// Runs `k` messages and returns the time taken.
    block: Box<dyn FnMut(u64) -> Duration>,
    samples: Vec<f64>,
}

/// A parser stack as a racer, checked on `w` first (`Err`: the reason for n/a).
fn racer<S: Stack + Default + 'static>(w: &Workload) -> Result<Racer, String> {
    let mut stack = S::default();
    check_stack(&mut stack, w)?;
    let (input, expect) = (w.bytes.clone(), w.expect);
    let name = w.name;
    Ok(Racer {
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
    })
}

/// A dispatch stack as a racer, checked on `w` first (`Err`: the reason for n/a).
fn rpc_racer<S: Server + 'static>(w: &RpcWorkload) -> Result<Racer, String> {
    let mut server = S::new();
    let expected = dispatch::check(&mut server, w)?;
    let input = w.bytes.clone();
    let name = w.name;
    Ok(Racer {
        name: S::NAME,
        block: Box::new(move |k| {
            let start = Instant::now();
            for _ in 0..k {
                let ok = server.handle(black_box(&input)) == expected.as_deref();
                assert!(ok, "{} is wrong on {name}", S::NAME);
            }
            start.elapsed()
        }),
        samples: Vec::new(),
    })
}

/// One lookup table as a racer: a block of `k` lookups of [`PROBE`].
fn lookup_racer(
    name: &'static str,
    get: impl Fn(&str) -> Option<u32> + 'static,
    want: u32,
) -> Racer {
    Racer {
        name,
        block: Box::new(move |k| {
            let start = Instant::now();
            for _ in 0..k {
                assert!(get(black_box(PROBE)) == Some(want), "{name} is wrong");
            }
            start.elapsed()
        }),
        samples: Vec::new(),
    }
}

/// Interleaves the racers in blocks, `rounds` rounds, and returns each one's
/// (fastest, median) block in ns per message. With `equal_time`, every stack's block
/// lasts about 2 ms (so that no stack's minimum gains from shorter blocks, which the
/// 10-30x spread of the dispatch stacks would otherwise give); without it, as for
/// issue 2, all stacks run the same number of messages per block (2 ms for the
/// fastest).
fn run_race(racers: &mut [Racer], equal_time: bool, rounds: usize) -> Vec<(f64, f64)> {
    // Calibrate after a warm-up.
    let ks: Vec<u64> = racers
        .iter_mut()
        .map(|r| {
            (r.block)(100);
            let t = (r.block)(100).as_nanos() as u64 / 100;
            (2_000_000 / t.max(1)).clamp(1, 200_000)
        })
        .collect();
    let k_all = ks.iter().copied().max().unwrap_or(1);
    for _ in 0..rounds.max(1) {
        for (r, &k) in racers.iter_mut().zip(&ks) {
            let k = if equal_time { k } else { k_all };
            let t = (r.block)(k);
            r.samples.push(t.as_nanos() as f64 / k as f64);
        }
    }
    racers
        .iter_mut()
        .map(|r| {
            r.samples.sort_by(f64::total_cmp);
            (r.samples[0], r.samples[r.samples.len() / 2])
        })
        .collect()
}

/// One stack's result on one workload.
struct Row {
    family: Family,
    workload: String,
    bytes: usize,
    stack: &'static str,
    /// (fastest, median) ns per message, or the reason it was not run.
    stat: Result<(f64, f64), String>,
}

/// Races the racers that could be built and returns a row per stack, in order.
fn race_rows(
    family: Family,
    workload: &str,
    bytes: usize,
    candidates: Vec<(&'static str, Result<Racer, String>)>,
    equal_time: bool,
    rounds: usize,
) -> Vec<Row> {
    let mut racers = Vec::new();
    let mut slots = Vec::new();
    for (name, c) in candidates {
        match c {
            Ok(r) => {
                slots.push((name, Ok(racers.len())));
                racers.push(r);
            }
            Err(e) => slots.push((name, Err(e))),
        }
    }
    let stats = run_race(&mut racers, equal_time, rounds);
    slots
        .into_iter()
        .map(|(stack, slot)| Row {
            family,
            workload: workload.to_owned(),
            bytes,
            stack,
            stat: slot.map(|i| stats[i]),
        })
        .collect()
}

/// The racers of the dispatch stacks on `w`, in report order.
fn rpc_candidates(w: &RpcWorkload) -> Vec<(&'static str, Result<Racer, String>)> {
    vec![
        (
            dispatch::Switchboard::NAME,
            rpc_racer::<dispatch::Switchboard>(w),
        ),
        (SerdeServer::NAME, rpc_racer::<SerdeServer>(w)),
        (dispatch::SonicRs::NAME, rpc_racer::<dispatch::SonicRs>(w)),
        (Jsonrpsee::NAME, rpc_racer::<Jsonrpsee>(w)),
        (JsonrpseeCallback::NAME, rpc_racer::<JsonrpseeCallback>(w)),
        (JsonrpcCore::NAME, rpc_racer::<JsonrpcCore>(w)),
    ]
}

/// The racers of the parser stacks on `w`: on corpus files the five of
/// [`PARSE_STACK_NAMES`]; on the issue-2 workloads as before (`serde_json_raw` for
/// validation, `simd_json_serde` for calls), `sonic_rs` on both.
fn parse_candidates(w: &Workload) -> Vec<(&'static str, Result<Racer, String>)> {
    let mut c = vec![
        (Switchboard::NAME, racer::<Switchboard>(w)),
        (SerdeJson::NAME, racer::<SerdeJson>(w)),
        (SonicRs::NAME, racer::<SonicRs>(w)),
        (SimdJsonTape::NAME, racer::<SimdJsonTape>(w)),
    ];
    if w.expect == Expect::Valid {
        c.push((SerdeJsonRaw::NAME, racer::<SerdeJsonRaw>(w)));
    } else {
        c.push((SimdJsonSerde::NAME, racer::<SimdJsonSerde>(w)));
    }
    c
}

/// The lookup tables on one set size.
fn lookup_candidates(size: usize) -> Vec<(&'static str, Result<Racer, String>)> {
    let t = std::rc::Rc::new(Tables::new(size));
    let want = t.probe_index();
    let (a, b, c, d) = (t.clone(), t.clone(), t.clone(), t.clone());
    let mut v = vec![
        lookup_racer("switchboard", move |k| a.switchboard.get(k), want),
        lookup_racer("std_hashmap", move |k| b.std.get(k).copied(), want),
        lookup_racer("ahash_hashmap", move |k| c.ahash.get(k).copied(), want),
        lookup_racer("phf", move |k| d.phf.get(k).copied(), want),
    ];
    if size == 10 {
        v.push(lookup_racer("match", match_ten, want));
    }
    v.into_iter().map(|r| (r.name, Ok(r))).collect()
}

/// Expands `corpus`, `realworld` and their `parse:` forms into workload names.
fn expand(names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for n in names {
        match corpus::expand_group(n) {
            Some(group) => out.extend(group),
            None => out.push(n.clone()),
        }
    }
    out
}

/// Options common to `race`, `check` and `threads`.
struct Opts {
    tsv: bool,
    rounds: usize,
    names: Vec<String>,
    /// `race --stacks`: only these stacks (empty: all).
    stacks: Vec<String>,
}

fn opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        tsv: false,
        rounds: 150,
        names: Vec::new(),
        stacks: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tsv" => o.tsv = true,
            "--rounds" => {
                o.rounds = it
                    .next()
                    .and_then(|r| r.parse().ok())
                    .ok_or("--rounds takes a number")?;
            }
            "--stacks" => {
                let list = it.next().ok_or("--stacks takes a comma-separated list")?;
                o.stacks = list.split(',').map(str::to_owned).collect();
            }
            _ => o.names.push(a.clone()),
        }
    }
    o.names = expand(&o.names);
    Ok(o)
}

fn print_rows(rows: &[Row], tsv: bool, header: &mut bool) {
    if !*header {
        *header = true;
        if tsv {
            println!("family\tworkload\tbytes\tstack\tmin_ns\tmedian_ns\tnote");
        } else {
            println!(
                "{:<34} {:>6} {:<20} {:>10} {:>10} {:>7} {:>8} {:>8}",
                "workload", "bytes", "stack", "min ns", "median ns", "GB/s", "min/sb", "med/sb"
            );
        }
    }
    let sb = rows
        .iter()
        .find(|r| r.stack == "switchboard")
        .and_then(|r| r.stat.as_ref().ok().copied());
    for r in rows {
        match (&r.stat, tsv) {
            (Ok((min, med)), true) => println!(
                "{}\t{}\t{}\t{}\t{:.2}\t{:.2}\t",
                r.family.label(),
                r.workload,
                r.bytes,
                r.stack,
                min,
                med
            ),
            (Err(e), true) => println!(
                "{}\t{}\t{}\t{}\tn/a\tn/a\t{}",
                r.family.label(),
                r.workload,
                r.bytes,
                r.stack,
                e.replace(['\t', '\n'], " ")
            ),
            (Ok((min, med)), false) => {
                let ratio =
                    |x: f64, y: Option<f64>| y.map_or("-".into(), |y| format!("{:.2}", x / y));
                println!(
                    "{:<34} {:>6} {:<20} {:>10.1} {:>10.1} {:>7.2} {:>8} {:>8}",
                    r.workload,
                    r.bytes,
                    r.stack,
                    min,
                    med,
                    r.bytes as f64 / min,
                    ratio(*min, sb.map(|s| s.0)),
                    ratio(*med, sb.map(|s| s.1))
                )
            }
            (Err(e), false) => println!(
                "{:<34} {:>6} {:<20} {:>10} n/a: {e}",
                r.workload, r.bytes, r.stack, "n/a"
            ),
        }
    }
}

fn race(o: &Opts) -> Result<(), String> {
    let names: Vec<String> = if o.names.is_empty() {
        switchboard_benches::WORKLOAD_NAMES
            .iter()
            .chain(&dispatch::RPC_WORKLOAD_NAMES)
            .map(|s| (*s).to_owned())
            .chain(SIZES.iter().map(|n| format!("lookup_{n}")))
            .collect()
    } else {
        o.names.clone()
    };
    // `--stacks`: the others are neither checked nor raced.
    let keep = |c: Vec<(&'static str, Result<Racer, String>)>| -> Vec<_> {
        c.into_iter()
            .filter(|(n, _)| o.stacks.is_empty() || o.stacks.iter().any(|s| s == n))
            .collect()
    };
    let mut header = false;
    for name in &names {
        let rows = match Family::of(name) {
            Family::Lookup => {
                let size = lookup_size(name).ok_or(format!("unknown workload {name}"))?;
                race_rows(
                    Family::Lookup,
                    name,
                    PROBE.len(),
                    keep(lookup_candidates(size)),
                    true,
                    o.rounds,
                )
            }
            Family::Rpc => {
                let w = rpc_workload(name).ok_or(format!("unknown workload {name}"))?;
                let c = keep(rpc_candidates(&w));
                race_rows(Family::Rpc, name, w.bytes.len(), c, true, o.rounds)
            }
            Family::Parse => {
                let w = if is_parse(name) {
                    switchboard_benches::corpus_workload(name)?
                } else {
                    workload(name).ok_or(format!("unknown workload {name}"))?
                };
                let c = keep(parse_candidates(&w));
                race_rows(
                    Family::Parse,
                    name,
                    w.bytes.len(),
                    c,
                    is_parse(name),
                    o.rounds,
                )
            }
        };
        print_rows(&rows, o.tsv, &mut header);
    }
    Ok(())
}

/// One stack's check: its name, `Err` with the reason when n/a.
type Checked = (&'static str, Result<(), String>);

/// `count check`: every stack's answer on every named workload (default: the corpus
/// in both families), `ok` or `n/a: reason`; exit 0 either way (n/a is a result).
fn check(o: &Opts) -> Result<(), String> {
    let names = if o.names.is_empty() {
        expand(&["corpus".into(), "parse:corpus".into()])
    } else {
        o.names.clone()
    };
    if o.tsv {
        println!("family\tworkload\tbytes\tstack\tstatus\treason");
    }
    for name in &names {
        let family = Family::of(name);
        let (bytes, results): (usize, Vec<Checked>) = match family {
            Family::Rpc => {
                let w = rpc_workload(name).ok_or(format!("unknown workload {name}"))?;
                let r = dispatch::SERVER_NAMES
                    .iter()
                    .map(|s| {
                        let r = dispatch::check_by_name(s, &w).expect("a known stack");
                        (*s, r.map(|_| ()))
                    })
                    .collect();
                (w.bytes.len(), r)
            }
            Family::Parse => {
                let w = if is_parse(name) {
                    switchboard_benches::corpus_workload(name)?
                } else {
                    workload(name).ok_or(format!("unknown workload {name}"))?
                };
                let r = PARSE_STACK_NAMES
                    .iter()
                    .map(|s| {
                        let r = switchboard_benches::check_stack_by_name(s, &w).expect("known");
                        (*s, r)
                    })
                    .collect();
                (w.bytes.len(), r)
            }
            Family::Lookup => return Err(format!("{name}: lookups have nothing to check")),
        };
        for (stack, r) in results {
            let (status, reason) = match &r {
                Ok(()) => ("ok", String::new()),
                Err(e) => ("n/a", e.replace(['\t', '\n'], " ")),
            };
            if o.tsv {
                println!(
                    "{}\t{name}\t{bytes}\t{stack}\t{status}\t{reason}",
                    family.label()
                );
            } else {
                println!("{name:<34} {bytes:>6} {stack:<20} {status} {reason}");
            }
        }
    }
    Ok(())
}

/// `count threads`: switchboard on one workload (default `eth_getBalance.json`), one
/// router shared by 1 and by 2 threads, each thread with its own session; and, as a
/// control, the same threads each classifying the message with a private parser
/// (nothing shared at all): if the control does not scale either, the machine has no
/// free core, and the shared router is not to blame. Rounds of ~50 ms alternate between
/// all four; prints each one's best and median total messages per second.
fn threads(o: &Opts) -> Result<(), String> {
    let name = o
        .names
        .first()
        .map_or("eth_getBalance.json", String::as_str);
    let w = rpc_workload(name).ok_or(format!("unknown workload {name}"))?;
    let router = dispatch::router();
    let expected = dispatch::check(&mut dispatch::Switchboard::on(router.clone()), &w)?;
    let expect = Expect::of(&w.bytes)?;
    let w = Arc::new((w, expected));
    // One thread's job: `k` messages, either through a session on the shared router or
    // through a private parser.
    let job = |shared: bool, k: u64| {
        let (router, w) = (router.clone(), w.clone());
        move || {
            if shared {
                let mut s = dispatch::Switchboard::on(router);
                for _ in 0..k {
                    let ok = s.handle(black_box(&w.0.bytes)) == w.1.as_deref();
                    assert!(ok, "switchboard is wrong on {}", w.0.name);
                }
            } else {
                let mut p = Switchboard::default();
                for _ in 0..k {
                    assert!(
                        p.run(black_box(&w.0.bytes), expect),
                        "wrong on {}",
                        w.0.name
                    );
                }
            }
        }
    };
    // Messages per ~50 ms block for one thread.
    let calibrate = |shared: bool| {
        let start = Instant::now();
        job(shared, 1000)();
        let per = start.elapsed().as_nanos().max(1) as u64 / 1000;
        (50_000_000 / per.max(1)).max(1)
    };
    let ks = [calibrate(true), calibrate(false)];
    let run = |shared: bool, n_threads: usize| -> f64 {
        let k = ks[usize::from(!shared)];
        let start = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..n_threads {
                scope.spawn(job(shared, k));
            }
        });
        (k as usize * n_threads) as f64 / start.elapsed().as_secs_f64()
    };
    let setups = [
        ("shared_router", true, 1),
        ("shared_router", true, 2),
        ("control_private_parser", false, 1),
        ("control_private_parser", false, 2),
    ];
    let rounds = (o.rounds / 5).max(3);
    let mut samples = vec![Vec::new(); setups.len()];
    for _ in 0..rounds {
        for (i, &(_, shared, n)) in setups.iter().enumerate() {
            samples[i].push(run(shared, n));
        }
    }
    if o.tsv {
        println!("workload\tsetup\tthreads\tbest_msgs_per_s\tmedian_msgs_per_s\trounds");
    } else {
        println!(
            "{:<24} {:<24} {:>7} {:>14} {:>14}   (messages per second, all threads together)",
            "workload", "setup", "threads", "best", "median"
        );
    }
    for ((setup, _, n), s) in setups.iter().zip(&mut samples) {
        s.sort_by(f64::total_cmp);
        let (best, med) = (s[s.len() - 1], s[s.len() / 2]);
        if o.tsv {
            println!("{name}\t{setup}\t{n}\t{best:.0}\t{med:.0}\t{rounds}");
        } else {
            println!("{name:<24} {setup:<24} {n:>7} {best:>14.0} {med:>14.0}");
        }
    }
    Ok(())
}

fn list() {
    println!("stacks: {}", STACKS.join(" "));
    println!("rpc stacks: {}", dispatch::SERVER_NAMES.join(" "));
    println!("lookup stacks: {}", LOOKUP_STACKS.join(" "));
    for w in workloads() {
        println!("workload {} {} bytes", w.name, w.bytes.len());
    }
    for w in rpc_workloads() {
        println!("workload {} {} bytes", w.name, w.bytes.len());
    }
    for n in SIZES {
        println!("workload lookup_{n} {} bytes", PROBE.len());
    }
    for f in corpus::file_names() {
        let len = corpus::load(&f).map_or(0, |b| b.len());
        println!("workload {f} {len} bytes");
        println!("workload {}{f} {len} bytes", corpus::PARSE_PREFIX);
        println!("workload {}{f} {len} bytes", corpus::VALIDATE_PREFIX);
    }
    // The real-world documents, where they can be read (`realworld` in a name list).
    for f in corpus::realworld_names() {
        if let Ok(b) = corpus::load(&f) {
            println!("workload {f} {} bytes", b.len());
            println!("workload {}{f} {} bytes", corpus::PARSE_PREFIX, b.len());
            println!("workload {}{f} {} bytes", corpus::VALIDATE_PREFIX, b.len());
        }
    }
    for name in SCALING {
        let len = rpc_workload(name)
            .map(|w| w.bytes.len())
            .or_else(|| workload(name).map(|w| w.bytes.len()))
            .unwrap_or(0);
        println!("workload {name} {len} bytes");
    }
}

/// The scaling workloads (`count list` shows them; any `rpc_batch_<n>` with n in
/// 1..=1000 and `parse_params_<n>` runs).
const SCALING: [&str; 9] = [
    "rpc_batch_1",
    "rpc_batch_10",
    "rpc_batch_100",
    "rpc_batch_1000",
    "parse_params_100",
    "parse_params_1000",
    "parse_params_10000",
    "parse_params_100000",
    "parse_params_1000000",
];

/// `count <stack> <workload> <n>`: `Ok(Ok(ok))` after the run, `Ok(Err(reason))`
/// when the stack is n/a on the workload, `Err` on a usage error.
fn run_one(stack: &str, name: &str, n: u64) -> Result<Result<bool, String>, String> {
    if let Some(size) = lookup_size(name) {
        return run_lookup(size, stack, n).map(Ok).ok_or(format!(
            "unknown lookup stack {stack} for {name}; one of {}",
            LOOKUP_STACKS.join(" ")
        ));
    }
    if Family::of(name) == Family::Rpc {
        let w = rpc_workload(name).ok_or(format!("unknown workload {name}"))?;
        return Ok(match stack {
            "switchboard" => check_and_run::<dispatch::Switchboard>(&w, n),
            "switchboard_typed" => check_and_run::<dispatch::SwitchboardTyped>(&w, n),
            "serde_json" => check_and_run::<SerdeServer>(&w, n),
            "sonic_rs" => check_and_run::<dispatch::SonicRs>(&w, n),
            "jsonrpsee" => check_and_run::<Jsonrpsee>(&w, n),
            "jsonrpsee_callback" => check_and_run::<JsonrpseeCallback>(&w, n),
            "jsonrpc_core" => check_and_run::<JsonrpcCore>(&w, n),
            _ => {
                return Err(format!(
                    "unknown stack {stack}; one of {}",
                    dispatch::SERVER_NAMES.join(" ")
                ));
            }
        });
    }
    let w = if is_parse(name) {
        match switchboard_benches::corpus_workload(name) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        }
    } else {
        workload(name).ok_or(format!("unknown workload {name}"))?
    };
    Ok(match stack {
        "switchboard" => check_and_run_stack::<Switchboard>(&w, n),
        "serde_json" => check_and_run_stack::<SerdeJson>(&w, n),
        "serde_json_raw" => check_and_run_stack::<SerdeJsonRaw>(&w, n),
        "sonic_rs" => check_and_run_stack::<SonicRs>(&w, n),
        "simd_json_tape" => check_and_run_stack::<SimdJsonTape>(&w, n),
        "simd_json_serde" => check_and_run_stack::<SimdJsonSerde>(&w, n),
        _ => {
            return Err(format!(
                "unknown stack {stack}; one of {}",
                STACKS.join(" ")
            ));
        }
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: count <stack> <workload> <N> | list | backends | \
                 check [--tsv] [workload...] | race [--tsv] [--rounds R] [--stacks A,B] [workload...] | \
                 threads [--tsv] [--rounds R] [workload] | answer <workload>|-";
    let sub = args.first().map(String::as_str);
    let done = |r: Result<(), String>| match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    };
    match sub {
        Some("list") => {
            list();
            return ExitCode::SUCCESS;
        }
        Some("backends") => {
            println!(
                "switchboard={} simd-json={} sonic-rs={}",
                switchboard::_benchable::simd_backend(),
                switchboard_benches::simd_json_backend(),
                dispatch::sonic_rs_backend()
            );
            #[cfg(target_arch = "x86_64")]
            if dispatch::sonic_rs_backend() == "sse2"
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("pclmulqdq")
            {
                eprintln!(
                    "note: this CPU has AVX2, but sonic-rs (compile-time kernels) was built \
                     without it; RUSTFLAGS=\"-C target-cpu=native\" builds its AVX2 kernels"
                );
            }
            return ExitCode::SUCCESS;
        }
        Some("answer") => {
            // switchboard's answer (the benches' router: the demo methods plus
            // tools/call), for harnesses outside Rust to check theirs against.
            use std::io::{Read, Write};
            let w = match args.get(1).filter(|_| args.len() == 2).map(String::as_str) {
                Some("-") => {
                    let mut bytes = Vec::new();
                    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
                        return done(Err(e.to_string()));
                    }
                    Some(dispatch::rpc_workload_of("stdin", bytes))
                }
                Some(n) => rpc_workload(n),
                None => None,
            };
            let Some(w) = w else {
                eprintln!(
                    "usage: count answer <workload>|- (a corpus file, an rpc_* workload, or the \
                     request on stdin)"
                );
                return ExitCode::from(2);
            };
            let out = w.expected.unwrap_or_default();
            return match std::io::stdout().write_all(&out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => done(Err(e.to_string())),
            };
        }
        Some(cmd @ ("race" | "check" | "threads")) => {
            let o = match opts(&args[1..]) {
                Ok(o) => o,
                Err(e) => return done(Err(e)),
            };
            return done(match cmd {
                "race" => race(&o),
                "check" => check(&o),
                _ => threads(&o),
            });
        }
        _ => {}
    }
    let [stack, name, n] = args.as_slice() else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<u64>() else {
        eprintln!("N must be a number");
        return ExitCode::from(2);
    };
    match run_one(stack, name, n) {
        Ok(Ok(true)) => ExitCode::SUCCESS,
        Ok(Ok(false)) => {
            eprintln!("{stack} gave a wrong result on {name}");
            ExitCode::FAILURE
        }
        Ok(Err(reason)) => {
            eprintln!("n/a: {reason}");
            ExitCode::from(NOT_APPLICABLE)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
