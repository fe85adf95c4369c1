// A Flow for the live display tests (tests/display/live.sh): it runs for
// the milliseconds its "mode" input names, logging a tick every 200 ms
// (hostile text among them), holding some memory, and writes two outputs
// that are hostile to a browser.
type Jig = { read(n: string): Buffer; write(p: string, d: string | Buffer): void; log(...p: unknown[]): void };

export default async function (jig: Jig) {
  const ms = Number(jig.read("mode").toString("utf8").trim()) || 1000;
  const hold = Buffer.alloc(24 << 20, 1); // visible in memory.current
  jig.log('live <img src=/x onerror="window.__pwned=20"> <script>window.__pwned=21</script>');
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < ms; i++) {
    jig.log(`tick ${i}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  jig.write("report.html", '<script>window.__pwned=22</script>\n<img src=/x onerror="window.__pwned=23">\n' +
    '<svg onload="window.__pwned=24"></svg><iframe src="/x"></iframe><a href="javascript:window.__pwned=25">x</a>\n');
  jig.write("notes.md", '# Notes\n\n<img src=/x onerror="window.__pwned=26">\n[link](javascript:window.__pwned=27)\n');
  jig.log(`done after ${Date.now() - t0} ms, held ${hold.length} bytes`);
}
