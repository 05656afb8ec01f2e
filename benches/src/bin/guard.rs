//! The regression guard's harness (`benches/guard.sh`): switchboard alone on one
//! workload, `N` times, exactly as `count switchboard <workload> <N>` runs it (the
//! same library functions), but buildable without the `peers` feature, so that the
//! guard's release build compiles nothing that switchboard itself does not need.
//!
//! ```text
//! guard <workload> <N>   # FILE.json: request to response; parse:FILE.json: classify only
//!                        # (validate:FILE.json: validate only)
//! guard backend          # the SIMD kernel switchboard picked on this CPU
//! ```
//!
//! Exit codes: 0 done, 1 a wrong answer, 2 usage, 3 switchboard cannot run it.

use std::process::ExitCode;

use switchboard_benches::dispatch::{self, check_and_run, rpc_workload};
use switchboard_benches::{Switchboard, check_and_run_stack, corpus, corpus_workload};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("backend") {
        println!("{}", switchboard::_benchable::simd_backend());
        return ExitCode::SUCCESS;
    }
    let [name, n] = args.as_slice() else {
        eprintln!("usage: guard <workload> <N> | backend");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<u64>() else {
        eprintln!("N must be a number");
        return ExitCode::from(2);
    };
    let result = if corpus::is_classify_name(name) {
        corpus_workload(name).and_then(|w| check_and_run_stack::<Switchboard>(&w, n))
    } else {
        match rpc_workload(name) {
            Some(w) => check_and_run::<dispatch::Switchboard>(&w, n),
            None => Err(format!("{name}: no such workload")),
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("switchboard gave a wrong answer on {name}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("n/a: {e}");
            ExitCode::from(3)
        }
    }
}
