// Summarise an attached CSV (first row: header) into a Markdown report:
// row count, and for every numeric column its min, max, mean and sum.
import type { Jig } from "../jig"; // the Flow API jig ships (../jig.d.ts)

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const cells: string[] = [];
    let cur = "", quoted = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (quoted) {
        if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; }
        else if (c === '"') quoted = false;
        else cur += c;
      } else if (c === '"') quoted = true;
      else if (c === ",") { cells.push(cur); cur = ""; }
      else cur += c;
    }
    cells.push(cur);
    rows.push(cells);
  }
  return rows;
}

export default function (jig: Jig) {
  const [header, ...rows] = parseCsv(jig.read("data").toString("utf8"));
  if (!header) throw new Error("the CSV is empty");
  const lines = [`# Report`, ``, `${rows.length} rows, ${header.length} columns.`, ``,
    `| column | numeric | min | max | mean | sum |`, `| --- | --- | --- | --- | --- | --- |`];
  header.forEach((name, col) => {
    const values = rows.map((r) => r[col]).filter((v) => v !== undefined && v.trim() !== "");
    const nums = values.map(Number);
    if (values.length > 0 && nums.every((n) => Number.isFinite(n))) {
      const sum = nums.reduce((a, b) => a + b, 0);
      lines.push(`| ${name} | yes | ${Math.min(...nums)} | ${Math.max(...nums)} | ${(sum / nums.length).toFixed(2)} | ${sum} |`);
    } else {
      lines.push(`| ${name} | no | | | | |`);
    }
  });
  jig.write("report.md", lines.join("\n") + "\n");
  jig.log(`summarised ${rows.length} rows`);
}
