// jig runtime support: what a Flow sees of jig (docs/flow-format.md).
// Fixed, installed in the signed snapshot, bound read-only at /.jig/runtime.
// The Flow talks to its coordinator only over Run/0: newline-delimited JSON
// on descriptor 3, each message at most 1 MiB (each operation has its own
// caps within that).
import { closeSync, mkdirSync, readFileSync, readSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

const RUN0 = 3;
const MAX_MESSAGE = 1 << 20;
const MAX_CHECKPOINT_MESSAGE = (2 << 20) + 64; // a checkpoint's line (util/limits.h)
let checkpointInFlight = false;

function send(msg) {
  const line = JSON.stringify(msg) + "\n";
  if (Buffer.byteLength(line) > MAX_MESSAGE) throw new Error("jig: Run/0 message larger than 1 MiB");
  writeSync(RUN0, line);
}

// Bytes of a string (UTF-8) or a byte array, in base64 for Run/0.
function bytes64(v, what) {
  if (typeof v === "string") return Buffer.from(v, "utf8").toString("base64");
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
  throw new Error(`jig.command: ${what} must be a string or a Uint8Array`);
}

// A command's captured tree (R-K03) as plain data: bytes, never code.
function captureOf(c) {
  if (typeof c.refused === "string") return { captured: null, captureRefused: c.refused };
  const captured = {};
  for (const [path, f] of Object.entries(c))
    captured[path] = Object.freeze({ sha256: f.sha256, bytes: f.bytes, data: Buffer.from(f.base64, "base64") });
  return { captured: Object.freeze(captured), captureRefused: null };
}

// Replies (to http) are one line each; read exactly up to the newline.
let pending = Buffer.alloc(0);
function receive() {
  const chunks = [pending];
  let nl = pending.indexOf(10), total = pending.length;
  while (nl < 0) {
    const chunk = Buffer.alloc(1 << 20);
    const n = readSync(RUN0, chunk, 0, chunk.length, null);
    if (n === 0) throw new Error("jig: Run/0 closed by the coordinator");
    const at = chunk.subarray(0, n).indexOf(10);
    if (at >= 0) nl = total + at;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  pending = all.subarray(nl + 1);
  return JSON.parse(all.subarray(0, nl).toString("utf8"));
}

// A JSON value's text as the Flow's own JSON.stringify writes it (numbers
// a double cannot hold go through JSON.rawJSON).
function jsonText(v, what) {
  const t = JSON.stringify(v);
  if (typeof t !== "string") throw new Error(`${what} is not a JSON value`);
  return t;
}

function clean(path) {
  if (typeof path !== "string" || path === "" || path.startsWith("/") || path.split("/").some((c) => c === "" || c === "." || c === ".."))
    throw new Error(`jig: "${path}" is not a normalised relative path`);
  return path;
}

// Bindings: calls are answered in any order (two siblings run at once),
// matched by id. The pump blocks on Run/0 while a call is pending; a Flow
// with bindings has no effect routes, so nothing else is answered.
const calls = new Map();
let nextCall = 1, pumping = false;
function pump() {
  pumping = false;
  if (calls.size === 0) return;
  let r;
  try { r = receive(); } catch (err) {
    for (const { reject } of calls.values()) reject(err);
    calls.clear();
    return;
  }
  const c = r.op === "call" ? calls.get(r.id) : undefined;
  if (!c) throw new Error("jig: unexpected Run/0 reply");
  calls.delete(r.id);
  if (r.outcome === "refused") c.reject(new Error(`jig.call ${c.binding}: ${r.error}`));
  else {
    // jig has imported the write map's accepted files into this Flow's
    // /output (staged where this Flow cannot see, then renamed, never
    // replacing a file): outputs names them.
    // read(path) is the caller's typed way to what the child wrote
    // (decision 272): one of these paths only, as /output holds it now.
    const imported = Object.freeze(Object.keys(r.outputs || {}));
    const binding = c.binding;
    c.resolve(Object.freeze({
      ok: r.ok, outcome: r.outcome, error: r.error, started: r.started, outputs: imported,
      read(path) {
        if (!imported.includes(path))
          throw new Error(`jig.call ${binding}: "${path}" is not an output this call imported; it imported ${imported.length ? imported.join(", ") : "nothing"}`);
        return readFileSync("/output/" + clean(path));
      },
    }));
  }
  if (calls.size && !pumping) { pumping = true; setImmediate(pump); }
}

const jig = Object.freeze({
  /** Names of the attached inputs. */
  inputs() {
    try { return readdirSync("/input").sort(); } catch { return []; }
  },
  /** The bytes of one attached input (a Buffer); text with .toString(). */
  read(name) {
    const p = clean(name), top = p.split("/")[0];
    try { return readFileSync("/input/" + p); } catch (err) {
      if (err?.code !== "ENOENT") throw err;
      // No such input: say which ones the Flow has (flow.json "inputs").
      const have = jig.inputs();
      if (!have.includes(top))
        throw new Error(`jig.read("${p}"): the Flow declares no input "${top}"; its inputs: ${have.length ? have.join(", ") : "none"}`);
      throw new Error(`jig.read("${p}"): input "${top}" has no file ${p.slice(top.length + 1) || "here"}`);
    }
  },
  /** Writes one output file (declared in flow.json "outputs"). */
  write(path, data) {
    const p = "/output/" + clean(path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, data);
  },
  /**
   * One reviewed HTTP request: a route of flow.json "http". The method and
   * URL are the grant's (restating them is allowed, changing them is not);
   * body is a JSON value, sent as application/json: exactly the bytes
   * JSON.stringify(body) makes (JSON.rawJSON("12345678901234567") for a
   * number a double cannot hold), validated and never re-encoded. Resolves to
   * { status, headers, body (Buffer), text(), json(), timing }; the status is
   * evidence, not success. Rejects when jig refuses or the exchange fails.
   */
  async http(route, { method, url, body } = {}) {
    const msg = { op: "http", route };
    if (method !== undefined) msg.method = method;
    if (url !== undefined) msg.url = url;
    // The body travels as the bytes JSON.stringify makes of it, and the
    // service receives exactly those (jig validates, never re-encodes).
    if (body !== undefined) msg.body = jsonText(body, `jig.http ${route}: body`);
    send(msg);
    const r = receive();
    if (r.op !== "http") throw new Error("jig: unexpected Run/0 reply");
    if (!r.ok) throw new Error(`jig.http ${route}: ${r.error}`);
    const bytes = Buffer.from(r.body_base64, "base64");
    return Object.freeze({
      status: r.status,
      headers: Object.freeze({ ...r.headers }),
      body: bytes,
      redirectNotFollowed: r.redirect_not_followed,
      timing: Object.freeze({ connect_ms: r.connect_ms, total_ms: r.total_ms }),
      text() { return bytes.toString("utf8"); },
      json() { return JSON.parse(bytes.toString("utf8")); },
    });
  },
  /**
   * One Agent turn: a route of flow.json "agents" (a reviewed provider and
   * model). instructions (text), skills (texts) and input (text or JSON)
   * are the whole prompt: explicit data, no authority. Resolves to
   * { text, stopReason, usage: {prompt_bytes, answer_bytes}, timing };
   * rejects when jig refuses or the turn fails (deadline, caps, a crash).
   * On a route with retain_sessions, the result also has session (a
   * reference that resumes this conversation once, for 24 h) or
   * sessionError (why it was not retained); pass { session } to resume.
   */
  async agent(route, { instructions, skills, input, session } = {}) {
    const msg = { op: "agent", route };
    if (instructions !== undefined) msg.instructions = instructions;
    if (skills !== undefined) msg.skills = skills;
    if (input !== undefined) msg.input = typeof input === "string" ? input : jsonText(input, `jig.agent ${route}: input`);
    if (session !== undefined) msg.session = session;
    send(msg);
    const r = receive();
    if (r.op !== "agent") throw new Error("jig: unexpected Run/0 reply");
    if (!r.ok) throw new Error(`jig.agent ${route}: ${r.error}`);
    return Object.freeze({
      text: r.text,
      stopReason: r.stop_reason,
      usage: Object.freeze({ ...r.usage }),
      timing: Object.freeze({ ...r.timing }),
      ...(r.session !== undefined ? { session: r.session } : {}),
      ...(r.session_error !== undefined ? { sessionError: r.session_error } : {}),
    });
  },
  /**
   * One Project Command: a route of flow.json "commands". files maps
   * normalised relative paths to their text (strings, UTF-8, or
   * Uint8Arrays; <= 256 KiB in <= 64 files together); entry is one of them,
   * run with the installed Bun as /command/<entry> with args (<= 32
   * strings) and stdin (<= 16 KiB), in a scope of its own: no network, no
   * credentials, no Flow package, the route's attachment (if any)
   * read-only at /input/NAME. Resolves to { outcome ("exited", "signaled",
   * "timeout", "oom", or "killed": its scope was killed from outside while
   * it ran, with error saying how), exitCode, signal, stdout, stderr, stdoutBytes,
   * stderrBytes, stdoutTruncated, stderrTruncated, stdoutRaw, stderrRaw,
   * wallMs }: stdout and stderr are the first 64 KiB of each pipe decoded
   * as UTF-8 with replacement (U+FFFD for invalid bytes, also where the
   * cut splits a character), *Raw the same bytes exactly, *Bytes what was
   * written in all. Rejects when jig refuses (caps, no such route) or the
   * command could not be run. Output and exit status are the command's own
   * account: they do not prove what it ran. A route with "capture": true
   * also resolves captured: {path: {sha256, bytes, data (a Buffer)}}, the
   * files the command left under /capture, read by jig after the scope was
   * fenced (<= 64 files, <= 256 KiB), as data only: never imported or run;
   * or captured null and captureRefused, one line (a symlink, a special
   * file, over a cap).
   */
  async command(route, { files, entry, args, stdin } = {}) {
    const msg = { op: "command", route, entry };
    if (files === null || typeof files !== "object") throw new Error(`jig.command ${route}: files must be an object of path: text`);
    msg.files = {};
    for (const [path, text] of Object.entries(files)) msg.files[path] = bytes64(text, `file ${path}`);
    if (args !== undefined) msg.args = args;
    if (stdin !== undefined) msg.stdin = bytes64(stdin, "stdin");
    send(msg);
    const r = receive();
    if (r.op !== "command") throw new Error("jig: unexpected Run/0 reply");
    if (!r.ok) throw new Error(`jig.command ${route}: ${r.error}`);
    const out = Buffer.from(r.stdout_base64, "base64"), err = Buffer.from(r.stderr_base64, "base64");
    const utf8 = new TextDecoder("utf-8"); // not fatal: invalid bytes become U+FFFD
    return Object.freeze({
      outcome: r.outcome, exitCode: r.exit_code, signal: r.signal,
      stdout: utf8.decode(out), stderr: utf8.decode(err), stdoutRaw: out, stderrRaw: err,
      stdoutBytes: r.stdout_bytes, stderrBytes: r.stderr_bytes,
      stdoutTruncated: r.stdout_truncated, stderrTruncated: r.stderr_truncated, wallMs: r.wall_ms,
      ...(r.error === undefined ? {} : { error: r.error }),
      ...(r.capture === undefined ? {} : captureOf(r.capture)),
    });
  },
  /**
   * One reviewed child Flow: a binding of flow.json "bindings". The child
   * runs in its own scope with the read map's inputs while this Flow waits;
   * its deadline is the binding's, capped by the root's. Resolves to
   * { ok, outcome ("succeeded", "failed", "timeout", "cancelled", "killed":
   * its scope was killed from outside while it ran), error, started (whether
   * the child's Flow started at all), outputs, read(path) }: outputs are this Flow's output paths that the write map
   * filled from the child's accepted output (already copied to /output);
   * read(path) returns one of them (a Buffer) and throws for any other path.
   * Rejects when jig refuses the call before dispatch (no such binding,
   * the shape rules, the root budget).
   * options.inputs, if given: { child input: this Flow's input name }, each
   * pair one of the binding's reviewed read map; the child then gets
   * exactly these (whole, read-only) instead of the whole read map.
   */
  call(binding, options) {
    const id = nextCall++;
    const op = { op: "call", id, binding };
    if (options !== undefined) {
      if (options === null || typeof options !== "object" || Object.keys(options).some((k) => k !== "inputs"))
        return Promise.reject(new Error(`jig.call ${binding}: options are { inputs }`));
      if (options.inputs !== undefined) op.inputs = options.inputs;
    }
    send(op);
    return new Promise((resolve, reject) => {
      calls.set(id, { binding, resolve, reject });
      if (!pumping) { pumping = true; setImmediate(pump); }
    });
  },
  /**
   * Run Checkpoint (flow.json "checkpoint": true): saves { files, state }
   * (files: normalised relative paths to UTF-8 text, <= 64 files and
   * <= 1 MiB together; state: any JSON value; <= 2 MiB of canonical JSON in
   * all) with jig, outside the scope. Resolves to { save, bytes, sha256 }
   * once jig has accepted it; rejects when jig refuses (caps, more than 16
   * saves, one already in flight). If the Run does not complete, its packet
   * holds the last accepted one (checkpoint.json) and the record says
   * "interrupted"; output files are then never published.
   */
  async checkpoint({ files, state } = {}) {
    if (checkpointInFlight) throw new Error("jig.checkpoint: a save is already in flight");
    checkpointInFlight = true;
    try {
      const msg = { op: "checkpoint" };
      if (files !== undefined) msg.files = files;
      if (state !== undefined) msg.state = state;
      const line = JSON.stringify(msg) + "\n";
      if (Buffer.byteLength(line) > MAX_CHECKPOINT_MESSAGE) throw new Error("jig.checkpoint: larger than 2 MiB");
      writeSync(RUN0, line);
      const r = receive();
      if (r.op !== "checkpoint") throw new Error("jig: unexpected Run/0 reply");
      if (!r.ok) throw new Error(`jig.checkpoint: ${r.error}`);
      return Object.freeze({ save: r.save, bytes: r.bytes, sha256: r.sha256 });
    } finally {
      checkpointInFlight = false;
    }
  },
  /** A log line for the Run record. */
  log(...parts) { send({ op: "log", text: parts.map(String).join(" ").slice(0, 4096) }); },
});
globalThis.jig = jig;

// The end of a Run: done, or the error; Run/0 closed.
export async function finish(body) {
  try {
    await body();
    send({ op: "done" });
  } catch (err) {
    send({ op: "error", text: String(err && err.stack || err).slice(0, 4096) });
    process.exitCode = 1;
  }
  closeSync(RUN0);
}
export { jig, clean };

// Run as the entry (the "flow" kind): the Flow's module. The bundled
// Markdown interpreter (markdown.js) imports this file instead.
if (import.meta.main) {
  const entry = process.argv[2];
  await finish(async () => {
    const mod = await import("/flow/" + clean(entry));
    if (typeof mod.default === "function") await mod.default(jig);
  });
}
