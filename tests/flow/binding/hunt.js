// The hostile caller's hunter (tests/flow/binding/node.ts "hunt", issue
// 33, R-S05): a thread that, until told to stop, tries every 100 ms every
// way a caller could read an import stage before its import.
import { readFileSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

// One round of a hostile caller's search for an import stage: the marker
// read anywhere, any "stage" directory seen; the mount table's /output
// and /input lines (once).
function hunt(marker, h) {
  h.rounds++;
  const look = (where) => {
    try {
      const st = statSync(where);
      if (st.isDirectory()) {
        for (const n of readdirSync(where)) if (n === "stage" || /^\d+$/.test(n) && where.endsWith("stage")) h.stages.add(`${where}/${n}`);
      } else if (st.isFile() && st.size < (64 << 20) && readFileSync(where).includes(marker)) h.found.add(where);
    } catch {}
  };
  // Path walks from /output, up and around (the scope's whole tree but /proc, /sys, /dev).
  const walk = (dir, depth) => {
    if (depth > 6) return;
    let names = [];
    try { names = readdirSync(dir); } catch { return; }
    for (const n of names) {
      const p = dir + "/" + n, key = p.replace(/^\/output\/\.\./, "");
      if (["/proc", "/sys", "/dev", "/.jig", "/usr", "/lib", "/lib64"].includes(key) || p.includes("node_modules")) continue;
      look(p);
      try { if (statSync(p).isDirectory()) walk(p, depth + 1); } catch {}
    }
  };
  for (const p of ["/output/..", "/output/../..", "/output/.", "/output/stage", "/output/../stage", "/stage", "/output/pub/../stage"]) look(p);
  walk("/output/..", 0);
  // The mount table, and every process's descriptors, roots and cwds.
  try {
    const lines = readFileSync("/proc/self/mountinfo", "utf8").split("\n");
    if (!h.mounts.length) h.mounts = lines.filter((l) => / \/(output|input) /.test(l));
    for (const l of lines) { const f = l.split(" "); if (f[3] && f[3].includes("stage")) h.stages.add(`mountinfo ${f[3]} at ${f[4]}`); }
  } catch {}
  let pids = [];
  try { pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n)); } catch {}
  for (const pid of pids) {
    for (const k of ["root", "cwd"]) for (const p of ["stage", "output/stage", "output/../stage"]) look(`/proc/${pid}/${k}/${p}`);
    let fds = [];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch {}
    for (const fd of fds) {
      const p = `/proc/${pid}/fd/${fd}`;
      try { if (readlinkSync(p).includes("stage")) h.stages.add(`${p} -> ${readlinkSync(p)}`); } catch {}
      look(p);
      for (const q of ["stage", "../stage", "pub/../stage"]) look(`${p}/${q}`);
    }
  }
}

const { marker, flag } = workerData;
const h = { rounds: 0, found: new Set(), stages: new Set(), mounts: [] };
// The caller's own containment, unchanged by the output's mount: no
// capability, no_new_privs, a seccomp filter.
const status = {};
for (const l of readFileSync("/proc/self/status", "utf8").split("\n")) {
  const m = /^(Cap\w+|NoNewPrivs|Seccomp):\s*(\S+)/.exec(l);
  if (m) status[m[1]] = m[2];
}
hunt(marker, h);
parentPort.postMessage("ready");
while (Atomics.load(flag, 0) === 0) {
  hunt(marker, h);
  Atomics.wait(flag, 0, 0, 100);
}
parentPort.postMessage({ rounds: h.rounds, found: [...h.found], stages: [...h.stages], mounts: h.mounts, status });
