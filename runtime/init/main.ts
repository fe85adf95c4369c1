// A first Flow (made by `jig init`): counts the lines and words of the
// attached text and writes summary.md. The types come from ../jig.d.ts,
// the Flow API jig ships; flow.json says what the Flow may read ("inputs")
// and publish ("outputs"). `jig review` admits the project, then
// `jig run NAME --input text=NAME/sample.txt --output OUT` runs it.
import type { Jig } from "../jig";

export default function (jig: Jig) {
  const text = jig.read("text").toString("utf8");
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const words = text.split(/\s+/).filter((w) => w !== "");
  const counts = new Map<string, number>();
  for (const w of words) {
    const k = w.toLowerCase().replace(/[^\p{L}\p{N}'-]/gu, "");
    if (k) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5);
  jig.write("summary.md", [
    "# Summary", "",
    `${lines.length} lines, ${words.length} words.`, "",
    "Most frequent words:", "",
    ...top.map(([w, n]) => `- ${w}: ${n}`), "",
  ].join("\n"));
  jig.log(`summarised ${words.length} words`);
}
