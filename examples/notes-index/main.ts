// Turn attached Markdown notes (one file; notes start with "# Title") into a
// JSON index: title, tags (#words), word count and the first line of text.
import type { Jig } from "../jig"; // the Flow API jig ships (../jig.d.ts)

export default function (jig: Jig) {
  const text = jig.read("notes").toString("utf8");
  const notes: { title: string; tags: string[]; words: number; summary: string }[] = [];
  for (const block of text.split(/^# /m).slice(1)) {
    const [title, ...body] = block.split("\n");
    const content = body.join("\n").trim();
    const tags = [...new Set([...content.matchAll(/(?:^|\s)#([A-Za-z][\w-]*)/g)].map((m) => m[1].toLowerCase()))].sort();
    notes.push({
      title: title.trim(),
      tags,
      words: content.split(/\s+/).filter(Boolean).length,
      summary: (content.split("\n").find((l) => l.trim() !== "") ?? "").slice(0, 120),
    });
  }
  jig.write("index.json", JSON.stringify({ notes, count: notes.length }, null, 2) + "\n");
  jig.log(`indexed ${notes.length} notes`);
}
