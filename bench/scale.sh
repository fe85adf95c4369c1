#!/bin/sh
# Cost as work grows (issue 36): every figure paired against its bare
# baseline in one interleaved run (bench/interleave.py).
#   sh bench/scale.sh [--short] [--quiet-check] [--part all|native|vm|guest] [--csv FILE] [--png FILE] [BUILD]
# --part native (here, as root: jig runs as jigtest): first review and
#   re-review of packages of 10..4,096 files vs sha256sum of the same files;
#   a changing project (one file changed before each review): store bytes
#   and review time per step; jig review's own peak memory.
# --part vm (here): runs --part guest in the supported-host VM
#   (JIG_SCALE_VM, default tests/vm/run with a VM of its own; ctest gives
#   tests/supported-host.sh, the lane) and appends its rows to the CSV.
# --part guest (inside the guest): N = 1, 2, 4, 8 simultaneous `jig run`s
#   of a Flow doing ~1 s of CPU work vs N bare bwrap + bun commands; a mix of
#   Flows of one project at once with a review in between; a trivial Flow;
#   1, 16, 64 attachments (8 MB) vs copying them into a bare run; jig's own
#   peak memory per Run in each (tests/flow/rss.sh) and at Run/0's caps
#   (tests/flow/saturate, as bench/caps.sh).
# --part all (default): native, then vm.
# A table per scenario on stdout; one CSV line per figure appended to FILE
# (default bench/history/scale.csv; `-`: printed as "csv:" lines, which
# --part vm collects). --short: a few iterations, smaller sizes, targets
# not judged (ctest's bench.scale_*; decision 182). --png FILE: then draws
# the CSV (bench/plot.py).
# --quiet-check (issue 50): the machine must be quiet for a target to be
#   judged: before each judged figure, a 1-minute load average above
#   JIG_QUIET_LOAD (default 0.5) or another QEMU running (a VM lane, another
#   engineer's guest; --part vm's own guest is started after the native
#   part and is not counted inside the guest) makes that figure's met
#   "busy" instead of yes/no, and the run says so on its first line and at
#   its end. Without it, targets are judged whatever the load.
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
short=0 quiet=0 busy_rows=0 part=all csv=$S/bench/history/scale.csv png=
while [ $# -gt 0 ]; do
	case $1 in
	--short) short=1 ;;
	--quiet-check) quiet=1 ;;
	--part) part=$2; shift ;;
	--csv) csv=$2; shift ;;
	--png) png=$2; shift ;;
	-*) echo "scale.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
B=$(cd "${1:-build}" && pwd)
mode=full
[ "$short" = 1 ] && mode=short
commit=${JIG_BENCH_COMMIT:-$(git -C "$S" rev-parse --short HEAD 2>/dev/null || echo unknown)}
now=${JIG_BENCH_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
IL="python3 $S/bench/interleave.py"
header="date,commit,mode,where,scenario,parameter,jig,baseline,ratio,unit,target,met"
if [ "$csv" != - ]; then
	mkdir -p "$(dirname "$csv")"
	[ -s "$csv" ] || echo "$header" >"$csv"
fi

# busy: why the machine is not quiet now (empty: it is): the load average
# or another QEMU (this script's own guest is a child of --part vm, which
# checks before starting it).
busy() {
	load=$(cut -d' ' -f1 /proc/loadavg)
	q=$(pgrep -c -f '^qemu-system' 2>/dev/null || true)
	awk -v l="$load" -v m="${JIG_QUIET_LOAD:-0.5}" -v q="${q:-0}" 'BEGIN {
		if (l + 0 > m + 0) printf "load average %s above %s", l, m
		if (q + 0 > 0) printf "%s%s QEMU running", (l + 0 > m + 0) ? "; " : "", q }'
}
if [ "$quiet" = 1 ] && [ -n "$(busy)" ]; then
	echo "scale.sh: the machine is busy ($(busy)): targets are not judged while it is (--quiet-check)"
