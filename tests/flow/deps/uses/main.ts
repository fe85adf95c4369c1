// Test Flow for npm dependencies (issue 16): imports what its bun.lock pins.
import { parse } from "csv-parse/sync";
import leftPad from "left-pad";

export default async function (jig) {
  const rows = parse("a,b\n1,2\n");
  jig.write("out.txt", leftPad(JSON.stringify(rows), 20));
}
