// The child of tests/flow/children (issue 46): counts the words of its
// input and writes counts.json, which the binding's write map hands to its
// caller.
import type { Jig } from "../jig";

export default function (jig: Jig) {
  const words = jig.read("text").toString("utf8").split(/\s+/).filter((w) => w !== "");
  jig.write("counts.json", JSON.stringify({ words: words.length, lines: jig.read("text").toString("utf8").split("\n").length - 1 }));
}
