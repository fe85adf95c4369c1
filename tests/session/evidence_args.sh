#!/bin/sh
# jig session --evidence's command line (issue 34; docs/session-evidence.md),
# plain lane: each refusal one line, exit 2, nothing started. Each case_* is
# one ctest (session_evidence_args.<case>); jig runs as the user jigtest.
set -eu
: "${JIG_TEST_PREFIX:?}"
T=$(mktemp -d /var/tmp/jig-evargs.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
refused() {
	pat=$1
	shift
	set +e
	runuser -u jigtest -- env -C "$T" XDG_STATE_HOME="$T/state" "$JIG_TEST_PREFIX/bin/jig" session "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc for: $*"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$pat" "$T/err" || fail "error does not match /$pat/"
	[ ! -s "$T/out" ] || fail "stdout: $(cat "$T/out")"
	[ ! -e "$T/state" ] || fail "something was started"
}
case_out_without_evidence() { refused 'without --evidence it is refused' --out "$T/s.json"; }
case_out_twice() { refused '--out is given twice' --evidence --out "$T/a" --out "$T/b"; }
case_out_missing_file() { refused '--out needs a file' --evidence --out; }
case_agent_args() { refused 'agent arguments after "--" are refused' --evidence -- --verbose; }
"case_$1"
