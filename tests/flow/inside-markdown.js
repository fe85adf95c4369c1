// Test snapshots only (issue 32; markdown_run.scope_is_the_plan): in place
// of runtime/markdown.js, the Markdown Flow's process writes what it reads
// of itself (tests/flow/inside.js) as the recipe's declared output,
// through boot.js's end of a Run.
import { writeFileSync } from "node:fs";
import { finish } from "./boot.js";
import { inside } from "./inside.js";

const report = inside();
await finish(async () => { writeFileSync("/output/actions.md", JSON.stringify(report)); });
