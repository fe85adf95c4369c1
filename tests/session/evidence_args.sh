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
# jig becomes <prefix>/libexec/jig-evidence (decision 340): found from
# jig's own file, refused when missing or writable by others; one line,
# nothing started.
program() {
	want_rc=$1 pat=$2
	mkdir -p "$T/p/bin" "$T/p/libexec"
	cp "$JIG_TEST_PREFIX/bin/jig" "$T/p/bin/jig"
	cp "$JIG_TEST_PREFIX/libexec/jig-evidence" "$T/p/libexec/jig-evidence"
	chmod -R a+rX "$T/p"
	$3
	set +e
	runuser -u jigtest -- env -C "$T" XDG_STATE_HOME="$T/state" "$T/p/bin/jig" session --evidence >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq "$want_rc" ] || fail "exit $rc, not $want_rc"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$pat" "$T/err" || fail "error does not match /$pat/"
	[ ! -s "$T/out" ] || fail "stdout: $(cat "$T/out")"
	[ ! -e "$T/state" ] || fail "something was started"
}
case_program_missing() { program 3 "libexec/jig-evidence: No such file or directory; jig's installation is incomplete" "rm $T/p/libexec/jig-evidence"; }
case_program_writable() { program 4 "libexec/jig-evidence is not a regular file of root's or jig's owner, writable by no one else" "chmod 777 $T/p/libexec/jig-evidence"; }
# The program itself, run by hand: it is jig session --evidence's only.
case_program_alone() {
	set +e
	runuser -u jigtest -- env -C "$T" XDG_STATE_HOME="$T/state" "$JIG_TEST_PREFIX/libexec/jig-evidence" --dry-run >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q 'jig-evidence is run by `jig session --evidence`' "$T/err" || fail "exit $rc"
}
"case_$1"
