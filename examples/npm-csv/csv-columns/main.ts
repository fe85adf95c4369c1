// An example Flow with a real npm dependency (issue 16; docs/dependencies.md):
// csv-parse, prepared by jig review in the installer scope and read-only
// at /flow/node_modules during the Run. Summarises the attached CSV: for
// each column, how many rows have a value and how many distinct values.
import { parse } from "csv-parse/sync";
import type { Jig } from "../jig"; // the Flow API jig ships (../jig.d.ts)

export default function (jig: Jig) {
  const rows: Record<string, string>[] = parse(jig.read("data").toString("utf8"), { columns: true, skip_empty_lines: true, trim: true });
  const columns: Record<string, { filled: number; distinct: number }> = {};
  for (const name of rows.length ? Object.keys(rows[0]) : []) {
    const values = rows.map((r) => r[name]).filter((v) => v !== undefined && v !== "");
    columns[name] = { filled: values.length, distinct: new Set(values).size };
  }
  jig.write("columns.json", JSON.stringify({ rows: rows.length, columns }, null, 2) + "\n");
}
