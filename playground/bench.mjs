// Rough timings of the playground's wasm under node: respond() per message for a
// few corpus messages (benches/corpus/), run N times inside the wasm (respond_n:
// no copy into JavaScript per call), best of 5 runs after a second of warm-up (V8
// tiers the wasm up from its baseline compiler gradually: the first runs are several
// times slower). No assertions: a measurement to read.
//
//   node playground/bench.mjs [SITE_DIR]     (default target/playground, after build.sh)
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const site = process.argv[2] ?? "target/playground";
const { default: init, respond_n } = await import(resolve(site, "switchboard_playground.js"));
await init({ module_or_path: readFileSync(join(site, "switchboard_playground_bg.wasm")) });

const names = [
  "subtract_positional.json",
  "subtract_named.json",
  "eth_getBalance.json",
  "notification.json",
  "parse_error.json",
  "batch10_subtract.json",
  "batch100_eth_getBalance.json",
  "params_4k.json",
  "params_64k.json",
  "tokens_64k.json",
];
for (const name of names) {
  const msg = readFileSync(join("benches/corpus", name));
  const n = Math.max(200, Math.floor(20_000_000 / (msg.length * 20)));
  const warm = Date.now();
  while (Date.now() - warm < 1000) respond_n(msg, Math.ceil(n / 10));
  let ns = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    respond_n(msg, n);
    ns = Math.min(ns, Number(process.hrtime.bigint() - t) / n);
  }
  console.log(`${name.padEnd(30)} ${String(msg.length).padStart(7)} B  ${(ns / 1000).toFixed(3).padStart(9)} us/message`);
}
