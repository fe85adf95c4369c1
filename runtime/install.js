// jig's dependency installer (issue 16; docs/dependencies.md): trusted
// runtime support from the signed snapshot, run by the pinned Bun inside
// the installer scope during jig review only, started by
// jig-prepare-worker once it has fetched and inspected every tarball.
//
// stdin: {"format": "jig-install-request/1", "tarballs": {PATH: FILE}}
//        (the registry paths Bun may ask for, each an inspected tarball)
// /src:  the captured package.json, bun.lock and declared patch files, and
//        nothing else of the project (read-only)
// /work: where the installation is prepared; jig takes node_modules from
//        it after the scope is fenced, and validates every entry
// stdout: {"exit": N, "stderr": tail, "unexpected": [paths]}
//
// The registry Bun installs from is this process, on loopback, serving
// those files and nothing else. Bun installs exactly the lock
// (--frozen-lockfile) and runs no package script (--ignore-scripts);
// files are copied, never hard-linked, and node_modules/.bin links are
// removed (a Run never executes them).
import { cpSync, lstatSync, readdirSync, rmSync } from "node:fs";

const req = JSON.parse(await Bun.stdin.text());
// Bun's install gets the scope's environment (the catalog's installer-work
// fragment, as the Plan's digest covers it) and only the registry of this
// call added (issue 32).
const env = (registry) => ({ ...process.env, NPM_CONFIG_REGISTRY: registry, BUN_CONFIG_REGISTRY: registry });
// Resolution (jig review --allow-resolution-network): Bun writes
// /work/bun.lock from the operator's registry, installing nothing and
// running no script; jig checks that lock like a supplied one.
if (req.format === "jig-install-request/1" && req.mode === "resolve" && typeof req.registry === "string") {
  cpSync("/src", "/work", { recursive: true });
  const p = Bun.spawn(
    [process.execPath, "install", "--lockfile-only", "--ignore-scripts", "--no-progress", "--no-summary"],
    { cwd: "/work", env: env(req.registry), stdin: "ignore", stdout: "ignore", stderr: "pipe" },
  );
  const err = await new Response(p.stderr).text();
  const exit = await p.exited;
  process.stdout.write(JSON.stringify({ exit: exit ?? -1, stderr: err.slice(-4096), unexpected: [] }) + "\n");
  process.exit(0);
}
if (req.format !== "jig-install-request/1" || typeof req.tarballs !== "object" || req.tarballs === null) {
  throw new Error("jig install: malformed request");
}
const tarballs = new Map(Object.entries(req.tarballs));
const unexpected = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(r) {
    const path = new URL(r.url).pathname;
    const file = r.method === "GET" ? tarballs.get(path) : undefined;
    if (file === undefined) {
      if (unexpected.length < 16) unexpected.push(r.method + " " + path.slice(0, 200));
      return new Response("not in the lock", { status: 404 });
    }
    return new Response(Bun.file(file), { headers: { "content-type": "application/octet-stream" } });
  },
});
const registry = `http://127.0.0.1:${server.port}/`;
cpSync("/src", "/work", { recursive: true });
const p = Bun.spawn(
  [process.execPath, "install", "--frozen-lockfile", "--ignore-scripts", "--production", "--backend=copyfile",
   "--no-progress", "--no-save", "--no-summary"],
  {
    cwd: "/work",
    env: env(registry),
    stdin: "ignore", stdout: "ignore", stderr: "pipe",
  },
);
const err = await new Response(p.stderr).text();
const exit = await p.exited;
server.stop(true);
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
process.stdout.write(JSON.stringify({ exit: exit ?? -1, stderr: err.slice(-4096), unexpected }) + "\n");