fi

# row SCENARIO PARAMETER JIG BASELINE UNIT TARGET: one figure. TARGET is
# ratio>=X, ratio<=X, jig<=X or -; judged (met yes/no) in full mode only.
row() {
	ratio=$(awk -v j="$3" -v b="$4" 'BEGIN { if (b == "" || b == 0) print ""; else printf "%.3f", j / b }')
	met=-
	why=
	[ "$quiet" = 1 ] && [ "$short" = 0 ] && [ "$6" != - ] && why=$(busy)
	if [ -n "$why" ]; then
		met=busy
		busy_rows=$((busy_rows + 1))
	elif [ "$short" = 0 ] && [ "$6" != - ]; then
		met=$(awk -v t="$6" -v j="$3" -v r="$ratio" 'BEGIN {
			v = (substr(t, 1, 5) == "ratio") ? r : j; op = (t ~ />=/) ? ">=" : "<="
			x = t; sub(/^[a-z]+[<>]=/, "", x)
			ok = (op == ">=") ? (v + 0 >= x + 0) : (v + 0 <= x + 0)
			print (v == "" ? "-" : (ok ? "yes" : "no")) }')
	fi
	printf '  %-13s %-40s %12s %12s %7s %-8s %-12s %s\n' "$1" "$2" "$3" "$4" "${ratio:--}" "$5" "$6" "$met"
	line="$now,$commit,$mode,$where,$1,\"$2\",$3,$4,$ratio,$5,$6,$met"
	if [ "$csv" = - ]; then echo "csv:$line"; else echo "$line" >>"$csv"; fi
}
table() { printf '\n== %s\n  %-13s %-40s %12s %12s %7s %-8s %-12s %s\n' "$1" scenario parameter jig baseline ratio unit target met; }
# j FILE NAME FIELD: a figure of interleave.py's JSON, rounded.
j() { python3 -c "import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]]; print(round(v, 1) if isinstance(v, float) else v)" "$@"; }

