// Test Flow for Bindings (tests/flow/bindings.sh): every Flow of the test
// project is this file; what each does comes from its "plan" input (JSON,
// passed down every level through the read maps), keyed by the Flow's name:
//   {"calls": [[b, ...], ...]  groups of bindings, each group at once
//                              (b: a name, or [name, {child: caller}] inputs)
//    "write": {path: text}      outputs of its own
//    "command": true | {sleep: ms, probe?: true, unreviewed?: route, mark?: text}
//                               one Project Command (route "run"); probe:
//                               it exits 7 unless its environment is exactly
//                               HOME, LANG, NO_COLOR, TMPDIR and it sees no
//                               /flow, /input, /output, /stage; unreviewed:
//                               then also calls that route (result.refused);
//                               mark: a comment line of that text in its file
//    "sleep": ms, "spin": ms, "crash": true, "fail": true, "hog": true
//    "delay": ms                before the probes
//    "probe": [path, ...]       tries to read each ("write:PATH": to write it)
//    "log": text,
//    "inside": true,            what it reads of itself (inside.js) as result.inside
//    "acl": path,               a POSIX ACL (a named user) on that output, at the end
//    "fill": {path: bytes},     outputs of that many bytes ("F")
//    "hunt": text}              while its first group of calls is pending,
//                               every 100 ms: every way a hostile caller
//                               could read an import stage (issue 33, R-S05):
//                               result.hunt {rounds, found: [where text x 64
//                               was read], stages: [any "stage"
//                               seen], mounts: /proc/self/mountinfo lines
//                               for /output and /input}
// It writes result.json: {name, calls: [{binding, ok, outcome, error, started,
// outputs}], probes: {path: "read"|"denied"|"wrote"}, command}.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { inside } from "./inside.js";

export default async function (jig) {
  const name = JSON.parse(readFileSync("/flow/flow.json", "utf8")).name;
  const plan = JSON.parse(jig.read("plan").toString())[name] ?? {};
  const result = { name, calls: [], probes: {}, inputs: jig.inputs() };
  if (plan.inside) result.inside = inside();
  if (plan.log) jig.log(plan.log);
  for (const [path, text] of Object.entries(plan.write ?? {})) jig.write(path, text);
  if (plan.delay) await Bun.sleep(plan.delay);
  for (const p of plan.probe ?? []) {
    try {
      if (p.startsWith("write:")) { writeFileSync(p.slice(6), "x"); result.probes[p] = "wrote"; continue; }
      try { readdirSync(p); } catch { readFileSync(p); }
      result.probes[p] = "read";
    } catch (e) { result.probes[p] = "denied"; }
  }
  if (plan.command) {
    const wait = plan.command.sleep ? `await Bun.sleep(${Number(plan.command.sleep)});` : "";
    const probe = plan.command.probe ? `const { existsSync } = require("node:fs");
      const ok = JSON.stringify(Object.keys(process.env).sort()) === '["HOME","LANG","NO_COLOR","TMPDIR"]' &&
        !["/flow", "/input", "/output", "/stage"].some((p) => existsSync(p));
      if (!ok) process.exit(7);` : "";
    const mark = plan.command.mark ? `// ${String(plan.command.mark).replace(/\n/g, " ")}\n` : "";
    const r = await jig.command("run", { files: { "m.js": mark + wait + probe + "console.log('cmd-' + 6 * 7)" }, entry: "m.js" });
    result.command = r.stdout.trim();
    if (plan.command.unreviewed)
      try { await jig.command(plan.command.unreviewed, { files: { "m.js": "" }, entry: "m.js" }); result.refused = "no"; }
      catch (e) { result.refused = String(e.message); }
  }
  for (const [path, n] of Object.entries(plan.fill ?? {})) jig.write(path, Buffer.alloc(n, "F"));
  let hunting = !!plan.hunt;
  for (const group of plan.calls ?? []) {
    // The hunter is a thread of its own: this one blocks on Run/0 while a
    // call is pending.
    let hunter: any, flag: any, report: any;
    if (hunting) {
      flag = new Int32Array(new SharedArrayBuffer(4));
      hunter = new Worker(new URL("./hunt.js", import.meta.url), { workerData: { marker: String(plan.hunt).repeat(64), flag } });
      const ready = new Promise((res) => hunter.once("message", res));
      report = ready.then(() => new Promise((res) => hunter.once("message", res)));
      await ready;
    }
    // An element is a binding's name, or [name, inputs] (per-call inputs).
    const settled = await Promise.allSettled(group.map((b) => Array.isArray(b) ? jig.call(b[0], { inputs: b[1] }) : jig.call(b)));
    if (hunting) {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      result.hunt = await report;
      await hunter.terminate();
      hunting = false;
    }
    settled.forEach((s, i) => result.calls.push(s.status === "fulfilled"
      ? { binding: [group[i]].flat()[0], ok: s.value.ok, outcome: s.value.outcome, error: s.value.error, started: s.value.started,
          outputs: s.value.outputs }
      : { binding: [group[i]].flat()[0], ok: false, outcome: "rejected", error: String(s.reason.message) }));
  }
  if (plan.sleep) await Bun.sleep(plan.sleep);
  if (plan.spin) { const end = Date.now() + plan.spin; while (Date.now() < end); }
  if (plan.hog) { const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1)); }
  if (plan.crash) process.kill(process.pid, "SIGSEGV");
  jig.write("result.json", JSON.stringify(result));
  if (plan.acl) await acl("/output/" + plan.acl);
  if (plan.fail) throw new Error("asked to fail");
}

// setxattr(path, "system.posix_acl_access"): user_obj rw, user <own uid> r,
// group_obj r, mask r, other r (version 2), through libc (bun:ffi).
async function acl(path) {
  const { dlopen, ptr } = await import("bun:ffi");
  const l = dlopen("libc.so.6", { setxattr: { args: ["ptr", "ptr", "ptr", "u64", "i32"], returns: "i32" } });
  const v = Buffer.alloc(44);
  v.writeUInt32LE(2, 0);
  [[1, 6, 0xffffffff], [2, 4, process.getuid()], [4, 4, 0xffffffff], [0x10, 4, 0xffffffff], [0x20, 4, 0xffffffff]]
    .forEach(([tag, perm, id], i) => { v.writeUInt16LE(tag, 4 + i * 8); v.writeUInt16LE(perm, 6 + i * 8); v.writeUInt32LE(id, 8 + i * 8); });
  if (l.symbols.setxattr(ptr(Buffer.from(path + "\0")), ptr(Buffer.from("system.posix_acl_access\0")), ptr(v), v.length, 0) !== 0)
    throw new Error("setxattr failed");
}
