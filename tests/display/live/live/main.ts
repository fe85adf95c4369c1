// A Flow for the live display tests (tests/display/live.sh): it runs for
// the milliseconds its "mode" input names, logging a tick every 200 ms
// (hostile text among them), holding some memory, and writes two outputs
// that are hostile to a browser.
type Jig = { read(n: string): Buffer; write(p: string, d: string | Buffer): void; log(...p: unknown[]): void };

// "probe LO HI MS": for MS milliseconds, the Flow tries every port LO..HI
// on loopback (a TCP connection and a fetch of the display's API), again
// and again, and logs what it reached (R-D01: the display gives Flows no
// network authority; the test makes the display's port one of LO..HI).
async function probe(jig: Jig, lo: number, hi: number, ms: number) {
  const t0 = Date.now();
  const reached = new Set<string>();
  let rounds = 0;
  const tcp = (port: number) => new Promise<boolean>((resolve) => {
    try {
      Bun.connect({ hostname: "127.0.0.1", port, socket: {
        open(s) { s.end(); resolve(true); }, data() {}, error() { resolve(false); }, connectError() { resolve(false); },
      } }).catch(() => resolve(false));
    } catch { resolve(false); }
  });
  const http = async (port: number) => {
    try { await fetch(`http://127.0.0.1:${port}/api/view`, { signal: AbortSignal.timeout(2000) }); return true; } catch { return false; }
  };
  while (Date.now() - t0 < ms) {
    for (let port = lo; port <= hi; port++) {
      if (await tcp(port)) reached.add(`tcp:${port}`);
      if (await http(port)) reached.add(`http:${port}`);
    }
    rounds++;
    jig.log(`probe round ${rounds}: ports ${lo}-${hi}, reached ${reached.size}`);
  }
  jig.log(`probe done: ${rounds} rounds over ports ${lo}-${hi}; reached ${reached.size ? [...reached].join(",") : "none"}`);
}

export default async function (jig: Jig) {
  const mode = jig.read("mode").toString("utf8").trim();
  if (mode.startsWith("probe ")) {
    const [lo, hi, pms] = mode.split(" ").slice(1).map(Number);
    return probe(jig, lo, hi, pms);
  }
  const ms = Number(mode) || 1000;
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
