// The playground page: the message builder, the error-code explorer and the batch
// example, answered by the switchboard core compiled to WebAssembly (respond,
// inspect), or by the server this page came from (POST / on the same origin).
import init, * as glue from "./switchboard_playground.js";

const $ = (id) => document.getElementById(id);
const utf8 = new TextEncoder();
const text = new TextDecoder("utf-8"); // not fatal: a response is shown whatever it holds

// The core in use: the wasm-bindgen glue's `respond` and `inspect`. After a trap
// (a panic is one in wasm; so is running out of memory) the instance may be left
// mid-call (a RefCell still borrowed, say), so the next call gets a fresh one:
// the glue imported again under another URL is a new module with its own
// instance (`init` of the same module would return the old one).
let core = glue;
let generation = 0;

async function freshCore() {
  generation += 1;
  const fresh = await import(`./switchboard_playground.js?instance=${generation}`);
  await fresh.default();
  core = fresh;
}

// `f()` on the core; an exception it throws (a trap) is rethrown after the core
// is replaced, so the page keeps answering.
async function guarded(f) {
  try {
    return f();
  } catch (e) {
    // (Should the fresh instance fail to load, the next call tries again.)
    if (e instanceof WebAssembly.RuntimeError) await freshCore().catch(() => {});
    throw e;
  }
}

// The editor's text as bytes: UTF-8, or with `\xNN` read as one raw byte each
// (the way to send invalid UTF-8, which a text field cannot hold). The pieces
// are copied into one array at the end (never spread into arguments: megabytes of
// text would exceed the engine's argument limit).
function bytesOf(s) {
  if (!$("raw-bytes").checked) return utf8.encode(s);
  const parts = [];
  let last = 0;
  for (const m of s.matchAll(/\\x([0-9a-fA-F]{2})/g)) {
    parts.push(utf8.encode(s.slice(last, m.index)), Uint8Array.of(parseInt(m[1], 16)));
    last = m.index + m[0].length;
  }
  parts.push(utf8.encode(s.slice(last)));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// One message, answered in the page or by the server: {where, status, body}.
// `body` is the response's bytes, or null when there is none.
async function answer(bytes) {
  if ($("to-server").checked) {
    const r = await fetch("/", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: bytes,
    });
    const body = new Uint8Array(await r.arrayBuffer());
    return { where: "server, POST /", status: `HTTP ${r.status}`, body: r.status === 204 ? null : body };
  }
  const t = performance.now();
  const body = (await guarded(() => core.respond(bytes))) ?? null;
  const ms = (performance.now() - t).toFixed(3);
  return { where: `in-page core, ${ms} ms`, status: "", body };
}

function show(pre, body) {
  if (body === null) {
    pre.textContent = "no response (notification)";
  } else {
    pre.textContent = text.decode(body);
  }
  pre.classList.toggle("none", body === null);
  pre.classList.remove("err");
}

async function run(bytes, { response, status, where }) {
  try {
    const a = await answer(bytes);
    show(response, a.body);
    if (status) status.textContent = a.status;
    if (where) where.textContent = `(${a.where})`;
  } catch (e) {
    failed(response, e);
    if (status) status.textContent = "";
  }
}

// An exception shown where the answer would be.
function failed(pre, e) {
  pre.textContent = `failed: ${e}`;
  pre.classList.remove("none");
  pre.classList.add("err");
}

// Sends the editor (or the chosen file); whatever fails on the way (reading the
// file, the bytes, the core) is shown, and `data-sent` counts the send anyway.
async function sendEditor() {
  const ui = { response: $("response"), status: $("status"), where: $("where") };
  try {
    const input = $("file").files.length
      ? new Uint8Array(await $("file").files[0].arrayBuffer())
      : bytesOf($("editor").value);
    try {
      $("inspect").textContent = await guarded(() => core.inspect(input));
      $("inspect").classList.remove("err");
    } catch (e) {
      failed($("inspect"), e);
    }
    await run(input, ui);
  } catch (e) {
    failed(ui.response, e);
    $("inspect").textContent = "";
  } finally {
    document.body.dataset.sent = String(Number(document.body.dataset.sent ?? 0) + 1);
  }
}

// The form writes a message into the editor; the editor is what is sent.
let methods = {};
function build() {
  const method = $("method").value;
  const mode = document.querySelector("input[name=params]:checked").value;
  const msg = { jsonrpc: "2.0", method };
  const params = mode === "none" ? null : methods[method]?.[mode];
  if (params != null) msg.params = params;
  if ($("with-id").checked) {
    const v = $("id-value").value.trim();
    msg.id = /^-?\d+$/.test(v) ? Number(v) : v;
  }
  $("editor").value = JSON.stringify(msg);
  $("file").value = "";
}

function errorCard(ex) {
  const card = document.createElement("div");
  card.className = "card";
  card.id = `err${ex.code}`;
  card.innerHTML = `<h3><span class="badge"></span> <span class="name"></span></h3><p></p>
    <pre class="request"></pre><button class="run">Run</button> <button class="edit">Open in the builder</button>
    <span class="status"></span><pre class="response"></pre>`;
  card.querySelector(".badge").textContent = ex.code;
  card.querySelector(".name").textContent = ex.name;
  card.querySelector("p").textContent = ex.note;
  card.querySelector(".request").textContent = ex.request;
  const ui = { response: card.querySelector(".response"), status: card.querySelector(".status") };
  card.querySelector(".run").onclick = () => run(utf8.encode(ex.request), ui);
  card.querySelector(".edit").onclick = () => openInBuilder(ex.request);
  return card;
}

function openInBuilder(request) {
  $("editor").value = request;
  $("raw-bytes").checked = false;
  $("file").value = "";
  $("editor").scrollIntoView({ behavior: "smooth" });
}

async function main() {
  await init();
  const examples = await (await fetch("examples.json")).json();
  methods = examples.methods;
  for (const name of Object.keys(methods)) $("method").add(new Option(name, name));
  for (const id of ["method", "params-positional", "params-named", "params-none", "with-id", "id-value"]) {
    $(id).addEventListener("input", build);
  }
  build();
  $("send").onclick = sendEditor;
  $("fill-big").onclick = () => {
    const line = "this is not JSON, just a megabyte of text. ";
    openInBuilder(line.repeat(Math.ceil((1 << 20) / line.length)).slice(0, 1 << 20));
  };
  $("fill-deep").onclick = () => openInBuilder("[".repeat(100000));
  $("fill-utf8").onclick = () => {
    openInBuilder('{"jsonrpc": "2.0", "method": "sub\\xfftract", "params": [42, 23], "id": 1}');
    $("raw-bytes").checked = true;
  };
  for (const ex of examples.errors) $("errors").append(errorCard(ex));
  const b = examples.batch;
  $("batch-note").textContent = b.note;
  $("batch-request").textContent = b.request;
  const ui = { response: $("batch-response"), status: $("batch-status") };
  $("batch-run").onclick = () => run(utf8.encode(b.request), ui);
  $("batch-edit").onclick = () => openInBuilder(b.request);
  $("core-state").textContent = "core loaded";
  document.body.dataset.ready = "true";
}

main().catch((e) => {
  $("core-state").textContent = `the core did not load: ${e}`;
  $("core-state").className = "err";
});
