// Test Flow for the HTTP effect: runs the steps of its "steps" input (JSON)
// and reports each outcome in result.json. Steps:
//   {"do": "http", "route", "method"?, "url"?, "body"?, "raw"?}  jig.http ("raw":
//       {key: number text} added to body through JSON.rawJSON; "sent" in
//       the result is JSON.stringify(body), the bytes the Flow built)
//   {"do": "fetch", "url"}          its own socket (must fail: offline scope)
//   {"do": "tcp", "port"}           its own TCP connection (must fail)
//   {"do": "dump"}                  environment, argv, /proc/self into dump.txt
//   {"do": "raw", "op"}             op written to Run/0 as it is; the reply
//   {"do": "resolve", "name"}       its own name lookup (must fail: no resolver)
import { lookup } from "node:dns/promises";
import { readFileSync, readSync, writeSync } from "node:fs";

export default async function (jig) {
  const steps = JSON.parse(jig.read("steps").toString());
  const results = [];
  for (const s of steps) {
    try {
      if (s.do === "http") {
        const opts = {};
        for (const k of ["method", "url", "body"]) if (k in s) opts[k] = s[k];
        // "raw": {key: number text} adds numbers a double cannot hold
        for (const [k, v] of Object.entries(s.raw ?? {})) opts.body[k] = JSON.rawJSON(v);
        const sent = "body" in opts ? JSON.stringify(opts.body) : undefined;
        const r = await jig.http(s.route, opts);
        const text = r.text();
        results.push({ ok: true, status: r.status, headers: r.headers, length: r.body.length,
          text: text.length > 10000 ? undefined : text, sent, redirectNotFollowed: r.redirectNotFollowed, timing: r.timing });
      } else if (s.do === "fetch") {
        const r = await fetch(s.url, { signal: AbortSignal.timeout(3000) });
        results.push({ ok: true, status: r.status });
      } else if (s.do === "tcp") {
        await new Promise((resolve, reject) => {
          Bun.connect({ hostname: "127.0.0.1", port: s.port, socket: { open() { resolve(); }, data() {}, error(_s, e) { reject(e); } } }).catch(reject);
        });
        results.push({ ok: true });
      } else if (s.do === "raw") {
        writeSync(3, JSON.stringify(s.op) + "\n");
        let line = Buffer.alloc(0);
        const one = Buffer.alloc(1);
        while (readSync(3, one, 0, 1, null) === 1 && one[0] !== 10) line = Buffer.concat([line, one]);
        const r = JSON.parse(line.toString("utf8"));
        results.push(r.ok ? { ok: true, status: r.status } : { ok: false, error: r.error });
      } else if (s.do === "resolve") {
        // No answer within 3 s is no resolver either (a lookup with no
        // name-service files may wait for a DNS server that never answers).
        const a = await Promise.race([lookup(s.name),
          new Promise((_, reject) => setTimeout(() => reject(new Error("no answer within 3 s")), 3000))]);
        results.push({ ok: true, address: (a as { address: string }).address });
      } else if (s.do === "dump") {
        let d = "env " + JSON.stringify(process.env) + "\nargv " + JSON.stringify(process.argv) + "\n";
        for (const f of ["/proc/self/cmdline", "/proc/self/environ", "/proc/1/cmdline", "/proc/1/environ"]) {
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
