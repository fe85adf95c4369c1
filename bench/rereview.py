#!/usr/bin/env python3
"""rereview.py ROUNDS NAME=DIR:JIG[:PREP]...: `jig review --yes` in DIR with the jig at JIG, as jigtest (run as
root), the NAMEs interleaved round by round after one warm-up round; wall and CPU (user + system of jig and its
children, wait4) medians per NAME. PREP: a shell command run (untimed) before each of its rounds, e.g. rm -rf DIR/.jig
for a first review. Issue 44 (docs/performance.md): re-reviews before and after a change, each in its own copy.
HOME is JIG_BENCH_HOME (default /var/tmp/jig-bench-home, made for jigtest), so the verification cache is warm."""
import os, pwd, statistics, subprocess, sys, time
rounds = int(sys.argv[1])
cmds = []
for a in sys.argv[2:]:
    name, rest = a.split("=", 1)
    parts = rest.split(":", 2)
    cmds.append((name, parts[0], parts[1], parts[2] if len(parts) > 2 else None))
pw = pwd.getpwnam("jigtest")
def demote():
    os.setgid(pw.pw_gid); os.setgroups([]); os.setuid(pw.pw_uid)
home = os.environ.get("JIG_BENCH_HOME", "/var/tmp/jig-bench-home")
os.makedirs(home, exist_ok=True)
os.chown(home, pw.pw_uid, pw.pw_gid)
env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C"}
res = {c[0]: ([], []) for c in cmds}
for r in range(rounds + 1):
    for name, d, jig, prep in cmds:
        if prep:
            subprocess.run(["sh", "-c", prep], check=True)
        t = time.perf_counter_ns()
        p = subprocess.Popen([jig, "review", "--yes"], cwd=d, preexec_fn=demote, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, st, ru = os.wait4(p.pid, 0)
        wall = (time.perf_counter_ns() - t) / 1e6
        err = p.stderr.read().decode(); p.stderr.close()
        if st != 0:
            print(name, "failed", st, err[:300]); sys.exit(1)
        if r > 0:
            res[name][0].append(wall); res[name][1].append((ru.ru_utime + ru.ru_stime) * 1000)
for name, (w, c) in res.items():
    q = statistics.quantiles(w, n=4) if len(w) > 1 else [w[0]] * 3
    print(f"{name}: wall median {statistics.median(w):.0f} ms (quartiles {q[0]:.0f}-{q[2]:.0f}), CPU median {statistics.median(c):.0f} ms, n={len(w)}")
