// The root of tests/flow/children (issue 46, decision 272): calls its child
// and reads what the child wrote through the typed result of jig.call
// (CallResult.read), not through node:fs: this file is type-checked with
// the shipped jig.d.ts (init.child_outputs_typecheck) and run in the VM
// (binding.child_outputs_read).
import type { CallResult, Jig } from "../jig";

interface Counts {
  words: number;
  lines: number;
}

export default async function (jig: Jig) {
  const r: CallResult = await jig.call("count");
  if (!r.ok) throw new Error(`count ${r.outcome}: ${r.error ?? ""}`);
  const counts: Counts = JSON.parse(r.read("counts.json").toString("utf8"));
  let other: string;
  try {
    r.read("summary.md");
    other = "read";
  } catch (e) {
    other = (e as Error).message;
  }
  jig.write("summary.md", `imported: ${r.outputs.join(", ")}\nwords: ${counts.words}\nlines: ${counts.lines}\nother: ${other}\n`);
}
