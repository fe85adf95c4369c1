// Run Checkpoint for jig's tests (issue 18): the attached "mode" says what
// to do. "twice-then-sleep": two accepted saves, an unfinished output, then
// sleeps (the test cancels or kills). "limits": every cap at and over it,
// reported in result.json. "once-then-fail": one save, then an error.
// "crash": one save, then SIGSEGV. "sleep": sleeps (for --timeout).
// "raw-overlap": bypasses the SDK: three saves written to Run/0 (descriptor
// 3) in one write, their three replies read raw, then one save through the
// SDK; "raw-overlap-then-fail": the raw part, then an error.
import { readSync, writeSync } from "node:fs";

type Jig = any;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function twice(jig: Jig) {
  await jig.checkpoint({ files: { "notes/a.txt": "one\n" }, state: { step: 1 } });
  const s = await jig.checkpoint({ files: { "notes/a.txt": "two\n", "b.md": "# é\n" }, state: { step: 2, done: ["x"] } });
  jig.log(`saved ${s.save} ${s.sha256}`);
  jig.write("result.json", JSON.stringify({ unfinished: true }) + "\n");
}

async function limits(jig: Jig) {
  const out: Record<string, unknown> = {};
  const attempt = async (what: string, arg: unknown) => {
    try { const r = await jig.checkpoint(arg); out[what] = { ok: true, save: r.save, bytes: r.bytes }; }
    catch (e) { out[what] = { ok: false, error: String((e as Error).message) }; }
  };
  const files = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f/${i}.txt`, "x"]));
  await attempt("files_at_cap", { files: files(64) });
  await attempt("files_over_cap", { files: files(65) });
  await attempt("text_at_cap", { files: { "big.txt": "t".repeat(1 << 20) } });
  await attempt("text_over_cap", { files: { "big.txt": "t".repeat((1 << 20) + 1) } });
  // {"files":{},"state":"..."} is 23 bytes around the string.
  await attempt("size_at_cap", { state: "s".repeat((2 << 20) - 23) });
  await attempt("size_over_cap", { state: "s".repeat((2 << 20) - 22) });
  await attempt("bad_path", { files: { "../x": "y" } });
  await attempt("not_text", { files: { "a": 1 } });
  // One in flight: the SDK sends a save and waits for its reply before it
  // returns, so two saves started together are taken one after the other.
  const [a, b] = await Promise.all([jig.checkpoint({ state: "a" }), jig.checkpoint({ state: "b" })]);
  out.in_flight = { first: a.save, second: b.save };
  let n = 10;
  while (n < 15) { await jig.checkpoint({ state: n }); n++; }
  await attempt("save_16", { state: 16 }); // the 16th request
  await attempt("save_17", { state: 17 });
  jig.write("result.json", JSON.stringify(out) + "\n");
}

function rawOverlap(): unknown[] {
  const line = (n: number) => JSON.stringify({ op: "checkpoint", state: { raw: n } }) + "\n";
  writeSync(3, line(1) + line(2) + line(3));
  const buf = Buffer.alloc(1 << 16);
  let got = "";
  while (got.split("\n").length <= 3) {
    const n = readSync(3, buf, 0, buf.length, null);
    if (n === 0) throw new Error("Run/0 closed");
    got += buf.subarray(0, n).toString("utf8");
  }
  return got.trim().split("\n").map((l) => JSON.parse(l));
}

export default async function (jig: Jig) {
  const mode = jig.read("mode").toString().trim();
  if (mode === "twice-then-sleep") { await twice(jig); await sleep(60000); }
  else if (mode === "twice-then-exit") { await twice(jig); }
  else if (mode === "once-then-fail") { await jig.checkpoint({ state: { step: 1 } }); throw new Error("failing on purpose"); }
  else if (mode === "limits") await limits(jig);
  else if (mode === "crash") { await jig.checkpoint({ state: 1 }); process.kill(process.pid, "SIGSEGV"); await sleep(5000); }
  else if (mode === "sleep") await sleep(60000);
  else if (mode === "raw-overlap") {
    const replies = rawOverlap();
    const after = await jig.checkpoint({ state: { after: true } });
    jig.write("result.json", JSON.stringify({ replies, after: after.save }) + "\n");
  } else if (mode === "raw-overlap-then-fail") { rawOverlap(); throw new Error("failing on purpose"); }
  else throw new Error(`unknown mode ${mode}`);
}
