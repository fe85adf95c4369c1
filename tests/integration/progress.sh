#!/bin/sh
# Progress on a terminal (issue 35, util/progress.h), plain lane: jig review
# on a pseudo-terminal (script(1)) shows what it is doing on stderr, each
# status erased before the next and before the Plan; nothing when stderr is
# not a terminal or with --json; jig run's status before its refusal here.
# (jig run's progress with a child and an effect: binding.progress_terminal,
# dependency preparation's: prepare.progress_terminal, in the supported-host
# lane.)
# Each case_* is one ctest (progress.<case>); jig runs as the unprivileged user.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-progress.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
# on_tty ARGS...: jig ARGS in $T/p with stdin, stdout and stderr on a
# pseudo-terminal; what the terminal got in $T/tty, one row per \r or \n
# (the erase, ESC [ K, shown as <K>) in $T/rows.
on_tty() {
	script -qec "cd $T/p && runuser -u $USER_NAME -- $JIG_TEST_PREFIX/bin/jig $*" /dev/null </dev/null >"$T/tty" 2>&1 || true
	tr '\r' '\n' <"$T/tty" | sed 's/\x1b\[K/<K>/g' >"$T/rows"
}
ESC=$(printf '\033')

case_review_terminal() {
	# Capturing (each Flow, then what was captured), verifying the
	# snapshot, building the Plan: each status begins with the erase, is
	# "jig: [ N.Ns] ...", and the Plan begins on an erased row.
	fresh
	on_tty review --yes
	cat "$T/rows"
	for s in "capturing flow csv-report (1 of 3)" "capturing flow service-check (3 of 3)" "verifying the installed snapshot" "building the Plan"; do
		grep -q "^<K>jig: \[ *[0-9]*\.[0-9]s\] $s\$" "$T/rows" || fail "no status \"$s\""
	done
	grep -q "^<K>jig: \[ *[0-9]*\.[0-9]s\] captured 3 Flows: [0-9]* files, [0-9.]* [KM]\{0,1\}i\{0,1\}B\$" "$T/rows" || fail "no line of what was captured"
	grep -q "^<K>Plan [0-9a-f]\{64\}" "$T/rows" || fail "the Plan does not begin on an erased row"
	grep -q "^admitted Plan " "$T/rows" || fail "not admitted"
	! grep -q "^admitted Plan .*<K>\|jig: \[.*Plan [0-9a-f]\{64\}" "$T/rows" || fail "progress mixed into the Plan"
}

case_review_not_terminal() {
	# stderr to a file: no progress at all (stdout on a terminal or not);
	# --json on a terminal: none either, and the JSON is whole.
	fresh
	(cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ] || fail "stderr not a terminal, yet: $(cat "$T/err")"
	! grep -q "$ESC\|jig: \[" "$T/out" || fail "progress on stdout"
	script -qec "cd $T/p && runuser -u $USER_NAME -- $JIG_TEST_PREFIX/bin/jig review --yes 2>$T/err2" /dev/null </dev/null >"$T/tty" 2>&1
	[ ! -s "$T/err2" ] || fail "stdout a terminal, stderr not: progress anyway: $(cat "$T/err2")"
	on_tty review --yes --json
	! grep -q "$ESC\|jig: \[" "$T/tty" || fail "progress with --json: $(cat "$T/rows")"
	tr -d '\r' <"$T/tty" | jq -e '.schema == "jig-review/1" and .admitted' >/dev/null || fail "--json on a terminal is not one jig-review/1 document"
}

case_review_terminal_error() {
	# A refusal on a terminal: the status is erased before the one error
	# line, which starts its own row.
	fresh
	ln -s /etc/passwd "$T/p/csv-report/link"
	on_tty review --yes
	cat "$T/rows"
	grep -q "^<K>jig: flow csv-report: link: is a symbolic link" "$T/rows" || fail "the error does not start on an erased row"
}

case_run_terminal_refused() {
	# jig run on a terminal, refused after its admission check (the
	# packet's parent, root's, is not the user's to write: decision 170):
	# the status of the check, then the refusal on an erased row; --json on
	# a terminal: no progress, only jig-error/1 and the line.
	fresh
	(cd "$T/p" && jig review --yes) >/dev/null
	on_tty run csv-report --input data=$JIG_SOURCE/examples/csv-report/sample.csv --output $T/pkt
	cat "$T/rows"
	grep -q "^<K>jig: \[ *[0-9]*\.[0-9]s\] flow csv-report: checking the project against its admitted Plan\$" "$T/rows" || fail "no status of the admission check"
	grep -q "^<K>jig: --output $T/pkt: its parent directory refused a new entry (Permission denied)" "$T/rows" &&
		[ "$(grep -c "^<K>jig: [^[]" "$T/rows")" -eq 1 ] || fail "the refusal is not one line on an erased row"
	on_tty run csv-report --input data=$JIG_SOURCE/examples/csv-report/sample.csv --output $T/pkt --json
	! grep -q "$ESC\|jig: \[" "$T/tty" || fail "progress with --json: $(cat "$T/rows")"
	tr -d '\r' <"$T/tty" | sed '/^jig: /d' | jq -e '.schema == "jig-error/1"' >/dev/null || fail "--json on a terminal: not jig-error/1"
	[ ! -e "$T/pkt" ] || fail "a packet was published"
}

"case_$1"
echo "PASS: $1"
