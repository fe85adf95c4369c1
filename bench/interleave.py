#!/usr/bin/env python3
"""Paired timing with the commands interleaved: run 1 of each command, then
run 2 of each, ... so slow drift of the machine (other load, frequency)
falls on every command alike; hyperfine runs one command's runs all before
the next's. Each command is a bash -c string. The first is the baseline
(`:`, bash's own start), whose median is subtracted from the others;
prints each one's median and quartiles less that, and its ratio to the
second command's.
  interleave.py RUNS WARMUP NAME=CMD...
"""
import statistics
import subprocess
import sys
import time


def main():
    runs, warmup = int(sys.argv[1]), int(sys.argv[2])
    cmds = [a.split("=", 1) for a in sys.argv[3:]]
    times = {n: [] for n, _ in cmds}
    for i in range(warmup + runs):
        for name, cmd in cmds:
            t = time.perf_counter_ns()
            subprocess.run(["bash", "-c", cmd], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            d = (time.perf_counter_ns() - t) / 1e6
            if i >= warmup:
                times[name].append(d)
    shell = statistics.median(times[cmds[0][0]])
    base = statistics.median(times[cmds[1][0]]) - shell
    print(f"{cmds[0][0]} (subtracted): median {shell:.2f} ms")
    for name, _ in cmds[1:]:
        q = [x - shell for x in statistics.quantiles(times[name], n=4)]
        med = statistics.median(times[name]) - shell
        print(f"{name}: median {med:.2f} ms (quartiles {q[0]:.2f}-{q[2]:.2f}), {med / base:.2f}x {cmds[1][0]}")


main()
