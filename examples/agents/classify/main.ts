// Asks an Agent to classify the attached document, and writes its answer.
// The provider ("local-agent") is the operator's: see docs/agents.md for
// agents.json. The Agent sees only the prompt below: no file, no tool.
import type { Jig } from "../jig"; // the Flow API jig ships (../jig.d.ts)

export default async function (jig: Jig) {
  const doc = jig.read("document").toString("utf8");
  const r = await jig.agent("classifier", {
    instructions:
      "Classify the document in the input as exactly one of: invoice, contract, report, letter, other. " +
      "Answer with the category on the first line and one sentence of reason on the second.",
    input: doc.slice(0, 30000),
  });
  const [category = "", reason = ""] = r.text.trim().split("\n");
  jig.write("classification.md",
    `# Classification\n\n- category: ${category.trim()}\n- reason: ${reason.trim()}\n- stop reason: ${r.stopReason}\n`);
}
