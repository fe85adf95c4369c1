// Ask a local service for its health over the one reviewed HTTP route
// ("health" in flow.json) and write a short status report. The Flow itself
// has no network: jig's HTTP worker makes exactly the reviewed request.
import type { Jig } from "../jig"; // the Flow API jig ships (../jig.d.ts)

export default async function (jig: Jig) {
  let lines: string[];
  try {
    const r = await jig.http("health");
    let detail = r.text().slice(0, 2000);
    try { detail = "```json\n" + JSON.stringify(JSON.parse(detail), null, 2) + "\n```"; } catch {}
    lines = [`# Service check`, ``, `GET http://127.0.0.1:8080/health answered **${r.status}** in ${r.timing.total_ms} ms` +
      ` (${r.headers["content-type"] ?? "no content type"}).`, ``, detail];
  } catch (e) {
    lines = [`# Service check`, ``, `The request did not complete: ${(e as Error).message}`];
  }
  jig.log(lines[2]);
  jig.write("status.md", lines.join("\n") + "\n");
}
