#!/bin/sh
# Failure headlines (issue 46, must-show 1): one Flow per outcome (out of
# memory, deadline, expiry, a crash, an undeclared output, a refused
# effect, a failed child, SIGINT from the operator while the Run is live);
# for each, the first line of jig run, of jig inspect and of jig why say
# the same words, built by one function (run/why.c); the undeclared output
# is a failed packet with the Flow's logs, exit 1. case_lines: a stack
# trace shown as inert lines, and jig.read of an undeclared input.
# Requirements: R-C10, R-H03, R-L05 (docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"

T=$(mktemp -d /tmp/jig-headlines.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

project() {
	cp -r "$JIG_SOURCE/tests/flow/headlines" "$T/p"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out") || { cat "$T/review.out"; fail "review failed"; }
}
# run N FLOW MODE ARGS...: jig run in the background; $outer, packet $T/pkt.N
start() {
	n=$1 flow=$2 mode=$3; shift 3
	printf '%s\n' "$mode" >"$T/mode.$n"
	in=""; [ "$flow" = fail ] && in="--input mode=$T/mode.$n"
	# shellcheck disable=SC2086
	(cd "$T/p" && exec "$JIG" run "$flow" $in --output "$T/pkt.$n" "$@") >"$T/out.$n" 2>"$T/err.$n" </dev/null &
	outer=$!
}
over() {
	set +e; wait "$outer"; rc=$?; set -e
	echo "--- $flow $mode (exit $rc, $(date +%T))"; cat "$T/err.$n"
	[ ! -f "$T/pkt.$n/record.json" ] || jq -c '{status, error, termination}' "$T/pkt.$n/record.json"
}
run() { start "$@"; over; }
rec() { jq -r ".$1" "$T/pkt.$n/record.json"; }
# same PATTERN [RC]: jig run's, jig inspect's and jig why's first lines
# are one headline (the same words) matching PATTERN; exit RC (1).
same() {
	[ "$rc" -eq "${2:-1}" ] || fail "$mode: exit $rc, not ${2:-1}"
	[ -f "$T/pkt.$n/record.json" ] || fail "$mode: no record"
	"$JIG" inspect "$T/pkt.$n" >"$T/inspect.$n" 2>&1 || { cat "$T/inspect.$n"; fail "$mode: jig inspect failed"; }
	"$JIG" why "$T/pkt.$n" >"$T/why.$n" 2>&1 || { cat "$T/why.$n"; fail "$mode: jig why failed"; }
	r=$(head -1 "$T/err.$n" | sed -e 's/^jig: //' -e "s|; packet $T/pkt.$n\$||")
	i=$(head -1 "$T/inspect.$n" | sed -e "s|^packet $T/pkt.$n: ||")
	w=$(head -1 "$T/why.$n")
	printf 'run:     %s\ninspect: %s\nwhy:     %s\n' "$r" "$i" "$w"
	[ "$r" = "$i" ] && [ "$i" = "$w" ] || fail "$mode: the three first lines differ"
	printf '%s\n' "$r" | grep -Eq -- "$1" || fail "$mode: the headline does not name /$1/"
	! grep -q "nothing jig refused" "$T/why.$n" || fail "$mode: jig why contradicts the headline"
}

# web N: the web view's summary of packet N (jig inspect --display web,
# its /api/view) heads with the same words as jig why.
web() {
	w=$(head -1 "$T/why.$1")
	"$JIG" inspect "$T/pkt.$1" --display web >"$T/web.$1" 2>&1 </dev/null &
	wp=$!
	i=0; until grep -q '^display: http' "$T/web.$1"; do
		i=$((i+1)); [ $i -lt 300 ] && kill -0 "$wp" 2>/dev/null || { cat "$T/web.$1"; fail "web view: no link"; }; sleep 0.1; done
	link=$(sed -n 's/^display: \(http[^ ]*\).*/\1/p' "$T/web.$1")
	h=$(curl -sf -H "X-Jig-Capability: ${link##*#cap=}" "${link%%/#cap=*}/api/view" | jq -r .summary.headline) || h="(no view)"
	kill -TERM "$wp"; wait "$wp" || true
	printf 'web:     %s\n' "$h"
	[ "$h" = "$w" ] || fail "the web view's headline differs"
}

# The table in three cases (the lane's VM time): the limits and signals;
# the refusals and the operator's SIGINT; memory (the root's, a child's).
case_table_limits() {
	project
	run 2 fail "sleep 120000" --timeout 3s
	same "^flow fail passed its deadline of 3000 ms and was fenced"
	# The expiry: a coordinator that settles within the 250 ms grace
	# publishes its record; one that does not (TCG, usually) is SIGKILLed
	# (R-L05) and the outer command, which saw the expiry, publishes the
	# same record through a recovery-only coordinator after the fencing
	# (decision 295). Either way a packet says so, the same headline three
	# times and in the web view's summary.
	run 3 fail "sleep 120000" --timeout 5m --expiry 12s
	same "^flow fail was cancelled: the command's expiry of 12000 ms passed \(SIGTERM\)"
	[ "$(rec status)" = cancelled ] && [ "$(rec termination.outcome)" = cancelled ] && [ "$(rec expiry_ms)" = 12000 ] ||
		fail "expiry: not recorded as cancelled by the expiry"
	if grep -q "did not settle" "$T/err.$n"; then
		echo "(the coordinator was killed at the grace)"
		grep -Eq "a recovery-only coordinator published its record \(cancelled\)|its packet was published before" "$T/err.$n" ||
			fail "expiry: jig run does not say who published"
		[ "$(grep -c "^jig: flow fail was cancelled" "$T/err.$n")" -eq 1 ] || fail "expiry: the headline printed twice"
	fi
	web 3
	# The same, its coordinator held before it could publish (the fault
	# point "scope fence": the stop signal reached its supervisor, the
	# Flow is not fenced yet): the outer command's record, every time.
	export JIG_FAULT_STOP="scope fence" JIG_FAULT_LOG="$T/fault.log"
	run 9 fail "sleep 120000" --timeout 5m --expiry 12s
	unset JIG_FAULT_STOP JIG_FAULT_LOG
	grep -q "^scope fence " "$T/fault.log" || fail "expiry (held): the coordinator was not held at scope fence"
	same "^flow fail was cancelled: the command's expiry of 12000 ms passed \(SIGTERM\); the coordinator \(pid [0-9]+\) did not settle within the 250 ms grace"
	grep -q "a recovery-only coordinator published its record (cancelled)" "$T/err.$n" || fail "expiry: jig run does not say who published"
	[ "$(rec status)" = cancelled ] && [ "$(rec termination.outcome)" = cancelled ] && [ "$(rec expiry_ms)" = 12000 ] ||
		fail "expiry (held): not recorded as cancelled by the expiry"
	web 9
	run 4 fail segv
	same "^flow fail (crashed with|was killed by) SIGSEGV \(signal 11, (no )?core dumped\)"
}

case_table_refusals() {
	project
	# An undeclared output: a failed packet with the record and the logs,
	# nothing published as output, exit 1 (not 2, "usage").
	run 5 fail undeclared
	same "output extra.md: is not a declared output of the Flow \(it declares result.json\)"
	[ "$(rec status)" = failed ] && [ "$(rec 'outputs | length')" = 0 ] || fail "undeclared: $(rec status), outputs $(rec outputs)"
	[ -z "$(ls -A "$T/pkt.$n/files")" ] || fail "undeclared: files were published: $(ls -A "$T/pkt.$n/files")"
	rec 'logs[]' | grep -q "wrote extra.md" || fail "undeclared: the Flow's logs were not kept"
	[ -z "$(find "$T/pkt.$n" -perm /077)" ] || fail "undeclared: the packet is not private"
	run 6 fail http
	same "^flow fail asked for the HTTP route \"nope\", which its flow.json does not grant: refused"
	jq -r '.effects[0] | .error // .reason' "$T/pkt.$n/record.json" | grep -q 'no reviewed http route "nope"; its http routes: ok$' ||
		fail "http: the refusal does not list the routes there are"
	# SIGINT from the operator, provably while the Run is live: the Flow's
	# process runs (it sleeps 120 s after logging "live"), and its record
	# keeps that log line and says cancelled, not succeeded.
	start 8 fail "sleep 120000"
	i=0; until pgrep -f /.jig/runtime/boot.js >/dev/null; do i=$((i+1)); [ $i -lt 1200 ] || fail "the Flow did not start"; sleep 0.05; done
	sleep 1
	kill -INT "$outer"
	over
	same "^flow fail was cancelled by the operator: SIGINT \(signal 2\); the scope was fenced"
	[ "$(rec status)" = cancelled ] && [ "$(rec termination.outcome)" = cancelled ] || fail "SIGINT: not recorded as cancelled"
	rec 'logs[]' | grep -q live || fail "SIGINT: the Flow had not run"
}

# Memory: the root's kill and a child's, each named with its peak and limit.
case_table_memory() {
	project
	run 1 fail hog --timeout 100s
	same "^flow fail ran out of memory: the kernel killed it [0-9]+ time\(s\) at its scope's limit of [0-9]+ MiB \(peak [0-9]+ MiB\)$"
	run 7 parent x --timeout 100s
	same "^flow parent failed: child Flow kid \(binding kid\) ran out of memory: the kernel killed it [0-9]+ time\(s\) at its scope's limit of [0-9]+ MiB \(peak [0-9]+ MiB\)$"
}

case_lines() {
	project
	# A stack trace: lines, each inert, the first one the headline's.
	run 1 fail trace
	same "first line"
	grep -q '^ *at second line$' "$T/err.$n" || fail "jig run: the trace is not shown as lines"
	grep -q '^ *at second line$' "$T/inspect.$n" || fail "jig inspect: the trace is not shown as lines"
	grep -q '^ *at second line$' "$T/why.$n" || fail "jig why: the trace is not shown as lines"
	grep -q 'at \\x1b\[31mthird' "$T/err.$n" "$T/inspect.$n" || fail "the control characters are not escaped"
	! grep -q "$(printf '\033')" "$T/err.$n" "$T/inspect.$n" "$T/why.$n" || fail "a raw terminal sequence was printed"
	# A coordinator that published and printed its headline, then was
	# SIGKILLed at the expiry (held at the fault point "run dir end", after
	# it printed): jig run's first line is the headline, printed once, and
	# the outer command says the packet was published before (decisions
	# 256, 295). The outer command stops at the same point after the kill.
	export JIG_FAULT_STOP="run dir end" JIG_FAULT_LOG="$T/fault.log"
	start 3 fail trace --expiry 25s
	unset JIG_FAULT_STOP JIG_FAULT_LOG
	i=0; until [ "$(grep -c '^run dir end ' "$T/fault.log" 2>/dev/null)" -ge 2 ]; do
		i=$((i+1)); [ $i -lt 1500 ] || { cat "$T/err.3" "$T/fault.log"; fail "the coordinator and the outer command were not held"; }; sleep 0.05; done
	kill -CONT "$outer"
	over
	same "first line"
	[ "$(grep -c '^jig: flow fail failed in its own code' "$T/err.$n")" -eq 1 ] || fail "the headline was printed twice"
	grep -q "its packet was published before" "$T/err.$n" || fail "the outer command does not say the packet was published before"
	# jig.read of an undeclared input names the declared ones.
	run 2 fail readsecret
	same 'jig.read\("secret"\): the Flow declares no input "secret"; its inputs: mode'
	# jig run --input of an undeclared name lists the declared ones.
	printf 'x\n' >"$T/m"
	set +e; (cd "$T/p" && "$JIG" run fail --input mode="$T/m" --input other="$T/m" --output "$T/pkt.x") 2>"$T/err.x"; rc=$?; set -e
	cat "$T/err.x"
	[ "$rc" -eq 2 ] && grep -q 'flow fail declares no input "other"; its inputs (flow.json): mode' "$T/err.x" || fail "--input: no list"
	# Preparation failed (decision 297): refused before the Run, no
	# packet; jig why's first line is jig run's own line, and it names no
	# packet to inspect.
	for bad in "$T/nosuch" "$T"; do
		set +e; (cd "$T/p" && "$JIG" run fail --input mode="$bad" --output "$T/pkt.y") 2>"$T/err.y"; rc=$?; set -e
		(cd "$T/p" && "$JIG" why fail) >"$T/why.y" 2>&1 || { cat "$T/why.y"; fail "jig why after a refusal"; }
		r=$(head -1 "$T/err.y" | sed 's/^jig: //'); w=$(head -1 "$T/why.y")
		printf 'exit %s\nrun: %s\nwhy: %s\n' "$rc" "$r" "$w"
		[ "$rc" -ne 0 ] && [ -n "$r" ] && [ "$r" = "$w" ] || fail "preparation: jig why's first line is not jig run's"
		[ ! -e "$T/pkt.y" ] || fail "preparation: a packet"
		! grep -q "jig inspect" "$T/why.y" || fail "preparation: jig why names a packet to inspect"
	done
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
