#!/bin/sh
# The longer fuzzing run (docs/reliability.md, issue 31): each TARGET is
# fuzzed until its process has used CPU seconds of CPU time (user+system,
# from /proc, so a loaded machine does not shorten the run) or WALL
# seconds have passed, two targets at a time, niced to 19. Needs the build
# and seeds of scripts/fuzz.sh (run `scripts/fuzz.sh 1` first). Works in
# build-fuzz/long/: the binaries are copied there first (a rebuild during
# the run changes nothing), each target's corpus starts as
# build-fuzz/corpus/TARGET and grows in build-fuzz/long/corpus/TARGET.
# One line per target in build-fuzz/long/results:
#   target wall_s cpu_s execs cov ft corpus_units corpus_bytes exit
# then `scripts/fuzz-long.sh merge TARGET...` minimises each grown corpus
# into fuzz/corpus/TARGET (libFuzzer -merge=1: the coverage-minimal set).
#   scripts/fuzz-long.sh [CPU [WALL]] TARGET...
#   scripts/fuzz-long.sh merge TARGET...
set -eu
cd "$(dirname "$0")/.."
L=build-fuzz/long
export ASAN_OPTIONS=detect_leaks=1
# one TARGET (run by xargs below): runs it, appends its line to results.
if [ "${1:-}" = one ]; then
	t=$2
	start=$(date +%s)
	(cd "$L/work/$t" && exec nice -n 19 ../../bin/fuzz_"$t" -max_total_time="$WALL" -timeout=10 -rss_limit_mb=2048 \
		-max_len=1048576 -artifact_prefix="../../crashes/$t-" -print_final_stats=1 ../../corpus/"$t" >log 2>&1) &
	pid=$!
	tck=$(getconf CLK_TCK)
	cpu=0
	while kill -0 "$pid" 2>/dev/null; do
		s=$(cut -d')' -f2- /proc/"$pid"/stat 2>/dev/null) || break
		cpu=$(echo "$s" | awk -v k="$tck" '{printf "%d", ($12 + $13) / k}')
		if [ "$cpu" -ge "$CPU" ]; then
			kill -INT "$pid"
			break
		fi
		sleep 5
	done
	rc=0
	wait "$pid" || rc=$?
	wall=$(($(date +%s) - start))
	log=$L/work/$t/log
	execs=$(sed -n 's/^stat::number_of_executed_units: //p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	units=$(ls "$L/corpus/$t" | wc -l)
	kib=$(du -sk "$L/corpus/$t" | cut -f1)
	# rc 72: stopped at CPU seconds (libFuzzer's interrupt exit); 0: at WALL
	echo "$t $wall $cpu ${execs:-?} ${cov:-?} ${ft:-?} $units ${kib}KiB $rc" >>"$L/results"
	exit 0
fi
if [ "${1:-}" = merge ]; then
	shift
	for t in "$@"; do
		rm -rf "$L/merged/$t" && mkdir -p "$L/merged/$t" fuzz/corpus/"$t"
		nice -n 19 "$L/bin/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=1048576 "$L/merged/$t" \
			"$L/corpus/$t" fuzz/corpus/"$t" >"$L/merge-$t.log" 2>&1
		rm -rf fuzz/corpus/"$t" && mkdir -p fuzz/corpus/"$t" && cp "$L/merged/$t"/* fuzz/corpus/"$t"/
		echo "$t: $(ls fuzz/corpus/"$t" | wc -l) inputs, $(cat fuzz/corpus/"$t"/* | wc -c) bytes"
	done
	exit 0
fi
CPU=${1:-600}
WALL=${2:-3600}
shift 2 || shift $#
[ $# -gt 0 ] || { echo "usage: scripts/fuzz-long.sh [CPU [WALL]] TARGET..." >&2; exit 2; }
mkdir -p "$L/bin" "$L/crashes"
for t in "$@"; do
	cp build-fuzz/fuzz/fuzz_"$t" "$L/bin/"
	rm -rf "$L/corpus/$t" && mkdir -p "$L/corpus/$t" "$L/work/$t"
	cp build-fuzz/corpus/"$t"/* "$L/corpus/$t/" 2>/dev/null || true
done
export CPU WALL
printf '%s\n' "$@" | xargs -P 2 -n 1 "$0" one
cat "$L/results"
