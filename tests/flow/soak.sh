#!/bin/sh
# The soak (issue 18; docs/reliability.md): a bounded loop of mixed jig
# runs in one project: refusals before admission (an unknown Flow, a bad
# --timeout, a missing input), successes, Flow failures, crashes, timeouts
# and cancellations, with and without checkpoints. Before and after, and
# every round: the open-descriptor count of the lane, the coordinator's
# resident memory (sampled mid-Run), no process, cgroup, run directory or
# stage left. JIG_SOAK_ROUNDS rounds of 50 Runs each: 3 in CI (150 Runs,
# for the VM lane's budget); JIG_SOAK_ROUNDS=10 is the 500-Run soak of
# docs/reliability.md.
# Requirements: R-L05, R-L06 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
ROUNDS=${JIG_SOAK_ROUNDS:-3}

T=$(mktemp -d /tmp/jig-soak.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cp -r "$JIG_SOURCE/tests/flow/checkpoint" "$T/p"
(cd "$T/p" && "$JIG" review --yes >"$T/review.out") || { cat "$T/review.out"; fail "review failed"; }
runs=0
# jr EXPECTED_EXIT ARGS...: one jig run in the project, its exit checked.
jr() {
	want=$1; shift
	rm -rf "$T/pkt" 2>/dev/null || { chmod -R u+w "$T/pkt"; rm -rf "$T/pkt"; }
	set +e; (cd "$T/p" && "$JIG" run "$@" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null; rc=$?; set -e
	[ "$rc" -eq "$want" ] || { cat "$T/err"; fail "jig run $*: exit $rc, expected $want"; }
	runs=$((runs + 1))
}
mode() { printf '%s\n' "$1" >"$T/mode"; }
# Open descriptors of every process this user can see (jig's included:
# the test runs as jig's user), and what is left.
fds() { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
residue() {
	! pgrep -f /.jig/ >/dev/null || fail "a jig process survived: $(pgrep -af /.jig/)"
	! pgrep -x jig >/dev/null || fail "a jig process survived"
	[ -z "$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)" ] || fail "cgroups left: $(find /sys/fs/cgroup -name 'jig-[0-9]*')"
	[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*')" ] || fail "a run directory was left"
	! ls -a "$T" | grep -q '^\.jig-stage' || fail "a stage was left"
}
# cancel: a Run that saves twice and sleeps, its coordinator's memory
# sampled, then SIGTERM; it publishes save 2.
cancel() {
	mode twice-then-sleep; rm -rf "$T/pkt" 2>/dev/null || { chmod -R u+w "$T/pkt"; rm -rf "$T/pkt"; }
	(cd "$T/p" && exec "$JIG" run saver --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	i=0; until [ "$(jq -r .save /tmp/jig-run-*/checkpoint.json 2>/dev/null)" = 2 ]; do
		i=$((i+1)); [ $i -lt 3000 ] || fail "save 2 was not accepted"; sleep 0.02; done
	coord=$(pgrep -P "$outer" -x jig)
	rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$coord/status")
	kill -TERM "$outer"
	set +e; wait "$outer"; rc=$?; set -e
	[ "$rc" -eq 1 ] && [ "$(jq -r .status "$T/pkt/record.json")" = cancelled ] && [ "$(jq -r .checkpoint.save "$T/pkt/record.json")" = 2 ] ||
		{ cat "$T/err"; fail "cancellation"; }
	runs=$((runs + 1))
}

case_soak() {
	residue
	fd0=$(fds); rss0=""; rssmax=0; start=$(date +%s)
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		# 44 refusals before admission: each a jig run that fails with one line.
		k=0
		while [ $k -lt 11 ]; do
			k=$((k + 1))
			jr 2 nosuch
			jr 2 saver --timeout 0
			jr 2 saver
			mode x; jr 2 saver --input mode="$T/mode" --input other="$T/mode"
		done
		mode twice-then-exit; jr 0 saver --input mode="$T/mode"          # success, completed
		mode once-then-fail; jr 1 saver --input mode="$T/mode"           # the Flow fails after a save
		mode crash; jr 1 saver --input mode="$T/mode"                    # SIGSEGV
		mode sleep; jr 1 saver --input mode="$T/mode" --timeout 1s       # timeout
		mode twice-then-exit; jr 1 plain                                 # an undeclared checkpoint: failed
		cancel                                                           # cancelled after two saves
		[ -n "$rss0" ] || rss0=$rss
		[ "$rss" -le "$rssmax" ] || rssmax=$rss
		residue
		echo "round $r: $runs runs, $(($(date +%s) - start)) s, open descriptors $(fds) (start $fd0), coordinator RSS $rss kB"
	done
	fd1=$(fds)
	echo "soak: $runs runs in $(($(date +%s) - start)) s; open descriptors $fd0 -> $fd1; coordinator RSS first $rss0 kB, last $rss kB, max $rssmax kB"
	[ "$runs" -ge $((ROUNDS * 50)) ] || fail "only $runs runs"
	# Flat: the same descriptors give or take the shell's own (a few), the
	# coordinator no larger at the end than at the start (+10 %).
	[ $((fd1 - fd0)) -le 8 ] || fail "open descriptors grew $fd0 -> $fd1"
	[ "$rss" -le $((rss0 + rss0 / 10)) ] || fail "the coordinator grew $rss0 -> $rss kB"
	residue
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
