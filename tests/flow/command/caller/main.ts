// Test Flow for Project Commands: runs the steps of its "steps" input (JSON)
// and reports each outcome in result.json. A step:
//   {"route", "files": {path: text}, "entry", "args"?, "stdin"?,
//    "nFiles"?: N     (padded with small files to N files in all),
//    "textBytes"?: N  (padded with pad.txt to N bytes of text in all),
//    "stdinBytes"?: N (stdin of N bytes),
//    "nArgs"?: N      (N arguments "a")}
// Result: {ok, outcome, exitCode, signal, stdout, stderr, stdoutBytes,
// stderrBytes, stdoutTruncated, stderrTruncated, stdoutHex?} or {ok: false, error}.
export default async function (jig) {
  const steps = JSON.parse(jig.read("steps").toString());
  const results = [];
  for (const s of steps) {
    try {
      const files = { ...(s.files ?? {}) };
      if (s.nFiles) for (let i = Object.keys(files).length; i < s.nFiles; i++) files[`pad/${i}.js`] = "";
      if (s.textBytes) {
        let have = 0;
        for (const t of Object.values(files)) have += Buffer.byteLength(t);
        files["pad.txt"] = "p".repeat(s.textBytes - have);
      }
      const opts = { files, entry: s.entry };
      if (s.args) opts.args = s.args;
      if (s.nArgs) opts.args = Array(s.nArgs).fill("a");
      if (s.stdin !== undefined) opts.stdin = s.stdin;
      if (s.stdinBytes) opts.stdin = "i".repeat(s.stdinBytes);
      const r = await jig.command(s.route, opts);
      results.push({ ok: true, outcome: r.outcome, exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr,
                     stdoutBytes: r.stdoutBytes, stderrBytes: r.stderrBytes, stdoutTruncated: r.stdoutTruncated,
                     stderrTruncated: r.stderrTruncated, stdoutRawLength: r.stdoutRaw.length, wallMs: r.wallMs,
                     ...(r.error === undefined ? {} : { error: r.error }),
                     ...(r.captured === undefined ? {} : { captureRefused: r.captureRefused, captured: r.captured &&
                       Object.fromEntries(Object.entries(r.captured).map(([p, f]) => [p, { sha256: f.sha256, bytes: f.bytes,
                         text: f.data.toString("utf8"), dataLength: f.data.length }])) }) });
    } catch (e) {
      results.push({ ok: false, error: String(e?.message ?? e) });
    }
  }
  jig.write("result.json", JSON.stringify(results, null, 1));
}
