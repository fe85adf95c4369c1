// A hostile Flow for jig's tests: the attached "mode" says what to attempt.
// Attempts report {"attempt", "ok", "error"} in result.json; ok:true means
// containment failed. Output and Run/0 abuse modes misbehave on purpose.
import * as fs from "node:fs";
import * as net from "node:net";

type Jig = { read(n: string): Buffer; write(p: string, d: string | Buffer): void; log(...p: unknown[]): void };

function attempt(jig: Jig, what: string, fn: () => unknown) {
  let ok = false, error = "";
  try { fn(); ok = true; } catch (e) { error = String((e as Error).message ?? e); }
  jig.write("result.json", JSON.stringify({ attempt: what, ok, error }) + "\n");
}

export default async function (jig: Jig) {
  const mode = jig.read("mode").toString("utf8").trim();
  const [verb, ...rest] = mode.split(" ");
  const arg = rest.join(" ");
  switch (verb) {
    case "read": return attempt(jig, mode, () => fs.readFileSync(arg));
    case "list": return attempt(jig, mode, () => fs.readdirSync(arg));
    case "write": return attempt(jig, mode, () => fs.writeFileSync(arg, "x"));
    case "tcp": {
      const res = await new Promise<{ ok: boolean; error: string }>((resolve) => {
        const s = net.connect({ host: "127.0.0.1", port: Number(arg) }, () => { s.destroy(); resolve({ ok: true, error: "" }); });
        s.on("error", (e) => resolve({ ok: false, error: e.message }));
        setTimeout(() => resolve({ ok: false, error: "timeout" }), 3000);
      });
      jig.write("result.json", JSON.stringify({ attempt: mode, ...res }) + "\n");
      return;
    }
    case "fetch": {
      let ok = false, error = "";
      try { await fetch(arg); ok = true; } catch (e) { error = String((e as Error).message ?? e); }
      jig.write("result.json", JSON.stringify({ attempt: mode, ok, error }) + "\n");
      return;
    }
    // output refusals
    case "symlink": jig.write("out/a", "a"); fs.symlinkSync("/etc/passwd", "/output/out/link"); return;
    case "hardlink": jig.write("out/a", "a"); fs.linkSync("/output/out/a", "/output/out/b"); return;
    case "fifo": {
      jig.write("out/a", "a");
      const { dlopen, ptr } = await import("bun:ffi");
      const libc = dlopen("libc.so.6", { mkfifo: { args: ["ptr", "u32"], returns: "i32" } });
      const path = Buffer.from("/output/out/fifo\0");
      if (libc.symbols.mkfifo(ptr(path), 0o644) !== 0) throw new Error("mkfifo failed");
      return;
    }
    case "files": for (let i = 0; i < Number(arg); i++) jig.write(`out/f${i}`, "x"); return;
    case "entries": for (let i = 0; i < Number(arg); i++) fs.mkdirSync(`/output/out/d${i}`, { recursive: true }); return;
    case "big": jig.write("out/big", Buffer.alloc(Number(arg), 120)); return;
    case "sparse": { jig.write("out/sparse", ""); fs.truncateSync("/output/out/sparse", Number(arg)); return; }
    case "undeclared": jig.write("result.json", "{}"); fs.writeFileSync("/output/secret.txt", "x"); return;
    // Run/0 abuse
    case "hugeline": { const chunk = Buffer.alloc(1 << 20, 97); for (let i = 0; i < Number(arg); i++) fs.writeSync(3, chunk); return; }
    case "badjson": fs.writeSync(3, "{not json\n"); return;
    case "unknownop": fs.writeSync(3, JSON.stringify({ op: "becomeRoot" }) + "\n"); return;
    case "flood": for (let i = 0; i < Number(arg); i++) jig.log("flood", i); return;
    case "sleep": await new Promise((r) => setTimeout(r, Number(arg))); jig.write("result.json", "{}"); return;
    case "ok": jig.write("result.json", JSON.stringify({ attempt: "ok", ok: true }) + "\n"); return;
    default: throw new Error("unknown mode " + mode);
  }
}
