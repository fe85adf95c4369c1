#!/usr/bin/env python3
"""Paired, interleaved: wall and CPU (user+system of the command and the
descendants it waited for, os.wait4) of sha256sum of a package's files,
and the first review (an empty .jig) by the jig before (main) and after
(e50-packs). Projects T/oldN and T/newN hold the same N-file package
(bench/scale.sh pkg). Usage: JIG_OLD=... JIG_NEW=... first_review_cpu.py ROUNDS N..."""
import os, resource, statistics, subprocess, sys, time
T = os.environ.get("JIG_BENCH_DIR", "/var/tmp/h5bench")
OLD = os.environ["JIG_OLD"]  # the jig before, installed
NEW = os.environ["JIG_NEW"]  # the jig after
AS = ["runuser", "-u", "jigtest", "--"]
def run(argv, cwd, prep=None):
    if prep:
        subprocess.run(prep, shell=True, check=True)
    t = time.perf_counter_ns()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter_ns() - t) / 1e6
    err = p.stderr.read().decode()[:200]
    if os.waitstatus_to_exitcode(status) != 0:
        print("FAILED", argv, err, flush=True)
    return wall, (ru.ru_utime + ru.ru_stime) * 1000
rounds = int(sys.argv[1])
for n in sys.argv[2:]:
    res = {"sha": [], "before": [], "after": [], "again_before": [], "again_after": []}
    files = None
    for r in range(rounds + 1):
        if files is None:
            files = sorted(os.listdir(f"{T}/new{n}/pkg"))
        load = open("/proc/loadavg").read().split()[0]
        a = run(AS + ["sha256sum"] + files, f"{T}/new{n}/pkg")
        b = run(AS + [OLD, "review", "--yes"], f"{T}/old{n}", f"rm -rf {T}/old{n}/.jig")
        c = run(AS + [NEW, "review", "--yes"], f"{T}/new{n}", f"rm -rf {T}/new{n}/.jig")
        d = run(AS + [OLD, "review", "--yes"], f"{T}/old{n}")
        e = run(AS + [NEW, "review", "--yes"], f"{T}/new{n}")
        if r == 0:
            continue  # warm-up
        for k, v in zip(("sha", "before", "after", "again_before", "again_after"), (a, b, c, d, e)):
            res[k].append(v)
        print(f"n={n} round {r} load {load}: sha {a[0]:.0f}/{a[1]:.0f} before {b[0]:.0f}/{b[1]:.0f} after {c[0]:.0f}/{c[1]:.0f}; re-review before {d[0]:.0f}/{d[1]:.0f} after {e[0]:.0f}/{e[1]:.0f} (wall/cpu ms)", flush=True)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in res.items()}
    s = med["sha"]
    for k in ("before", "after", "again_before", "again_after"):
        print(f"RESULT n={n} {k}: wall {med[k][0]:.0f} ms ({med[k][0]/s[0]:.2f}x sha {s[0]:.0f}), cpu {med[k][1]:.0f} ms ({med[k][1]/s[1]:.2f}x sha {s[1]:.0f})", flush=True)
