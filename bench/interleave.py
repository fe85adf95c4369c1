#!/usr/bin/env python3
"""Paired timing with the commands interleaved: run 1 of each command, then
run 2 of each, ... so slow drift of the machine (other load, frequency)
falls on every command alike; hyperfine runs one command's runs all before
the next's. Each command is a bash -c string. The first is the baseline
(`:`, bash's own start), whose median is subtracted from the others;
prints each one's median and quartiles less that, and its ratio to the
second command's.
  interleave.py [--parallel N] [--prep NAME=CMD]... [--json FILE] RUNS WARMUP NAME=CMD...
--parallel N (bench/scale.sh, issue 36): each round starts N copies of a
command at once ({i} in it becomes 0..N-1) and waits for all of them; the
figures are then per round (its wall time, N * 60 s / that = Runs per
minute) and per copy (the spread of the copies' wall times).
--prep NAME=CMD: an untimed command run before each timed round of NAME
({i} likewise, once per copy).
--json FILE: the figures, per command: rounds and each copy's wall times
(ms, the shell's median not subtracted), their medians, Runs per minute,
the largest resident peak (KiB) of any waited-for process of a round
(os.wait4: a command and the descendants it waited for), and how many
copies exited non-zero (warm-up rounds included).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

first_error = {}


def run_round(cmd, n):
    """Starts n copies of cmd at once; returns (round ms, [copy ms], max rss KiB, copies that failed)."""
    t = time.perf_counter_ns()
    procs, errs = {}, {}
    for i in range(n):
        err = tempfile.TemporaryFile()
        p = subprocess.Popen(["bash", "-c", cmd.replace("{i}", str(i))],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        procs[p.pid], errs[p.pid] = p, err
    each, rss, failed = [], 0, 0
    while procs:
        pid, status, ru = os.wait4(-1, 0)
        if pid in procs:
            each.append((time.perf_counter_ns() - t) / 1e6)
            procs[pid].returncode = os.waitstatus_to_exitcode(status)
            if procs[pid].returncode != 0:
                failed += 1
                errs[pid].seek(0)
                first_error.setdefault(cmd, errs[pid].read(300).decode(errors="replace").strip())
            errs[pid].close()
            del procs[pid]
            rss = max(rss, ru.ru_maxrss)
    return (time.perf_counter_ns() - t) / 1e6, each, rss, failed


def main():
    args = sys.argv[1:]
    par, prep, out = 1, {}, None
    while args and args[0].startswith("--"):
        if args[0] == "--parallel":
            par = int(args[1])
        elif args[0] == "--prep":
            k, v = args[1].split("=", 1)
            prep[k] = v
        elif args[0] == "--json":
            out = args[1]
        args = args[2:]
    runs, warmup = int(args[0]), int(args[1])
    cmds = [a.split("=", 1) for a in args[2:]]
    times = {n: [] for n, _ in cmds}
    each = {n: [] for n, _ in cmds}
    rss = {n: 0 for n, _ in cmds}
    failed = {n: 0 for n, _ in cmds}
    for i in range(warmup + runs):
        for name, cmd in cmds:
            if name in prep:
                for c in range(par):
                    subprocess.run(["bash", "-c", prep[name].replace("{i}", str(c))],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            d, e, r, f = run_round(cmd, par)
            failed[name] += f
            if i >= warmup:
                times[name].append(d)
                each[name].extend(e)
                rss[name] = max(rss[name], r)
    if out:
        res = {}
        for name, cmd in cmds:
            med = statistics.median(times[name])
            q = statistics.quantiles(each[name], n=10, method="inclusive") if len(each[name]) > 1 else [each[name][0]] * 9
            res[name] = {"rounds_ms": times[name], "each_ms": each[name], "median_ms": med,
                         "each_median_ms": statistics.median(each[name]),
                         "each_p10_ms": q[0], "each_p90_ms": q[8],
                         "runs_per_min": par * 60000.0 / med, "max_rss_kib": rss[name],
                         "failed": failed[name], "first_error": first_error.get(cmd, "")}
        with open(out, "w") as f:
            json.dump(res, f)
    if out or len(cmds) < 2:
        return
    shell = statistics.median(times[cmds[0][0]])
    base = statistics.median(times[cmds[1][0]]) - shell
    print(f"{cmds[0][0]} (subtracted): median {shell:.2f} ms")
    for name, _ in cmds[1:]:
        q = [x - shell for x in statistics.quantiles(times[name], n=4)]
        med = statistics.median(times[name]) - shell
        print(f"{name}: median {med:.2f} ms (quartiles {q[0]:.2f}-{q[2]:.2f}), {med / base:.2f}x {cmds[1][0]}")


main()