native() {
	where=native
	. "$S/tests/flow/rss.sh"
	JIG=$B/test-prefix/bin/jig
	[ -x "$JIG" ] || { echo "scale.sh: no $JIG (run ctest's install-prefix first)" >&2; exit 2; }
	as=
	[ "$(id -u)" = 0 ] && as="runuser -u jigtest --"
	T=$(mktemp -d /var/tmp/jig-scale.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	chmod 755 "$T"
	if [ "$short" = 1 ]; then counts="10 100 1000" size=4000 runs=2 warm=0 steps=10 cfiles=100
	else counts="10 100 1000 4096" size=16000 runs=7 warm=1 steps=100 cfiles=1000; fi
	# pkg DIR COUNT: a project whose one Flow package has COUNT files
	# (flow.json, main.js and COUNT-2 of SIZE random bytes).
	pkg() {
		mkdir -p "$1/pkg"
		echo '{"format":"jig-project/1","flows":{"pkg":"pkg"}}' >"$1/jig.json"
		echo '{"format":"jig-flow/1","name":"pkg","entry":"main.js","inputs":[],"outputs":["o.txt"]}' >"$1/pkg/flow.json"
		echo 'export default (jig) => jig.write("o.txt", "x");' >"$1/pkg/main.js"
		python3 -c "import os,sys
for i in range(int(sys.argv[2]) - 2):
    open('%s/pkg/f%05d' % (sys.argv[1], i), 'wb').write(os.urandom(int(sys.argv[3])))" "$1" "$2" "$size"
	}
	table "package size: first review and re-review vs sha256sum of the same files (native, $size-byte files)"
	for n in $counts; do
		P=$T/p$n
		pkg "$P" "$n"
		[ -z "$as" ] || chown -R jigtest "$P"
		$IL --json "$T/r$n.json" --prep first="rm -rf $P/.jig" "$runs" "$warm" \
			sha="$as sh -c 'cd $P/pkg && sha256sum * >/dev/null'" \
			first="cd $P && $as $JIG review --yes" \
			again="cd $P && $as $JIG review --yes"
		for k in first again sha; do
			f=$(j "$T/r$n.json" "$k" failed)
			[ "$f" = 0 ] || echo "  FINDING: $k of $n files failed $f times: $(j "$T/r$n.json" "$k" first_error)"
		done
		sha=$(j "$T/r$n.json" sha median_ms)
		row package "$n files: first review" "$(j "$T/r$n.json" first median_ms)" "$sha" ms "ratio<=2"
		t=-
		[ "$n" = 4096 ] && t="jig<=300"
		row package "$n files: unchanged re-review" "$(j "$T/r$n.json" again median_ms)" "$sha" ms "$t"
		row memory "review of $n files: jig peak" "$(($(j "$T/r$n.json" first max_rss_kib) / 1024))" "" MiB "jig<=63"
		rm -rf "$P"
	done

	table "a changing project: $steps reviews of a $cfiles-file package, one $size-byte file changed before each (native)"
	P=$T/c
	pkg "$P" "$cfiles"
	[ -z "$as" ] || chown -R jigtest "$P"
	(cd "$P" && $as "$JIG" review --yes >/dev/null)
	# bytes DIR [NAME]: the bytes of the files under DIR (du -sb also counts the
	# directories, which would hide whether blobs grow by the changed bytes).
	bytes() { find "$1" -type f -name "${2:-*}" -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
	# The blobs' bytes: loose ones and packs (their indexes are metadata).
	blobbytes() { echo $(($(bytes "$P/.jig/store/blobs") + $(bytes "$P/.jig/store" '*.pack'))); }
	blobs0=$(blobbytes)
	meta0=$(($(bytes "$P/.jig") - blobs0))
	: >"$T/steps"
	k=1
	while [ "$k" -le "$steps" ]; do
		f=$(printf '%s/pkg/f%05d' "$P" $(((k - 1) % (cfiles - 2))))
		head -c "$size" /dev/urandom >"$f"
		t0=$(date +%s%N)
		(cd "$P" && $as "$JIG" review --yes >/dev/null)
		ms=$((($(date +%s%N) - t0) / 1000000))
		blobs=$(blobbytes)
		all=$(bytes "$P/.jig")
		echo "$k $ms $blobs $((all - blobs))" >>"$T/steps"
		k=$((k + 1))
	done
	awk -v b0="$blobs0" -v m0="$meta0" 'NR == 1 || NR % 10 == 0 { printf "  step %3d: review %5d ms, blobs +%d bytes, metadata +%d bytes\n", $1, $2, $3 - b0, $4 - m0 }' "$T/steps"
	last=$(tail -n 1 "$T/steps")
	set -- $last
	row changing "$steps changes: blob store growth" "$(($3 - blobs0))" "$((steps * size))" bytes "ratio<=1.01"
	row changing "$steps changes: metadata growth (.jig less blobs)" "$(($4 - meta0))" "" bytes -
	w=$((steps / 10))
	first=$(head -n "$w" "$T/steps" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
	lastw=$(tail -n "$w" "$T/steps" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
	row changing "review ms: last $w steps vs first $w (flat)" "$lastw" "$first" ms "ratio<=1.25"
	rm -rf "$T"
	trap - EXIT
}

guest() {
	where=guest
	. "$S/tests/flow/rss.sh"
	. "$S/bench/common.sh"
	bench_prefix "$B"
	if [ "$short" = 1 ]; then ns="1 4" cpu_s=0.2 runs=1 warm=0 truns=2 atts="1 64" memns= memats=64
	else ns="1 2 4 8" cpu_s=1 runs=5 warm=1 truns=15 atts="1 16 64" memns="1 2 4 8" memats="1 16 64"; fi
	mkdir -p "$T/p" "$T/o"
	flow() { # flow NAME INPUTS BODY
		mkdir -p "$T/p/$1"
		echo "{\"format\":\"jig-flow/1\",\"name\":\"$1\",\"entry\":\"main.js\",\"inputs\":$2,\"outputs\":[\"o.txt\"]}" >"$T/p/$1/flow.json"
		echo "export default (jig) => { $3 };" >"$T/p/$1/main.js"
	}
	# bare DIR [BINDS]: the bare bwrap + bun command of bench/flow.sh for the Flow in DIR.
	bare() {
		echo "$bench_ns --ro-bind $SNAP/libexec/bun /.jig/bun --ro-bind $SNAP/libexec/runtime /.jig/runtime \
 --ro-bind $1 /flow ${2:-} --ro-bind /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu --ro-bind /usr/lib64 /usr/lib64 \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --size 16777216 --tmpfs /output --size 67108864 --tmpfs /scratch \
 --remount-ro / --chdir /scratch --setenv HOME /scratch -- /.jig/bun /.jig/runtime/boot.js main.js 3>/dev/null"
	}
	spin='let x = 0; for (let i = 0; i < K; i++) x = (x + i * 7) % 1000003; jig.write("o.txt", String(x));'
	flow hello '[]' 'jig.write("o.txt", "hello world");'
	# Calibrate the CPU Flow to ~cpu_s seconds of bare run above a trivial one.
	flow cal '[]' "$(echo "$spin" | sed 's/K/2000000/')"
	sh -c "$(bare "$T/p/hello")"
	sh -c "$(bare "$T/p/cal")"
	t0=$(date +%s%N); sh -c "$(bare "$T/p/hello")"; t1=$(date +%s%N); sh -c "$(bare "$T/p/cal")"; t2=$(date +%s%N)
	K=$(awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) -v s="$cpu_s" 'BEGIN { d = b - a; if (d < 1e7) d = 1e7; printf "%d", 2000000 * s * 1e9 / d }')
	rm -rf "$T/p/cal"
	flow cpu '[]' "$(echo "$spin" | sed "s/K/$K/")"
	for a in 1 16 64; do
		flow "att$a" '["data"]' 'jig.write("o.txt", String(jig.inputs().length));'
		mkdir -p "$T/d$a"
		python3 -c "import os,sys
for i in range(int(sys.argv[2])): open('%s/f%02d' % (sys.argv[1], i), 'wb').write(os.urandom(8000000 // int(sys.argv[2])))" "$T/d$a" "$a"
	done
	fl=$(ls "$T/p" | awk '{printf "%s\"%s\":\"%s\"", (NR > 1 ? "," : ""), $1, $1}')
	echo "{\"format\":\"jig-project/1\",\"flows\":{$fl}}" >"$T/p/jig.json"
	cd "$T/p"
	"$JIG" review --yes >/dev/null
	clean="chmod -R u+w $T/o/{i} 2>/dev/null; rm -rf $T/o/{i}"
	echo "guest: $(nproc) vCPUs; CPU Flow K=$K (~${cpu_s} s bare)"

	# mem NAME COUNT CMD: jig's own peak memory over one run of CMD (COUNT Runs).
	mem() {
		chmod -R u+w "$T/o" && rm -rf "$T/o" && mkdir "$T/o"
		sh -c "$3" >"$T/mem.out" 2>&1 &
		rss_watch $!
		wait $! || echo "  FINDING: $1: exit $? ($(head -c 300 "$T/mem.out"))"
		row memory "$1: largest jig peak" "$(awk '$2 > m {m = $2} END {print int(m / 1024)}' "$T/rss")" "" MiB "jig<=63"
		row memory "$1: jig peaks per Run" "$(awk -v n="$2" '{s += $2} END {print int(s / 1024 / n)}' "$T/rss")" "" MiB "jig<=63"
	}

	table "concurrency: N simultaneous jig runs of a ~${cpu_s} s CPU Flow vs N bare bwrap + bun (guest)"
	for n in $ns; do
		$IL --parallel "$n" --json "$T/c$n.json" --prep jig="$clean" "$runs" "$warm" \
			bare="$(bare "$T/p/cpu")" jig="$JIG run cpu --output $T/o/{i}"
		f=$(j "$T/c$n.json" jig failed)
		[ "$f" = 0 ] || echo "  FINDING: $f of the concurrent jig runs at N=$n failed: $(j "$T/c$n.json" jig first_error)"
		row concurrency "$n Runs: throughput" "$(j "$T/c$n.json" jig runs_per_min)" "$(j "$T/c$n.json" bare runs_per_min)" Runs/min "ratio>=0.9"
		row concurrency "$n Runs: wall p10-p90 spread" \
			"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(round(d['jig']['each_p90_ms'] - d['jig']['each_p10_ms']))" "$T/c$n.json")" \
			"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(round(d['bare']['each_p90_ms'] - d['bare']['each_p10_ms']))" "$T/c$n.json")" ms -
	done
	for n in $memns; do
		mem "$n concurrent Runs" "$n" "i=0 ps=; while [ \$i -lt $n ]; do $JIG run cpu --output $T/o/\$i & ps=\"\$ps \$!\"; i=\$((i + 1)); done; rc=0; for p in \$ps; do wait \$p || rc=\$?; done; exit \$rc"
	done

	table "a mix of Flows of one project at once, a review in between (guest)"
	chmod -R u+w "$T/o" && rm -rf "$T/o" && mkdir "$T/o"
	# Wave 1: three Flows at once and an unchanged re-review while they run;
	# then hello changed and reviewed; wave 2: the three again. Each Run's
	# exit status goes to m<wave><flow>.rc; a non-zero one is a refusal (or
	# failure) to report, with the first line it printed.
	refused=0
	for wave in 1 2; do
		for fl in cpu hello att16; do
			in=
			[ "$fl" = att16 ] && in="--input data=$T/d16"
			("$JIG" run "$fl" $in --output "$T/o/m$wave$fl" >"$T/o/m$wave$fl.err" 2>&1; echo $? >"$T/o/m$wave$fl.rc") &
		done
		[ "$wave" = 1 ] && review_during=during || review_during=
		if [ -n "$review_during" ] && ! "$JIG" review --yes >"$T/o/review.err" 2>&1; then
			refused=$((refused + 1))
			echo "  FINDING: the re-review during Runs: $(head -n 1 "$T/o/review.err")"
		fi
		wait
		if [ "$wave" = 1 ]; then
			echo "// changed" >>"$T/p/hello/main.js"
			if ! "$JIG" review --yes >"$T/o/review.err" 2>&1; then
				refused=$((refused + 1))
				echo "  FINDING: the review of a changed Flow between waves: $(head -n 1 "$T/o/review.err")"
			fi
		fi
	done
	for r in "$T"/o/m*.rc; do
		if [ "$(cat "$r")" != 0 ]; then
			refused=$((refused + 1))
			echo "  FINDING: $(basename "$r" .rc): exit $(cat "$r"): $(head -n 1 "${r%.rc}.err")"
		fi
	done
	row mix "6 Runs, 2 reviews: refused" "$refused" "" count "jig<=0"
	mem "mix of 3 Flows" 3 "$JIG run cpu --output $T/o/1 & a=\$!; $JIG run hello --output $T/o/2 & b=\$!; $JIG run att16 --input data=$T/d16 --output $T/o/3 & c=\$!; wait \$a && wait \$b && wait \$c"

	table "a trivial Flow: jig run vs bare bwrap + bun (guest)"
	$IL --json "$T/t.json" --prep jig="$clean" "$truns" 1 bare="$(bare "$T/p/hello")" jig="$JIG run hello --output $T/o/0"
	row trivial "jig run vs bare bwrap+bun" "$(j "$T/t.json" jig median_ms)" "$(j "$T/t.json" bare median_ms)" ms "ratio<=1.3"
	mem "trivial Flow" 1 "$JIG run hello --output $T/o/0"

	table "attachments: jig run with N inputs (8 MB) vs copying them into a bare bwrap + bun run (guest)"
	for a in $atts; do
		$IL --json "$T/a$a.json" --prep jig="$clean" --prep bare="rm -rf $T/o/c" "$runs" "$warm" \
			bare="cp -r $T/d$a $T/o/c && $(bare "$T/p/att$a" "--ro-bind $T/o/c /input/data")" \
			jig="$JIG run att$a --input data=$T/d$a --output $T/o/{i}"
		row attachments "$a inputs" "$(j "$T/a$a.json" jig median_ms)" "$(j "$T/a$a.json" bare median_ms)" ms -
	done
	for a in $memats; do
		mem "$a attachments" 1 "$JIG run att$a --input data=$T/d$a --output $T/o/0"
	done

	table "trusted memory at Run/0's caps (tests/flow/saturate, as bench/caps.sh; guest)"
	cp -r "$S/tests/flow/saturate" "$T/s"
	(cd "$T/s" && "$JIG" review --yes >/dev/null)
	cd "$T/s"
	echo '{"logs": 0, "kid_logs": 0}' >"$T/plan0"
	mem "saturate, no log line" 1 "$JIG run saturate --output $T/o/0 --input plan=$T/plan0 --timeout 20m"
	if [ "$short" = 0 ]; then
		echo '{"logs": 200, "kid_logs": 50}' >"$T/plan1"
		mem "saturate, 200 1-MiB lines" 1 "$JIG run saturate --output $T/o/0 --input plan=$T/plan1 --timeout 20m"
		echo '{"logs": 200}' >"$T/plan2"
		mem "hoard, 16 1-MiB checkpoints" 1 "$JIG run hoard --output $T/o/0 --input plan=$T/plan2 --timeout 20m"
	fi
	cd /
}

case $part in
native) native ;;
guest) guest ;;
vm|all)
	[ "$part" = all ] && native
	vm=${JIG_SCALE_VM:-$S/tests/vm/run --fresh}
	o=$(mktemp)
	f=
	[ "$short" = 1 ] && f=--short
	if [ "$quiet" = 1 ]; then # the guest judges its own load; the host's is said here
		f="$f --quiet-check"
		[ -z "$(busy)" ] || echo "scale.sh: the host is busy as the guest starts ($(busy)): the guest's figures are from a loaded machine"
	fi
	rc=0
	JIG_BENCH_COMMIT=$commit JIG_BENCH_DATE=$now $vm --timeout "${JIG_SCALE_VM_TIMEOUT:-3000}" -- sh "$S/bench/scale.sh" $f --part guest --csv - "$B" >"$o" || rc=$?
	grep -v '^csv:' "$o" || true
	if [ "$csv" = - ]; then grep '^csv:' "$o" || true; else grep '^csv:' "$o" | cut -c5- >>"$csv" || true; fi
	n=$(grep -c '^csv:' "$o" || true)
	rm -f "$o"
	[ "$rc" = 0 ] || { echo "scale.sh: the guest part failed ($rc)" >&2; exit "$rc"; }
	[ "$n" -gt 0 ] || { echo "scale.sh: the guest part gave no figures" >&2; exit 1; }
	;;
*) echo "scale.sh: --part all|native|vm|guest" >&2; exit 2 ;;
esac
if [ "$quiet" = 1 ] && [ "$busy_rows" -gt 0 ]; then
	echo "scale.sh: $busy_rows figure(s) not judged (met: busy): the machine was not quiet (--quiet-check)"
fi
if [ -n "$png" ]; then
	python3 "$S/bench/plot.py" "$csv" "$png"
fi
