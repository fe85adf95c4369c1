// A hostile Flow for issue 31 (tests/flow/cases.sh case_run0_saturate*,
// bench/caps.sh): every channel to the trusted side at once, past the
// runtime's own cuts. Three Flows run this file, each doing what its grants
// allow (review never grants a checkpoint or effects beside bindings):
//   "saturate"  plan.logs lines, then 2 x 2 calls of "kid" (two in flight)
//   "kid"       plan.kid_logs lines, then every effect below
//   "hoard"     plan.logs lines, every effect below, then 20 checkpoints
// lines:       well-formed ~1 MiB log messages straight to Run/0 (fd 3)
// effects:     64 HTTP requests (the cap) and 16 Project Commands (the cap)
//              naming a 16 KiB route: refused, their evidence over its cap
// checkpoints: 16 accepted saves of 1 MiB of text, then 4 refused
// It writes result.json: how many of each it sent (and calls fulfilled).
import { readFileSync, writeSync } from "node:fs";

export default async function (jig: any) {
  const plan = JSON.parse(jig.read("plan").toString());
  const name = JSON.parse(readFileSync("/flow/flow.json", "utf8")).name;
  const n: Record<string, number> = { logs: 0, http: 0, command: 0, checkpoint: 0, calls: 0 };
  const line = JSON.stringify({ op: "log", text: "L".repeat((1 << 20) - 64) }) + "\n";
  const lines = name === "kid" ? plan.kid_logs : plan.logs;
  for (let i = 0; i < lines; i++) { writeSync(3, line); n.logs++; }
  if (name !== "saturate") {
    const route = "r".repeat(16 << 10);
    for (let i = 0; i < 64; i++) { try { await jig.http(route); } catch {} n.http++; }
    for (let i = 0; i < 16; i++) { try { await jig.command(route, { files: { "m.js": "" }, entry: "m.js" }); } catch {} n.command++; }
  }
  if (name === "hoard") {
    const text = "c".repeat(1 << 20);
    for (let i = 0; i < 20; i++) { try { await jig.checkpoint({ files: { "a.txt": text }, state: i }); n.checkpoint++; } catch {} }
  }
  if (name === "saturate") for (let g = 0; g < 2; g++) {
    const r = await Promise.allSettled([jig.call("kid"), jig.call("kid")]);
    n.calls += r.filter((s) => s.status === "fulfilled").length;
  }
  jig.write("result.json", JSON.stringify(n) + "\n");
}
