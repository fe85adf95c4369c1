// Test Flow for the Agent effect: runs the steps of its "steps" input (JSON)
// and reports each outcome in result.json. Steps:
//   {"do": "agent", "route", "instructions"?, "skills"?, "input"?, "session"?}  jig.agent
//       ("session": a reference, or "@N": the one step N returned)
//   {"do": "http", "route", "body"}  jig.http
//   {"do": "fetch", "url"}          its own socket (must fail: offline scope)
//   {"do": "dump"}                  environment, argv, /proc/self into dump.txt
import { readFileSync } from "node:fs";

export default async function (jig) {
  const steps = JSON.parse(jig.read("steps").toString());
  const results = [];
  for (const s of steps) {
    try {
      if (s.do === "agent") {
        const opts = {};
        for (const k of ["instructions", "skills", "input", "session"]) if (k in s) opts[k] = s[k];
        if (typeof s.session === "string" && s.session.startsWith("@")) opts.session = results[Number(s.session.slice(1))].session;
        const r = await jig.agent(s.route, opts);
        results.push({ ok: true, text: r.text, stopReason: r.stopReason, usage: r.usage, timing: r.timing,
                       session: r.session, sessionError: r.sessionError });
      } else if (s.do === "http") {
        const r = await jig.http(s.route, { body: s.body });
        results.push({ ok: true, status: r.status, text: r.text() });
      } else if (s.do === "fetch") {
        const r = await fetch(s.url);
        results.push({ ok: true, status: r.status });
      } else if (s.do === "dump") {
        let d = "env " + JSON.stringify(process.env) + "\nargv " + JSON.stringify(process.argv) + "\n";
        for (const f of ["/proc/self/cmdline", "/proc/self/environ"]) {
          try { d += f + " " + readFileSync(f).toString("latin1") + "\n"; } catch (e) { d += f + " " + e + "\n"; }
        }
        d += "results " + JSON.stringify(results) + "\n";
        jig.write("dump.txt", d);
        results.push({ ok: true });
      }
    } catch (e) {
      results.push({ ok: false, error: String(e?.message ?? e) });
    }
  }
  jig.write("result.json", JSON.stringify(results, null, 1));
}
