// A hostile Flow for issue 31 (tests/flow/cases.sh case_run0_saturate*):
// every channel to the trusted side at once, bypassing the runtime's own
// cuts where it can. Its "plan" input: {"logs": N, "kid_logs": N}. Two
// Flows run it: "saturate" (with bindings) and "hoard" (with a checkpoint:
// review refuses both in one Flow); each does what its grants allow.
//   logs:        N well-formed log lines of ~1 MiB straight to Run/0 (fd 3)
//   http:        64 requests (the cap) naming a 900 KiB route: refused,
//                evidence over its cap
//   command:     16 calls (the cap) naming that route: refused
//   checkpoint:  16 accepted saves of 1 MiB of text, then 4 refused
//   call:        2 x 2 children (in flight together), each writing
//                kid_logs lines of ~1 MiB straight to its Run/0
import { readFileSync, writeSync } from "node:fs";

export default async function (jig: any) {
  const plan = JSON.parse(jig.read("plan").toString());
  const name = JSON.parse(readFileSync("/flow/flow.json", "utf8")).name;
  const n: Record<string, number> = { logs: 0, http: 0, command: 0, checkpoint: 0, calls: 0 };
  const line = JSON.stringify({ op: "log", text: "L".repeat((1 << 20) - 64) }) + "\n";
  for (let i = 0; i < plan.logs; i++) { writeSync(3, line); n.logs++; }
  const route = "r".repeat(900 << 10);
  for (let i = 0; i < 64; i++) { try { await jig.http(route); } catch {} n.http++; }
  for (let i = 0; i < 16; i++) { try { await jig.command(route, { files: { "m.js": "" }, entry: "m.js" }); } catch {} n.command++; }
  const text = "c".repeat(1 << 20);
  if (name === "hoard") for (let i = 0; i < 20; i++) { try { await jig.checkpoint({ files: { "a.txt": text }, state: i }); n.checkpoint++; } catch {} }
  if (name === "saturate") for (let g = 0; g < 2; g++) {
    const r = await Promise.allSettled([jig.call("kid"), jig.call("kid")]);
    n.calls += r.filter((s) => s.status === "fulfilled").length;
  }
  jig.write("result.json", JSON.stringify(n) + "\n");
}
