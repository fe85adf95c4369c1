#!/bin/sh
# The docs' own checks (issue 33), plain lane; each case_* is one ctest
# (docs.<case>). They read files only.
set -eu
: "${JIG_SOURCE:?}" "${JIG_BUILD:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }

# docs/requirements.md: every REQUIREMENTS.md ID has one row and every
# test it cites exists (scripts/requirements.sh).
case_requirements_map() {
	sh "$JIG_SOURCE/scripts/requirements.sh" "$JIG_BUILD"
}

# The check fails, naming what is wrong: a test name that does not exist,
# a glob matching nothing, a missing row, a row twice, a "proven" row
# without a test, a "proven" row whose own note says otherwise (issue 47),
# and a shipped ID list older than REQUIREMENTS.md.
case_requirements_map_catches() {
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	sed -e 's/`sandbox.setuid_copy`/`sandbox.no_such_case`/' \
		-e 's/`policy.refuse_root`/`vm.nosuch_*`/' \
		-e '/^| R-C05 |/d' \
		-e '/^| R-C06 |/p' \
		-e 's/^| R-C09 | \(.*\) | proven | .* |$/| R-C09 | \1 | proven | — |/' \
		-e 's/^| R-C10 | \(.*\) | proven | \(.*\) |$/| R-C10 | \1 | in progress | \2 |/' \
		-e 's/^| R-C11 | \(.*\) | proven | \(.*\) |$/| R-C11 | \1 | proven (the real client is not exercised) | \2 |/' \
		"$JIG_SOURCE/docs/requirements.md" >"$t/map.md"
	{ cat "$JIG_SOURCE/docs/requirement-ids.txt"; echo "- R-Z99 A promise added upstream after the copy."; } >"$t/upstream.md"
	if JIG_REQUIREMENTS_MAP="$t/map.md" JIG_REQUIREMENTS_UPSTREAM="$t/upstream.md" sh "$JIG_SOURCE/scripts/requirements.sh" "$JIG_BUILD" 2>"$t/err" >/dev/null; then
		fail "the check passed a broken map"
	fi
	cat "$t/err"
	grep -q '`sandbox.no_such_case`.*is not a test' "$t/err" || fail "an unknown test not named"
	grep -q "\`vm.nosuch_\*\`" "$t/err" || fail "a glob matching nothing not named"
	grep -q 'R-C05.*no row' "$t/err" || fail "a missing row not named"
	grep -q 'R-C06 has more than one row' "$t/err" || fail "a row twice not named"
	grep -q 'R-C09 is "proven" but names no test' "$t/err" || fail "a proven row without a test not named"
	grep -q 'R-C10 is still "in progress"' "$t/err" || fail "a row in progress not named"
	grep -q 'R-C11 is "proven" but its own words say "not exercised"' "$t/err" || fail "a proven row contradicted by its note not named"
	grep -q 'R-Z99 .* is missing from .*requirement-ids.txt' "$t/err" || fail "a stale ID list not named"
}

"case_$1"
echo "PASS: $1"
