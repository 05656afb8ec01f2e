// Runs a wasm32-wasip1 program (a `cargo test` binary) under node's built-in
// WASI: the runner of .ci/run's wasm steps, no wasm runtime to download.
//
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node .ci/wasi-node.mjs" \
//     cargo test -p switchboard-core --lib --target wasm32-wasip1 [-- FILTER]
//
// The program sees its arguments and environment, and the current directory as
// `.` (read-write). Exits with the program's exit code.
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
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance) ?? 0);
