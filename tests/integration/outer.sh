#!/bin/sh
# The outer command of jig run (host/run/outer.c) without a pidfd, plain
# lane (issue 32): with the test build's JIG_FAULT_FAIL=pidfd_open
# (host/util/fault.h) the outer command waits for its coordinator by
# polling, and still relays a stop signal. This host refuses Flows, so the
# coordinator ends in admission; that is all these cases need of it. Each
# case_* is one ctest (outer.<case>); jig runs as the unprivileged user.
# Requirements: R-L05 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-outer.XXXXXX)
chmod 755 "$T"
mkdir "$T/log" && chown "$USER_NAME" "$T/log"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# jig ENV... -- ARGS...: jig as the unprivileged user, at most 60 s.
jig() {
	env=""
	while [ "$1" != -- ]; do env="$env $1"; shift; done
	shift
	# shellcheck disable=SC2086
	timeout 60 runuser -u "$USER_NAME" -- env $env "$JIG_TEST_PREFIX/bin/jig" "$@"
}

case_no_pidfd_run_finishes() {
	# Without the fault and with it: the same refusal, the same exit.
	set +e
	jig -- run f --output "$T/o" --project "$T/nope" --json >"$T/out0" 2>"$T/err0"
	rc0=$?
	jig JIG_FAULT_FAIL=pidfd_open -- run f --output "$T/o" --project "$T/nope" --json >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -ne 124 ] || fail "the outer command did not see its coordinator end"
	[ "$rc" -eq "$rc0" ] && [ "$rc" -ne 0 ] || fail "exit $rc, without the fault $rc0"
	jq -e --argjson rc "$rc" '.schema == "jig-error/1" and .exit == $rc' "$T/out" >/dev/null || fail "not jig-error/1: $(cat "$T/out")"
}

case_no_pidfd_signal_relayed() {
	# The coordinator stops at the fault point "admitted"; SIGTERM to the
	# outer command reaches it (pending: a coordinator blocks the stop
	# signals and takes them as a cancellation); resumed, it ends and
	# the outer command with it.
	jig JIG_FAULT_FAIL=pidfd_open JIG_FAULT_STOP=admitted JIG_FAULT_LOG="$T/log/fault" -- \
		run f --output "$T/o" --project "$T/nope" >"$T/out" 2>"$T/err" &
	bg=$!
	i=0; until grep -q "^admitted " "$T/log/fault" 2>/dev/null; do
		i=$((i+1)); [ $i -lt 1500 ] || fail "stage admitted was not reached"; sleep 0.02; done
	coord=$(sed -n 's/^admitted //p' "$T/log/fault")
	i=0; until [ "$(ps -o stat= -p "$coord" | cut -c1)" = T ]; do i=$((i+1)); [ $i -lt 500 ] || fail "not stopped"; sleep 0.01; done
	outer=$(ps -o ppid= -p "$coord" | tr -d ' ')
	kill -TERM "$outer"
	# SIGTERM is signal 15: bit 14 of the shared pending set.
	i=0; until [ $(( 0x$(sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$coord/status") & 0x4000 )) -ne 0 ]; do
		i=$((i+1)); [ $i -lt 500 ] || { kill -CONT "$coord"; fail "SIGTERM was not relayed to the coordinator"; }; sleep 0.02; done
	kill -CONT "$coord"
	set +e; wait "$bg"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -ne 124 ] || fail "the outer command did not end"
	! kill -0 "$outer" 2>/dev/null || fail "the outer command is still there"
}

"case_$1"
echo "PASS: $1"
