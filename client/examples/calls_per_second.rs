//! Calls per second, and the client's CPU time per call, of this client and of
//! jsonrpsee's `HttpClient` and `WsClient` against the same switchboard server
//! (in-process, one runtime thread; WebSocket is `GET /` with `Upgrade` on the
//! same listener): `subtract [42, 23]`, one call at a time and 32 in flight.
//!
//! The server's thread is pinned to one core and the client's (one
//! current-thread runtime: the calls, the connections' tasks, jsonrpsee's
//! background task) to another, when there are two. The stacks take turns in
//! each round; each row is one stack's run of SECONDS. Calls per second are
//! bounded by the server, which both stacks share; CPU per call is the
//! client's CPU time over the calls it made: the process's
//! (`CLOCK_PROCESS_CPUTIME_ID`) less the server thread's, so that a thread a
//! client starts counts too. "server busy" is the server thread's CPU time
//! over the run's wall time: near 100%, the server is the bound.
//!
//! `cargo run --release -p switchboard-client --example calls_per_second [ROUNDS [SECONDS]]`
//! [default: 3 rounds of 1 s]
//!
//! `... --example calls_per_second count STACK N [URL]` makes N calls one at a
//! time with STACK (`switchboard-http`, `jsonrpsee-http`, `switchboard-ws`,
//! `jsonrpsee-ws`) and exits: under callgrind against a server in another
//! process (`switchboard serve`, URL `127.0.0.1:PORT`), the difference of two
//! runs with different N gives the client's instructions per call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpsee_core::client::ClientT;
use jsonrpsee_core::rpc_params;
use switchboard_client::Client;
use switchboard_server::demo;
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero `cpu_set_t` is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the number of bits in `set`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Pins the calling thread to `cpu` (quietly not, if the system refuses).
fn pin(cpu: Option<usize>) {
    let Some(cpu) = cpu else { return };
    // SAFETY: an all-zero `cpu_set_t` is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` comes from `allowed_cpus`, so it is below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        eprintln!(
            "could not pin to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The CPU time so far of `clock` (a CPU-time clock).
fn cpu(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut t) };
    assert_eq!(rc, 0, "clock_gettime({clock})");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The calling thread's CPU-time clock.
fn this_thread_clock() -> libc::clockid_t {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `pthread_self` is the calling thread, alive; `clock` is writable.
    let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    assert_eq!(rc, 0, "pthread_getcpuclockid");
    clock
}

/// The client's CPU time so far: the whole process's less the server thread's
/// (`server`, its clock), so that threads a client starts count too
/// (jsonrpsee's `WsClient` times each request with `futures-timer`, whose
/// thread is woken per request).
fn client_cpu(server: libc::clockid_t) -> Duration {
    cpu(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(cpu(server))
}

/// Starts the server on a thread of its own (pinned to `cpu`); its address
/// and the thread's CPU-time clock.
fn server(cpu: Option<usize>) -> (std::net::SocketAddr, libc::clockid_t) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        pin(cpu);
        let clock = this_thread_clock();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send((listener.local_addr().unwrap(), clock)).unwrap();
            let svc = Switchboard::new(demo::router());
            serve_with(
                listener,
                svc,
                ServeConfig::default(),
                std::future::pending(),
            )
            .await
        })
    });
    rx.recv().unwrap()
}

/// One client under test.
enum Stack {
    Ours(Client),
    JsonrpseeHttp(jsonrpsee_http_client::HttpClient),
    JsonrpseeWs(jsonrpsee_ws_client::WsClient),
}

impl Stack {
    const NAMES: [&str; 4] = [
        "switchboard-http",
        "jsonrpsee-http",
        "switchboard-ws",
        "jsonrpsee-ws",
    ];

    async fn connect(name: &str, addr: &str) -> Stack {
        match name {
            "switchboard-http" => {
                Stack::Ours(Client::connect(&format!("http://{addr}/")).await.unwrap())
            }
            "switchboard-ws" => {
                Stack::Ours(Client::connect(&format!("ws://{addr}/")).await.unwrap())
            }
            "jsonrpsee-http" => Stack::JsonrpseeHttp(
                jsonrpsee_http_client::HttpClientBuilder::default()
                    .build(format!("http://{addr}/"))
                    .unwrap(),
            ),
            "jsonrpsee-ws" => Stack::JsonrpseeWs(
                jsonrpsee_ws_client::WsClientBuilder::default()
                    .build(format!("ws://{addr}/"))
                    .await
                    .unwrap(),
            ),
            other => panic!("unknown stack {other:?}: one of {:?}", Stack::NAMES),
        }
    }

    async fn call(&self) -> f64 {
        match self {
            Stack::Ours(c) => c.request::<_, f64>("subtract", &[42, 23]).await.unwrap(),
            Stack::JsonrpseeHttp(c) => c
                .request::<f64, _>("subtract", rpc_params![42, 23])
                .await
                .unwrap(),
            Stack::JsonrpseeWs(c) => c
                .request::<f64, _>("subtract", rpc_params![42, 23])
                .await
                .unwrap(),
        }
    }
}

