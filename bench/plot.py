#!/usr/bin/env python3
"""Draws bench/history CSV figures (bench/scale.sh's columns) as one PNG
with gnuplot (Debian's gnuplot-nox): one panel per scenario, one line per
figure (where + parameter) across the runs (x: the runs in date order,
labelled with their commit), plotting the ratio to the baseline where the
figure has one and the figure itself where not, and each target on the
plotted quantity as a dashed line, so a regression is seen at a glance.
  plot.py CSV [CSV...] PNG
"""
import csv
import subprocess
import sys


def main():
    *srcs, png = sys.argv[1:]
    rows = []
    for s in srcs:
        with open(s, newline="") as f:
            r = csv.reader(f)
            head = next(r, None) or []
            for cells in r:
                # The parameter is the one free-text column: a row whose
                # parameter has an unquoted comma has it back whole.
                extra = len(cells) - len(head)
                if extra > 0:
                    p = head.index("parameter")
                    cells[p:p + extra + 1] = [",".join(cells[p:p + extra + 1])]
                rows.append(dict(zip(head, cells)))
    if not rows:
        sys.exit("plot.py: no figures in " + " ".join(srcs))
    runs = sorted({(r["date"], r["commit"], r["mode"]) for r in rows})
    xi = {k: i for i, k in enumerate(runs)}
    # In a scenario where some figure has a target, only those are drawn
    # (the wall-time spread beside concurrent throughput is for the table).
    judged = {r["scenario"] for r in rows if r["target"] != "-"}
    rows = [r for r in rows if r["target"] != "-" or r["scenario"] not in judged]
    scen = []
    for r in rows:
        if r["scenario"] not in scen:
            scen.append(r["scenario"])
    out = [f'set terminal pngcairo size 1400,{360 * ((len(scen) + 1) // 2)} font ",8"',
           f'set output "{png}"', 'set datafile separator ","', 'set key outside right top font ",7"',
           'set grid', f'set xrange [-0.5:{len(runs) - 0.5}]',
           "set xtics (" + ", ".join(f'"{c[:7]}\\n{d[5:16]}{" s" if m == "short" else ""}" {i}'
                                     for (d, c, m), i in xi.items()) + ") font \",6\"",
           f"set multiplot layout {(len(scen) + 1) // 2},2"]
    blocks = 0
    for sc in scen:
        series, targets, ylabel = {}, set(), set()
        for r in rows:
            if r["scenario"] != sc:
                continue
            ratio = r["ratio"] != ""
            if not ratio and r["target"] == "-":
                continue
            v = float(r["ratio"] if ratio else r["jig"])
            ylabel.add("ratio to baseline" if ratio else r["unit"])
            key = f'{r["where"]}: {r["parameter"]}'
            series.setdefault(key, []).append((xi[(r["date"], r["commit"], r["mode"])], v))
            t = r["target"]
            if (t.startswith("ratio") and ratio) or (t.startswith("jig") and not ratio):
                targets.add(float(t.split("=", 1)[1]))
        out.append(f'set title "{sc}"')
        out.append(f'set ylabel "{" / ".join(sorted(ylabel))}"')
        plots = []
        data = []
        for key, pts in series.items():
            n = blocks
            blocks += 1
            data.append(f"$d{n} << EOD\n" + "\n".join(f"{x},{y}" for x, y in sorted(pts)) + "\nEOD")
            plots.append(f'$d{n} using 1:2 with linespoints title "{key.replace(chr(34), "")}"')
        for t in sorted(targets):
            plots.append(f'{t} with lines dashtype 2 lw 2 lc rgb "red" title "target {t:g}"')
        out = out[:1] + data + out[1:]
        out.append("plot " + ", ".join(plots))
    out.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(out) + "\n", text=True, check=True)


main()
