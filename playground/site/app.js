// The playground page: the message builder, the error-code explorer and the batch
// example, answered by the switchboard core compiled to WebAssembly (respond,
// inspect), or by the server this page came from (POST / on the same origin).
import init, { respond, inspect } from "./switchboard_playground.js";

const $ = (id) => document.getElementById(id);
const utf8 = new TextEncoder();
const text = new TextDecoder("utf-8"); // not fatal: a response is shown whatever it holds

// The editor's text as bytes: UTF-8, or with `\xNN` read as one raw byte each
// (the way to send invalid UTF-8, which a text field cannot hold).
function bytesOf(s) {
  if (!$("raw-bytes").checked) return utf8.encode(s);
  const parts = [];
  let last = 0;
  for (const m of s.matchAll(/\\x([0-9a-fA-F]{2})/g)) {
    parts.push(...utf8.encode(s.slice(last, m.index)), parseInt(m[1], 16));
    last = m.index + m[0].length;
  }
  const tail = utf8.encode(s.slice(last));
  const out = new Uint8Array(parts.length + tail.length);
  out.set(parts);
  out.set(tail, parts.length);
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
  const body = respond(bytes) ?? null;
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
    response.textContent = `failed: ${e}`;
    response.classList.add("err");
  }
}

async function sendEditor() {
  const bytes = $("file").files.length ? null : bytesOf($("editor").value);
  const input = bytes ?? new Uint8Array(await $("file").files[0].arrayBuffer());
  $("inspect").textContent = inspect(input);
  await run(input, { response: $("response"), status: $("status"), where: $("where") });
  document.body.dataset.sent = String(Number(document.body.dataset.sent ?? 0) + 1);
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
