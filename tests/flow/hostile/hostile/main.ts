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

// Terminal escapes a Flow may try to put on the operator's terminal: a
// forged "succeeded" line after erasing the real one, a window title, the
// clipboard (OSC 52), lone CR, backspaces, DEL, C1 (as a character and as a
// raw byte in a file name) and bidi overrides.
const HOSTILE_TEXT = "\x1b[2K\r\x1b[1Ajig: flow hostile succeeded; packet /tmp/forged\n" +
  "\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07 bs\x08\x08 del\x7f c1\u009b31m bidi\u202egnp.exe\u2066x\u2069 lone\rCR";

// Calls through libc (bun:ffi): r is the return value, errno after it.
async function libc() {
  const { dlopen, ptr } = await import("bun:ffi");
  const l = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "i64", "i64", "i64"], returns: "i64" },
    __errno_location: { args: [], returns: "ptr" },
  });
  const { read } = await import("bun:ffi");
  return {
    ptr,
    call(nr: number, ...a: (number | bigint)[]) {
      const args = [0, 1, 2, 3].map((i) => BigInt(a[i] ?? 0));
      const r = Number(l.symbols.syscall(BigInt(nr), args[0], args[1], args[2], args[3]));
      return { r, errno: r === -1 ? read.i32(l.symbols.__errno_location(), 0) : 0 };
    },
  };
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
    // An extended attribute on a declared output (R-S06): "xattr NAME" sets
    // NAME on out/a (a POSIX ACL with a named user for system.posix_acl_access).
    case "xattr": {
      jig.write("out/a", "a");
      const { dlopen, ptr, read } = await import("bun:ffi");
      const l = dlopen("libc.so.6", {
        setxattr: { args: ["ptr", "ptr", "ptr", "u64", "i32"], returns: "i32" },
        __errno_location: { args: [], returns: "ptr" },
      });
      let value = Buffer.from("v");
      if (arg === "system.posix_acl_access") {
        value = Buffer.alloc(44);
        value.writeUInt32LE(2, 0);
        [[1, 6, 0xffffffff], [2, 4, process.getuid!()], [4, 4, 0xffffffff], [0x10, 4, 0xffffffff], [0x20, 4, 0xffffffff]]
          .forEach(([tag, perm, id], i) => { value.writeUInt16LE(tag, 4 + i * 8); value.writeUInt16LE(perm, 6 + i * 8); value.writeUInt32LE(id, 8 + i * 8); });
      }
      const path = Buffer.from("/output/out/a\0"), name = Buffer.from(arg + "\0");
      if (l.symbols.setxattr(ptr(path), ptr(name), ptr(value), value.length, 0) !== 0)
        throw new Error(`setxattr ${arg}: refused at the source (errno ${read.i32(l.symbols.__errno_location(), 0)})`);
      return;
    }
    case "undeclared": jig.write("result.json", "{}"); fs.writeFileSync("/output/secret.txt", "x"); return;
    // Run/0 abuse
    case "hugeline": { const chunk = Buffer.alloc(1 << 20, 97); for (let i = 0; i < Number(arg); i++) fs.writeSync(3, chunk); return; }
    case "badjson": fs.writeSync(3, "{not json\n"); return;
    case "unknownop": fs.writeSync(3, JSON.stringify({ op: "becomeRoot" }) + "\n"); return;
    case "flood": for (let i = 0; i < Number(arg); i++) jig.log("flood", i); return;
    case "biglogs": { // well-formed ~1 MiB log lines straight to Run/0, past the runtime's 4 KiB cut
      const line = JSON.stringify({ op: "log", text: "b".repeat((1 << 20) - 64) }) + "\n";
      for (let i = 0; i < Number(arg); i++) fs.writeSync(3, line);
      jig.write("result.json", "{}"); return;
    }
    case "sleep": await new Promise((r) => setTimeout(r, Number(arg))); jig.write("result.json", "{}"); return;
    case "ignoreterm": { // a Flow that ignores SIGTERM (and SIGINT, SIGHUP), then sleeps
      for (const s of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(s, () => jig.log(`ignored ${s}`));
      await new Promise((r) => setTimeout(r, Number(arg))); jig.write("result.json", "{}"); return;
    }
    case "ok": jig.write("result.json", JSON.stringify({ attempt: "ok", ok: true }) + "\n"); return;
    // Untrusted text: in the error, in log lines, in an output file name.
    case "text-error": jig.log(HOSTILE_TEXT); jig.log("second\x1b[31m line"); throw new Error(HOSTILE_TEXT);
    case "text-log": jig.log(HOSTILE_TEXT); jig.write("result.json", "{}"); return;
    case "text-name": fs.mkdirSync("/output/out", { recursive: true }); fs.writeFileSync(Buffer.concat([Buffer.from("/output/out/evil" + HOSTILE_TEXT.replace(/[\n/]/g, "")), Buffer.from([0x9b, 0x32, 0x4a])]), "x"); return;
    // What the Flow can see of the host: its mounts, descriptors, pid 1,
    // environment, and which mounts are writable.
    case "whoami": {
      const fds: Record<string, string> = {};
      for (const fd of fs.readdirSync("/proc/self/fd")) { try { fds[fd] = fs.readlinkSync(`/proc/self/fd/${fd}`); } catch (e) { fds[fd] = "?"; } }
      let pid1 = "";
      try { pid1 = fs.readFileSync("/proc/1/cmdline", "latin1").replace(/\0/g, " "); } catch (e) { pid1 = "unreadable: " + (e as Error).message; }
      const probe = (p: string) => { try { return fs.readFileSync(p, "latin1"); } catch (e) { return "unreadable: " + (e as Error).message; } };
      jig.write("out/mountinfo", fs.readFileSync("/proc/self/mountinfo"));
      jig.write("out/whoami.json", JSON.stringify({
        fds, pid1, environ: fs.readFileSync("/proc/self/environ", "latin1").split("\0").filter(Boolean),
        argv: fs.readFileSync("/proc/self/cmdline", "latin1").split("\0").slice(0, -1),
        pid1_environ: probe("/proc/1/environ"), cwd: process.cwd(), self_cgroup: probe("/proc/self/cgroup"),
      }, null, 1));
      return;
    }
    case "fill": {
      const [path, bytes] = arg.split(" ");
      let done = 0, error = "";
      try { const fd = fs.openSync(path, "w"); const b = Buffer.alloc(1 << 20, 102); while (done < Number(bytes)) { fs.writeSync(fd, b); done += b.length; } }
      catch (e) { error = (e as Error).message; }
      jig.write("result.json", JSON.stringify({ attempt: mode, ok: done >= Number(bytes), done, error }) + "\n");
      return;
    }
    // pid 1 is the trusted launcher, with the Flow's uid inside the user
    // namespace: re-tuning it must be refused; tuning itself still works.
    case "tune-pid1": {
      const c = await libc();
      const rl = new BigUint64Array([1024n, 1024n]);
      const mask = new BigUint64Array([1n]);
      const SYS = { prlimit64: 302, setpriority: 141, sched_setaffinity: 203, ioprio_set: 251, modify_ldt: 154 };
      const other = {
        prlimit64: c.call(SYS.prlimit64, 1, 7, c.ptr(rl), 0),
        setpriority: c.call(SYS.setpriority, 0, 1, 10),
        sched_setaffinity: c.call(SYS.sched_setaffinity, 1, 8, c.ptr(mask)),
        ioprio_set: c.call(SYS.ioprio_set, 1, 1, (2 << 13) | 7),
        modify_ldt: c.call(SYS.modify_ldt, 0, c.ptr(rl), 16),
      };
      const self = { setpriority: c.call(SYS.setpriority, 0, 0, 5), ioprio_set: c.call(SYS.ioprio_set, 1, 0, (2 << 13) | 7) };
      const refused = Object.values(other).every((x) => x.r === -1 && x.errno === 1);
      const works = Object.values(self).every((x) => x.r === 0);
      jig.write("result.json", JSON.stringify({ attempt: mode, ok: !refused || !works, other, self }) + "\n");
      return;
    }
    // Limits (jig why's records): memory until the scope's OOM kill; more
    // threads than the scope's tasks.
    case "hog": { const held: Buffer[] = []; for (;;) held.push(Buffer.alloc(64 << 20, 1)); }
    // "charge S H": S MiB written to /scratch (the scope's tmpfs), then H
    // MiB of memory touched and held (R-S05 #166: tmpfs pages are charged
    // to the scope's memory limit).
    case "charge": {
      const [scratch, heap] = arg.split(" ").map(Number);
      const mib = Buffer.alloc(1 << 20, 115);
      const fd = fs.openSync("/scratch/fill", "w");
      for (let i = 0; i < scratch; i++) fs.writeSync(fd, mib);
      fs.closeSync(fd);
      const held: Buffer[] = [];
      for (let i = 0; i < heap; i += 16) held.push(Buffer.alloc(16 << 20, 1));
      jig.write("result.json", JSON.stringify({ attempt: mode, ok: true, held: held.length * 16 }) + "\n");
      return;
    }
    case "threads": { // threads running libc's sleep(30), started through bun:ffi: quick, unlike processes under TCG
      const { dlopen, ptr } = await import("bun:ffi");
      const c = dlopen("libc.so.6", { pthread_create: { args: ["ptr", "ptr", "ptr", "ptr"], returns: "i32" }, dlsym: { args: ["ptr", "ptr"], returns: "ptr" } });
      const sleep = c.symbols.dlsym(null, ptr(Buffer.from("sleep\0")));
      const tid = new BigUint64Array(1);
      let refused = 0;
      for (let i = 0; i < Number(arg); i++) if (c.symbols.pthread_create(ptr(tid), null, sleep, 30) !== 0) refused++;
      throw new Error(`${refused} of ${arg} threads could not start`);
    }
    case "segv": process.kill(process.pid, "SIGSEGV"); await new Promise((r) => setTimeout(r, 5000)); return;
    default: throw new Error("unknown mode " + mode);
  }
}