/// One run: calls per second, the client's CPU time per call, and the
/// server thread's CPU time over the wall time.
struct Run {
    rate: f64,
    cpu_per_call: Duration,
    server_busy: f64,
}

/// `stack` called by `tasks` tasks for `secs` (on the current-thread runtime
/// of the calling thread; `server` is the server thread's clock).
async fn run(stack: &Arc<Stack>, tasks: usize, secs: f64, server: libc::clockid_t) -> Run {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let cpu = client_cpu(server);
    let server_cpu = self::cpu(server);
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let stack = stack.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < until {
                    assert_eq!(stack.call().await, 19.0);
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut calls = 0;
    for h in handles {
        calls += h.await.unwrap();
    }
    let elapsed = start.elapsed();
    let cpu = client_cpu(server).saturating_sub(cpu);
    let server_cpu = self::cpu(server).saturating_sub(server_cpu);
    Run {
        rate: calls as f64 / elapsed.as_secs_f64(),
        cpu_per_call: cpu / calls.max(1) as u32,
        server_busy: server_cpu.as_secs_f64() / elapsed.as_secs_f64(),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// `count STACK N [URL]`: N calls, one at a time.
fn count(args: &[String]) {
    let [name, n, rest @ ..] = args else {
        panic!("usage: calls_per_second count STACK N [HOST:PORT]");
    };
    let n: u64 = n.parse().expect("N: a number of calls");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addr = match rest.first() {
        Some(a) => a.clone(),
        None => server(None).0.to_string(),
    };
    rt.block_on(async {
        let stack = Stack::connect(name, &addr).await;
        for _ in 0..n {
            assert_eq!(stack.call().await, 19.0);
        }
    });
    println!("{name}: {n} calls");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("count") {
        return count(&args[1..]);
    }
    let rounds: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(3);
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let cpus = allowed_cpus();
    let (server_cpu, client_cpu) = match cpus.as_slice() {
        [a, b, ..] => (Some(*a), Some(*b)),
        _ => (None, None),
    };
    let (addr, server_clock) = server(server_cpu);
    let addr = addr.to_string();
    pin(client_cpu);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "subtract [42, 23], {rounds} rounds of {secs} s per row, server: switchboard serve_with in-process \
         (CPU {server_cpu:?}), client: one current-thread runtime (CPU {client_cpu:?})"
    );
    rt.block_on(async {
        let mut stacks = Vec::new();
        for name in Stack::NAMES {
            stacks.push((name, Arc::new(Stack::connect(name, &addr).await)));
        }
        // Warm up: connections open, allocator and caches warm.
        for (_, s) in &stacks {
            run(s, 32, 0.2, server_clock).await;
        }
        // results[tasks][stack]: the runs, one per round.
        let in_flight = [1usize, 32];
        let mut results: Vec<Vec<Vec<Run>>> = in_flight
            .iter()
            .map(|_| stacks.iter().map(|_| Vec::new()).collect())
            .collect();
        for round in 1..=rounds {
            for (t, &tasks) in in_flight.iter().enumerate() {
                for (s, (name, stack)) in stacks.iter().enumerate() {
                    let r = run(stack, tasks, secs, server_clock).await;
                    println!(
                        "round {round}, {tasks:>2} in flight, {name:<16} {:>8.0} calls/s {:>6.2} us client CPU/call, server busy {:>3.0}%",
                        r.rate,
                        us(r.cpu_per_call),
                        r.server_busy * 100.0
                    );
                    results[t][s].push(r);
                }
            }
        }
        println!("medians of {rounds} rounds (ratio: switchboard-client over jsonrpsee; per-round ratios in brackets):");
        for (t, &tasks) in in_flight.iter().enumerate() {
            for (transport, ours, theirs) in [("HTTP", 0, 1), ("WS  ", 2, 3)] {
                let (a, b) = (&results[t][ours], &results[t][theirs]);
                let rate = |v: &[Run]| median(v.iter().map(|r| r.rate).collect());
                let cpu = |v: &[Run]| median(v.iter().map(|r| us(r.cpu_per_call)).collect());
                let busy = |v: &[Run]| median(v.iter().map(|r| r.server_busy * 100.0).collect());
                let rate_ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x.rate / y.rate).collect();
                let cpu_ratios: Vec<f64> = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| y.cpu_per_call.as_secs_f64() / x.cpu_per_call.as_secs_f64())
                    .collect();
                let range = |v: &[f64]| {
                    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = v.iter().copied().fold(0.0, f64::max);
                    format!("{lo:.2}-{hi:.2}")
                };
                println!(
                    "{tasks:>2} in flight, {transport}: switchboard-client {:>8.0} calls/s {:>6.2} us CPU/call (server busy {:.0}%), \
                     jsonrpsee {:>8.0} calls/s {:>6.2} us CPU/call ({:.0}%): calls/s {:.2}x [{}], CPU/call {:.2}x fewer [{}]",
                    rate(a),
                    cpu(a),
                    busy(a),
                    rate(b),
                    cpu(b),
                    busy(b),
                    rate(a) / rate(b),
                    range(&rate_ratios),
                    cpu(b) / cpu(a),
                    range(&cpu_ratios),
                );
            }
        }
    });
}
