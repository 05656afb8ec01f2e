// Runs a wasm32-wasip1 program (a `cargo test` binary) under node's built-in
// WASI: the runner of .ci/run's wasm steps, no wasm runtime to download.
//
//   CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C target-feature=+simd128" \
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/.ci/wasi-node.mjs" \
//     cargo test -p switchboard-core --lib --target wasm32-wasip1 [-- FILTER]
//
// (An absolute path: cargo runs a test binary in its package's directory.) The
// program sees its arguments and environment, and the current directory as `.`
// (read-write). Exits with the program's exit code (101 for failed tests; a
// panic outside the harness aborts, a trap, and node exits 1).
import { readFile } from "node:fs/promises";
import process, { argv, env, exit } from "node:process";

// Node 20 calls WASI experimental on every run: not this script's news.
process.removeAllListeners("warning");
const { WASI } = await import("node:wasi");

const [file, ...args] = argv.slice(2);
if (!file) {
    console.error("usage: node .ci/wasi-node.mjs PROGRAM.wasm [ARGS...]");
    exit(2);
}
const wasi = new WASI({
    version: "preview1",
    args: [file, ...args],
    env,
    preopens: { ".": "." },
    returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
exit(wasi.start(instance) ?? 0);
