#!/usr/bin/env python3
"""A small npm registry for the dependency tests (issue 16), loopback only.

  registry.py make REG PROJECT SPEC   packs the packages SPEC (JSON) names
                                      into REG (npm's layout, real gzip'd
                                      tarballs, real sha512 integrity) and
                                      writes PROJECT's package.json and a
                                      bun.lock pinning them
  registry.py serve REG PORTFILE LOG [STALL]
                                      serves REG's tarballs and their
                                      metadata (packuments, for resolution)
                                      on 127.0.0.1 (a free port, written to
                                      PORTFILE), one line per request to
                                      LOG; with STALL, every request waits
                                      that many seconds; with "redirect",
                                      every tarball is answered 302 to its
                                      own path with "?moved" (then served)

SPEC: {"name": root name, "dependencies": {NAME: RANGE},
       "packages": [{"name", "version", "dependencies"?, "scripts"?,
                     "main"?, "bin"?, "files"?: {PATH: TEXT},
                     "optionalDependencies"?, "os"?, "cpu"?, "libc"?,
                     "hostile"?: "dotdot" | "absolute" | "device" | "fifo" |
                                 "symlink" | "hardlink" | "big" | "many" |
                                 "big30" (a 30 MiB file, not hostile)}],
       "lock": {"integrity"?: {NAME: VALUE}, "source"?: {NAME: SOURCE}}}
The packages are built by the suite itself; nothing comes from outside.
"""
import base64
import hashlib
import http.server
import io
import json
import os
import sys
import tarfile
import time


def pack(p):
    meta = {"name": p["name"], "version": p["version"]}
    for k in ("dependencies", "optionalDependencies", "scripts", "main", "bin", "os", "cpu", "libc"):
        if k in p:
            meta[k] = p[k]
    files = {"package.json": json.dumps(meta, indent=2)}
    files.update(p.get("files", {"index.js": "module.exports = %s;\n" % json.dumps(p["name"])}))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as t:
        def add(name, data=b"", **kw):
            ti = tarfile.TarInfo(name)
            ti.mtime = 499162500
            ti.mode = kw.pop("mode", 0o644)
            for k, v in kw.items():
                setattr(ti, k, v)
            ti.size = len(data) if ti.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
            t.addfile(ti, io.BytesIO(data) if ti.size else None)
        for path, text in sorted(files.items()):
            add("package/" + path, text.encode())
        h = p.get("hostile")
        if h == "dotdot":
            add("package/../../escape.js", b"x")
        elif h == "absolute":
            add("/tmp/jig-absolute.js", b"x")
        elif h == "device":
            add("package/dev", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        elif h == "fifo":
            add("package/fifo", type=tarfile.FIFOTYPE)
        elif h == "symlink":
            add("package/passwd", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        elif h == "hardlink":
            add("package/passwd", type=tarfile.LNKTYPE, linkname="/etc/passwd")
        elif h == "big":
            add("package/big.bin", b"\0" * (40 << 20))
        elif h == "big30":
            add("package/big.bin", b"\0" * (30 << 20))
        elif h == "many":
            for i in range(5000):
                add("package/f/%d.js" % i, b"")
    return buf.getvalue()


def integrity(data):
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def make(reg, project, spec):
    lock_pkgs = {}
    for p in spec["packages"]:
        data = pack(p)
        base = p["name"].split("/")[-1]
        d = os.path.join(reg, p["name"], "-")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s-%s.tgz" % (base, p["version"])), "wb") as f:
            f.write(data)
        meta = {}
        if p.get("dependencies"):
            meta["dependencies"] = p["dependencies"]
        for k in ("optionalDependencies", "bin", "os", "cpu", "libc"):
            if p.get(k):
                meta[k] = p[k]
        lk = spec.get("lock", {})
        src = lk.get("source", {}).get(p["name"], "%s@%s" % (p["name"], p["version"]))
        integ = lk.get("integrity", {}).get(p["name"], integrity(data))
        entry = [src, "", meta] + ([integ] if integ else [])
        lock_pkgs[p["name"]] = entry
    root = {"name": spec.get("name", "demo"), "version": "1.0.0", "dependencies": spec["dependencies"]}
    with open(os.path.join(project, "package.json"), "w") as f:
        json.dump(root, f, indent=2)
    lock = {"lockfileVersion": 1,
            "workspaces": {"": {"name": root["name"], "dependencies": spec["dependencies"]}},
            "packages": lock_pkgs}
    with open(os.path.join(project, "bun.lock"), "w") as f:
        json.dump(lock, f, indent=2)


def packument(name, d, port):
    versions = {}
    for f in sorted(os.listdir(os.path.join(d, "-"))):
        data = open(os.path.join(d, "-", f), "rb").read()
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
            meta = json.load(t.extractfile("package/package.json"))
        meta["dist"] = {"tarball": "http://127.0.0.1:%d/%s/-/%s" % (port, name, f), "integrity": integrity(data),
                        "shasum": hashlib.sha1(data).hexdigest()}
        versions[meta["version"]] = meta
    latest = sorted(versions, key=lambda v: [int(x) for x in v.split(".")])[-1]
    return {"name": name, "dist-tags": {"latest": latest}, "versions": versions}


def serve(reg, portfile, log, stall):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with open(log, "a") as f:
                f.write("GET %s\n" % self.path)
            if stall == "redirect" and self.path.endswith(".tgz"):
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.1:%d%s?moved" % (self.server.server_address[1], self.path))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if stall and stall != "redirect":
                time.sleep(stall)
            path = os.path.normpath(self.path.split("?")[0].replace("%2f", "/").replace("%2F", "/")).lstrip("/")
            full = os.path.join(reg, path)
            if not path.startswith("..") and os.path.isdir(os.path.join(full, "-")):
                data = json.dumps(packument(path, full, self.server.server_address[1])).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if path.startswith("..") or not path.endswith(".tgz") or not os.path.isfile(full):
                self.send_response(404)
                self.end_headers()
                return
            data = open(full, "rb").read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4], (sys.argv[5] if sys.argv[5] == "redirect" else float(sys.argv[5])) if len(sys.argv) > 5 else 0)
    else:
        sys.exit("usage: registry.py make|serve ...")
