#!/bin/sh
# The soak (issue 18; docs/reliability.md): a bounded loop of mixed jig
# runs in one project: refusals before admission (an unknown Flow, a bad
# --timeout, a missing input, an undeclared input), successes, Flow
# failures, crashes, timeouts, Run/0 refusals and cancellations, with and
# without checkpoints. Before and after, and every round: the
# open-descriptor count of the lane, the coordinator's resident memory
# (sampled mid-Run), no process, cgroup, run directory or stage left.
#
# JIG_SOAK_ROUNDS rounds (default 10: the 500-Run soak) of 50 Runs each,
# taken by two lanes at once (25 Runs each, their own packets; the VM has
# two CPUs), which meet at the end of every round for the checks. The
# harness spawns as little as it can (the guest is emulated, so a process
# costs): no subshell or rm per Run, clocks and checkpoints read with the
# shell's own read.
# Requirements: R-L05, R-L06 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
ROUNDS=${JIG_SOAK_ROUNDS:-10}

T=$(mktemp -d /tmp/jig-soak.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cp -r "$JIG_SOURCE/tests/flow/checkpoint" "$T/p"
cd "$T/p"
"$JIG" review --yes >"$T/review.out" || { cat "$T/review.out"; fail "review failed"; }

# Where the time goes, per kind of Run (centiseconds of /proc/uptime, read
# by the shell: no process to read the clock), appended to $T/times.
uptime_cs() { read -r up _ </proc/uptime; f=${up#*.}; cs=$((${up%.*} * 100 + ${f#0})); } # "09": not octal
tick() { uptime_cs; t0=$cs; }
tock() { uptime_cs; echo "$1 $((cs - t0)) ${2:-1}" >>"$T/times"; } # tock KIND [RUNS]

# Each lane L has its own packet $T/pkt.L, mode file $T/mode.L, output
# $T/out.L and $T/err.L, and counts its Runs in $T/runs.L.
clearpkt() { [ ! -e "$T/pkt.$L" ] || { chmod -R u+w "$T/pkt.$L"; rm -rf "$T/pkt.$L"; }; }
# jr EXPECTED_EXIT ARGS...: one jig run in the project, its exit checked.
jr() {
	want=$1; shift
	clearpkt
	set +e; "$JIG" run "$@" --output "$T/pkt.$L" >"$T/out.$L" 2>"$T/err.$L" </dev/null; rc=$?; set -e
	[ "$rc" -eq "$want" ] || { cat "$T/err.$L"; fail "lane $L: jig run $*: exit $rc, expected $want"; }
	runs=$((runs + 1))
}
mode() { printf '%s\n' "$1" >"$T/mode.$L"; }
# Open descriptors of every process this user can see (jig's included:
# the test runs as jig's user), and what is left.
fds() { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
residue() {
	! pgrep -f /.jig/ >/dev/null || fail "a jig process survived: $(pgrep -af /.jig/)"
	! pgrep -x jig >/dev/null || fail "a jig process survived"
	[ -z "$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)" ] || fail "cgroups left: $(find /sys/fs/cgroup -name 'jig-[0-9]*')"
	[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*')" ] || fail "a run directory was left"
	! ls -a "$T" "$T/p" | grep -q '^\.jig-stage' || fail "a stage was left"
}
# saved2: some Run's accepted checkpoint is save 2 (only the cancelled
# Run gets there while the other lane runs; the canonical JSON is one line).
saved2() {
	for f in /tmp/jig-run-*/checkpoint.json; do
		[ -e "$f" ] || continue
		l=""; read -r l <"$f" || true
		case $l in *'"save":2,'* | *'"save":2}'*) return 0 ;; esac
	done
	return 1
}
# cancel: a Run that saves twice and sleeps, its coordinator's memory
# sampled, then SIGTERM; it publishes save 2.
cancel() {
	mode twice-then-sleep; clearpkt
	"$JIG" run saver --input mode="$T/mode.$L" --output "$T/pkt.$L" >"$T/out.$L" 2>"$T/err.$L" </dev/null &
	outer=$!
	i=0; until saved2; do i=$((i+1)); [ $i -lt 600 ] || fail "save 2 was not accepted"; sleep 0.1; done
	coord=$(pgrep -P "$outer" -x jig)
	rss=""; while read -r k v _; do [ "$k" != VmRSS: ] || rss=$v; done <"/proc/$coord/status"
	echo "$rss" >"$T/rss"
	kill -TERM "$outer"
	set +e; wait "$outer"; rc=$?; set -e
	[ "$rc" -eq 1 ] && [ "$(jq -r '.status + " " + (.checkpoint.save | tostring)' "$T/pkt.$L/record.json")" = "cancelled 2" ] ||
		{ cat "$T/err.$L"; fail "cancellation"; }
	runs=$((runs + 1))
}
# Lane a: 22 refusals (an unknown Flow, a bad --timeout), a success with two
# saves, a SIGSEGV after a save, a cancellation after two saves.
lane_a() {
	L=a; runs=0; k=0
	tick
	while [ $k -lt 11 ]; do k=$((k + 1)); jr 2 nosuch; jr 2 saver --timeout 0; done
	tock refused 22
	tick; mode twice-then-exit; jr 0 saver --input mode="$T/mode.a"; tock succeeded
	tick; mode crash; jr 1 saver --input mode="$T/mode.a"; tock crashed
	tick; cancel; tock cancelled
	echo "$runs" >"$T/runs.a"
}
# Lane b: 22 refusals (a missing input, an undeclared input), a Flow
# failure after a save, a timeout, a checkpoint without the grant (refused
# by Run/0: failed).
lane_b() {
	L=b; runs=0; k=0
	tick
	mode x
	while [ $k -lt 11 ]; do k=$((k + 1)); jr 2 saver; jr 2 saver --input mode="$T/mode.b" --input other="$T/mode.b"; done
	tock refused 22
	tick; mode once-then-fail; jr 1 saver --input mode="$T/mode.b"; tock failed
	tick; mode sleep; jr 1 saver --input mode="$T/mode.b" --timeout 200ms; tock timeout
	tick; jr 1 plain; tock run0_refused
	echo "$runs" >"$T/runs.b"
}

case_soak() {
	residue
	fd0=$(fds); rss0=""; rssmax=0; runs=0; start=$(date +%s)
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		rm -f "$T/runs.a" "$T/runs.b"
		lane_a & pa=$!
		lane_b & pb=$!
		wait "$pa" || fail "lane a failed in round $r"
		wait "$pb" || fail "lane b failed in round $r"
		read -r na <"$T/runs.a"; read -r nb <"$T/runs.b"; read -r rss <"$T/rss"
		runs=$((runs + na + nb))
		[ -n "$rss0" ] || rss0=$rss
		[ "$rss" -le "$rssmax" ] || rssmax=$rss
		tick; residue; tock residue
		echo "round $r: $runs runs, $(($(date +%s) - start)) s, open descriptors $(fds) (start $fd0), coordinator RSS $rss kB"
	done
	fd1=$(fds)
	echo "soak: $runs runs in $(($(date +%s) - start)) s; open descriptors $fd0 -> $fd1; coordinator RSS first $rss0 kB, last $rss kB, max $rssmax kB"
	awk '{n[$1] += $3; t[$1]+=$2} END {for (k in n) printf "  %s: %d in %.1f s (%.2f s each)\n", k, n[k], t[k]/100, t[k]/100/n[k]}' "$T/times" | sort
	[ "$runs" -ge $((ROUNDS * 50)) ] || fail "only $runs runs"
	# Flat: the same descriptors give or take the shell's own (a few), the
	# coordinator no larger at the end than at the start (+10 %).
	[ $((fd1 - fd0)) -le 8 ] || fail "open descriptors grew $fd0 -> $fd1"
	[ "$rss" -le $((rss0 + rss0 / 10)) ] || fail "the coordinator grew $rss0 -> $rss kB"
	residue
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
