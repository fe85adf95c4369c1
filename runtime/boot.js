// jig runtime support: what a Flow sees of jig (docs/flow-format.md).
// Fixed, installed in the signed snapshot, bound read-only at /.jig/runtime.
// The Flow talks to its coordinator only over Run/0: newline-delimited JSON
// on descriptor 3, each message at most 64 KiB.
import { closeSync, mkdirSync, readFileSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

const RUN0 = 3;
const MAX_MESSAGE = 65536;

function send(msg) {
  const line = JSON.stringify(msg) + "\n";
  if (Buffer.byteLength(line) > MAX_MESSAGE) throw new Error("jig: Run/0 message larger than 64 KiB");
  writeSync(RUN0, line);
}

function clean(path) {
  if (typeof path !== "string" || path === "" || path.startsWith("/") || path.split("/").some((c) => c === "" || c === "." || c === ".."))
    throw new Error(`jig: "${path}" is not a normalised relative path`);
  return path;
}

const jig = Object.freeze({
  /** Names of the attached inputs. */
  inputs() {
    try { return readdirSync("/input").sort(); } catch { return []; }
  },
  /** The bytes of one attached input (a Buffer); text with .toString(). */
  read(name) { return readFileSync("/input/" + clean(name)); },
  /** Writes one output file (declared in flow.json "outputs"). */
  write(path, data) {
    const p = "/output/" + clean(path);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, data);
  },
  /** A log line for the Run record. */
  log(...parts) { send({ op: "log", text: parts.map(String).join(" ").slice(0, 4096) }); },
});
globalThis.jig = jig;

const entry = process.argv[2];
try {
  const mod = await import("/flow/" + clean(entry));
  if (typeof mod.default === "function") await mod.default(jig);
  send({ op: "done" });
} catch (err) {
  send({ op: "error", text: String(err && err.stack || err).slice(0, 4096) });
  process.exitCode = 1;
}
closeSync(RUN0);
