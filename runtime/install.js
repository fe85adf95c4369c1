// jig's dependency installer (issue 16; docs/dependencies.md): trusted
// runtime support from the signed snapshot, run by the pinned Bun as the
// first process of the installer scope during jig review only.
//
// stdin: {"format": "jig-install-request/1", "registry": URL}
// /src:  the captured package.json, bun.lock and declared patch files, and
//        nothing else of the project (read-only)
// /work: where the installation is prepared; jig takes node_modules from
//        it after the scope is fenced, and validates every entry
// stdout: {"format": "jig-install-result/1", "exit": N, "stderr": tail}
//
// Bun installs exactly the lock (--frozen-lockfile) and runs no package
// script (--ignore-scripts); files are copied, never hard-linked, and
// node_modules/.bin links are removed (a Run never executes them).
import { cpSync, lstatSync, readdirSync, rmSync } from "node:fs";

const req = JSON.parse(await Bun.stdin.text());
if (req.format !== "jig-install-request/1" || typeof req.registry !== "string") {
  throw new Error("jig install: malformed request");
}
cpSync("/src", "/work", { recursive: true });
const p = Bun.spawnSync(
  [process.execPath, "install", "--frozen-lockfile", "--ignore-scripts", "--production", "--backend=copyfile",
   "--no-progress", "--no-save"],
  {
    cwd: "/work",
    env: {
      HOME: "/scratch", TMPDIR: "/scratch", BUN_INSTALL_CACHE_DIR: "/scratch/cache", LANG: "C.UTF-8",
      NO_COLOR: "1", NPM_CONFIG_REGISTRY: req.registry, BUN_CONFIG_REGISTRY: req.registry,
      DO_NOT_TRACK: "1", BUN_DISABLE_TELEMETRY: "1",
    },
    stdin: "ignore", stdout: "pipe", stderr: "pipe",
  },
);
// Every .bin directory below node_modules: links to package executables.
function dropBins(dir, depth) {
  let names;
  try { names = readdirSync(dir); } catch { return; }
  for (const n of names) {
    const path = dir + "/" + n;
    if (n === ".bin") { rmSync(path, { recursive: true, force: true }); continue; }
    let st;
    try { st = lstatSync(path, { throwIfNoEntry: false }); } catch { continue; }
    if (st && st.isDirectory() && depth < 32) dropBins(path, depth + 1);
  }
}
dropBins("/work/node_modules", 0);
const err = new TextDecoder().decode(p.stderr ?? new Uint8Array());
process.stdout.write(JSON.stringify({
  format: "jig-install-result/1",
  exit: p.exitCode ?? -1,
  stderr: err.slice(-4096),
}) + "\n");
