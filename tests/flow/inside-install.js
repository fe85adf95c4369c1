// Test snapshots only (issue 32; prepare.installer_scope_is_the_plan): in
// place of runtime/install.js, the installer's Bun writes what it reads of
// itself (tests/flow/inside.js) where jig takes the prepared tree from, and
// reports a clean install.
import { mkdirSync, writeFileSync } from "node:fs";
import { inside } from "./inside.js";

await Bun.stdin.text();
mkdirSync("/work/node_modules/jig-inside", { recursive: true });
writeFileSync("/work/node_modules/jig-inside/report.json", JSON.stringify(inside()));
process.stdout.write(JSON.stringify({ exit: 0, stderr: "", unexpected: [] }) + "\n");
