#!/bin/sh
# jig init end to end (issue 35, must-show item 1), in the supported-host
# lane: a new project in an empty directory reviews and its Flow runs
# without an edit, by the very commands jig init prints. The refusals and
# --flow are plain-lane cases (tests/integration/init.sh).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
T=$(mktemp -d /tmp/jig-init.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
PATH="$JIG_TEST_PREFIX/bin:$PATH"

case_init_review_run() {
	# Issue 35 item 1: init, then review --yes and the printed run, unedited.
	mkdir "$T/empty"
	jig init "$T/empty" >"$T/init.out"
	cat "$T/init.out"
	cd "$T/empty"
	jig review --yes >"$T/review.out" || { cat "$T/review.out"; fail "review failed"; }
	grep -q "^admitted Plan" "$T/review.out" || fail "not admitted"
	cmd=$(sed -n 's/^  \(jig run .*\)$/\1/p' "$T/init.out")
	[ -n "$cmd" ] || fail "jig init printed no run command"
	echo "--- $cmd"
	set +e; sh -c "$cmd" </dev/null; rc=$?; set -e
	[ "$rc" -eq 0 ] || fail "the printed run exited $rc"
	jq -e '.status == "succeeded" and .flow == "hello" and ([.outputs[].path] == ["summary.md"]) and (.logs | length) == 1' \
		hello-out/record.json >/dev/null || fail "record: $(jq -c '{status, error, logs}' hello-out/record.json)"
	cat hello-out/files/summary.md
	grep -q "^3 lines, [0-9]* words\.$" hello-out/files/summary.md || fail "summary.md"
	jig inspect hello-out >"$T/inspect.out" || { cat "$T/inspect.out"; fail "inspect failed"; }
}

"case_$1"
