#!/usr/bin/env python3
"""Issue 36: first review, unchanged re-review and a one-file change of a
package against `sha256sum` of the same files, interleaved (run 1 of each,
then run 2 of each ...; see bench/interleave.py), natively, as USER.
  review.py RUNS USER PROJECT NAME=JIG...
(the first round is a warm-up, not counted)
PROJECT is a jig project (one copy per NAME is made beside it, owned by
USER); each JIG is a jig binary (an installed prefix's bin/jig). Prints
each figure's median and quartiles and its ratio to sha256sum's.
Make a package with bench/mkpkg.sh."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time


CPU = {}


def timed(argv, cwd, name=None):
    """Wall ms; the CPU ms (user + sys of the command and its children) go
    to CPU[name]: on a shared machine the wall time carries the others'
    load, the CPU time much less of it."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter_ns()
    subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter_ns() - t) / 1e6
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if name:
        CPU.setdefault(name, []).append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
    return wall


def main():
    runs, user, project = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    jigs = [a.split("=", 1) for a in sys.argv[4:]]
    files = sorted(os.path.relpath(os.path.join(d, f), project) for d, _, fs in os.walk(project) if "/.jig" not in d + "/"
                   for f in fs if not d.endswith("/.jig"))
    files = [f for f in files if not f.startswith(".jig")]
    changed = [f for f in files if f.endswith(".bin")][-1]
    as_user = ["runuser", "-u", user, "--"]
    copies = {}
    for name, _ in jigs:
        c = f"{project}-{name}"
        shutil.rmtree(c, ignore_errors=True)
        shutil.copytree(project, c, symlinks=True, ignore=shutil.ignore_patterns(".jig"))
        subprocess.run(["chown", "-R", user, c], check=True)
        copies[name] = c
    t = {"sha256sum": []}
    for name, _ in jigs:
        for what in ("first", "again", "one"):
            t[f"{name} {what}"] = []
    for i in range(runs + 1):
        CPU.clear() if i == 1 else None  # the warm-up round not counted
        out = {"sha256sum": timed(as_user + ["sha256sum", "--"] + files, project, "sha256sum")}
        for name, jig in jigs:
            c = copies[name]
            shutil.rmtree(f"{c}/.jig", ignore_errors=True)
            subprocess.run(["sync"], check=True)
            out[f"{name} first"] = timed(as_user + [jig, "review", "--yes"], c, f"{name} first")
            out[f"{name} again"] = timed(as_user + [jig, "review", "--yes"], c, f"{name} again")
            with open(f"{c}/{changed}", "r+b") as f:  # one file changed
                b = f.read(1)
                f.seek(0)
                f.write(bytes([b[0] ^ 1]))
            out[f"{name} one"] = timed(as_user + [jig, "review", "--yes"], c, f"{name} one")
        if i:  # the first round warms the caches
            for k, v in out.items():
                t[k].append(v)
    base = statistics.median(t["sha256sum"])
    cbase = statistics.median(CPU["sha256sum"])
    for k, v in t.items():
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        c = statistics.median(CPU[k])
        print(f"{k}: wall median {statistics.median(v):.0f} ms (quartiles {q[0]:.0f}-{q[2]:.0f}), "
              f"{statistics.median(v) / base:.2f}x sha256sum; CPU median {c:.0f} ms, {c / cbase:.2f}x sha256sum")


main()
