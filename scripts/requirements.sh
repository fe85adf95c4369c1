#!/bin/sh
# Checks docs/requirements.md, the map of requirement IDs to the tests
# that prove them (issue 33). Plain-lane ctest docs.requirements_map.
#
#   scripts/requirements.sh [BUILD_DIR]
#
# - every ID of REQUIREMENTS.md has exactly one map row ("| R-X00 | ..."),
#   and every map row is an ID REQUIREMENTS.md has. REQUIREMENTS.md is
#   $JIG_REQUIREMENTS, else ../shared/design/REQUIREMENTS.md beside the
#   checkout ($JIG_REQUIREMENTS_MAP replaces the map, for the tests);
#   without it (a clone alone) the rows are checked against
#   themselves: no ID twice and no gap in a letter's numbers, said so;
# - every test name the file cites (`prefix.name`, prefix being one of
#   ctest's, `*` matching any run of characters) is a test of BUILD_DIR's
#   `ctest -N` (default: build);
# - a row whose status is "proven" names at least one test;
# - no row is still "in progress" (issue 33 filled them in).
# One line per finding; exit 1 if there is any.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
map=${JIG_REQUIREMENTS_MAP:-docs/requirements.md}
req=${JIG_REQUIREMENTS:-../shared/design/REQUIREMENTS.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "requirements.sh: $*" >&2; bad=1; }

[ -f "$map" ] || { echo "requirements.sh: no $map" >&2; exit 1; }
(cd "$build" && ctest -N) | sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\).*/\1/p' | sort -u >"$tmp/tests"
[ -s "$tmp/tests" ] || { echo "requirements.sh: ctest -N in $build lists no test (configure the build first)" >&2; exit 1; }
sed -n 's/^\([a-z][a-z0-9_-]*\)\..*/\1/p' "$tmp/tests" | sort -u >"$tmp/prefixes"

# The map's rows: "| R-X00 | promise | status | tests |".
grep -E '^\| R-[A-Z][0-9]{2} \|' "$map" >"$tmp/rows" || true
cut -d'|' -f2 "$tmp/rows" | tr -d ' ' >"$tmp/row_ids"
sort "$tmp/row_ids" | uniq -d | while read -r id; do
	echo "requirements.sh: $id has more than one row in $map" >&2
	echo x >>"$tmp/bad"
done
if [ -f "$req" ]; then
	sed -n 's/^- \(R-[A-Z][0-9][0-9]\) .*/\1/p' "$req" | sort -u >"$tmp/req_ids"
	[ -s "$tmp/req_ids" ] || fail "no IDs found in $req"
	sort -u "$tmp/row_ids" >"$tmp/row_ids_sorted"
	for id in $(comm -23 "$tmp/req_ids" "$tmp/row_ids_sorted"); do fail "$id (in $req) has no row in $map"; done
	for id in $(comm -13 "$tmp/req_ids" "$tmp/row_ids_sorted"); do fail "$id has a row in $map but is not in $req"; done
	echo "requirements.sh: $(wc -l <"$tmp/req_ids") IDs of $req, each with one row"
else
	echo "requirements.sh: $req not found; checking the rows against themselves (no ID twice, no gap)"
	for letter in $(sed 's/^R-\([A-Z]\).*/\1/' "$tmp/row_ids" | sort -u); do
		max=$(grep "^R-$letter" "$tmp/row_ids" | sed 's/^R-.//' | sort -n | tail -1)
		n=1
		while [ "$n" -le "${max#0}" ]; do
			id=$(printf 'R-%s%02d' "$letter" "$n")
			grep -qx "$id" "$tmp/row_ids" || fail "$id has no row in $map (R-$letter goes up to $max)"
			n=$((n + 1))
		done
	done
fi
[ ! -f "$tmp/bad" ] || bad=1

# Every test name cited anywhere in the file exists (one awk: the tests of
# ctest -N, then the cited names whose prefix is one of theirs).
grep -o '`[^`]*`' "$map" | tr -d '`' | sort -u |
	grep -E '^[a-z][a-z0-9_-]*\.[a-z0-9_*]+$' |
	grep -vE '\.(json|js|mjs|ts|md|sh|py|c|h|txt|toml|lock|log|png)$' >"$tmp/cited" || true
awk -v map="$map" -v out="$tmp/count" '
	FNR == NR { test[$0] = 1; p = $0; sub(/\..*/, "", p); prefix[p] = 1; next }
	{
		p = $0; sub(/\..*/, "", p)
		if (!(p in prefix)) next
		n++
		if (index($0, "*")) {
			re = $0; gsub(/\./, "\\.", re); gsub(/\*/, ".*", re); re = "^" re "$"
			hit = 0
			for (t in test) if (t ~ re) { hit = 1; break }
			if (!hit) { print "requirements.sh: `" $0 "` (cited in " map ") matches no test of ctest -N" > "/dev/stderr"; bad = 1 }
		} else if (!($0 in test)) {
			print "requirements.sh: `" $0 "` (cited in " map ") is not a test of ctest -N" > "/dev/stderr"; bad = 1
		}
	}
	END { print n + 0 > out; exit bad }' "$tmp/tests" "$tmp/cited" || bad=1
echo "requirements.sh: $(cat "$tmp/count") test names cited, checked against $(wc -l <"$tmp/tests") tests of ctest -N"

# A "proven" row names a test; no row is still waiting.
awk -F'|' '
	{ id = $2; gsub(/ /, "", id); tests = ""; for (i = 5; i <= NF; i++) tests = tests $i }
	$4 ~ /^ proven/ && tests !~ /`/ { print "requirements.sh: " id " is \"proven\" but names no test" > "/dev/stderr"; bad = 1 }
	$4 ~ /in progress/ { print "requirements.sh: " id " is still \"in progress\"" > "/dev/stderr"; bad = 1 }
	END { exit bad }' "$tmp/rows" || bad=1
exit "$bad"
