// What a scope's process reads of itself (issue 32; tests/flow/scope_plan.sh
// compares it with the Plan): its argv and environment, its mounts and its
// open descriptors, as one JSON object. Run as a Project Command's entry,
// as the installer's install.js in a test snapshot, or imported by a Flow.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export function inside() {
  const fds = {};
  for (const fd of readdirSync("/proc/self/fd")) {
    try { fds[fd] = readlinkSync(`/proc/self/fd/${fd}`); } catch (e) { fds[fd] = "?"; }
  }
  const nul = (p) => readFileSync(p, "latin1").split("\0").filter((s, i, a) => s !== "" || i < a.length - 1);
  return { argv: nul("/proc/self/cmdline"), environ: nul("/proc/self/environ"),
           mountinfo: readFileSync("/proc/self/mountinfo", "latin1"), fds };
}

if (import.meta.main) process.stdout.write(JSON.stringify(inside()) + "\n");
