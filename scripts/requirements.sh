#!/bin/sh
# Checks docs/requirements.md, the map of requirement IDs to the tests
# that prove them (issue 33). Plain-lane ctest docs.requirements_map.
#
#   scripts/requirements.sh [BUILD_DIR]
#
# - every ID of the list has exactly one map row ("| R-X00 | ..."), and
#   every map row is an ID the list has. The list is docs/requirement-ids.txt,
#   shipped with the project ($JIG_REQUIREMENTS replaces it,
#   $JIG_REQUIREMENTS_MAP the map, for the tests); where
#   ../shared/design/REQUIREMENTS.md is beside the checkout
#   ($JIG_REQUIREMENTS_UPSTREAM for the tests), the shipped list must hold
#   exactly its IDs (else it is out of date);
# - every test name the file cites (`prefix.name`, prefix being one of
#   ctest's, `*` matching any run of characters) is a test of BUILD_DIR's
#   `ctest -N` (default: build);
# - a row whose status is "proven" names at least one test, and its own
#   words do not say otherwise ("not done", "fake agent", "by
#   construction", "untested", ...: then it is "partly");
# - no row is still "in progress" (issue 33 filled them in).
# One line per finding; exit 1 if there is any.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
map=${JIG_REQUIREMENTS_MAP:-docs/requirements.md}
req=${JIG_REQUIREMENTS:-docs/requirement-ids.txt}
upstream=${JIG_REQUIREMENTS_UPSTREAM:-../shared/design/REQUIREMENTS.md}
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
[ -f "$req" ] || { echo "requirements.sh: no $req" >&2; exit 1; }
sed -n 's/^- \(R-[A-Z][0-9][0-9]\) .*/\1/p' "$req" | sort -u >"$tmp/req_ids"
[ -s "$tmp/req_ids" ] || fail "no IDs found in $req"
sort -u "$tmp/row_ids" >"$tmp/row_ids_sorted"
for id in $(comm -23 "$tmp/req_ids" "$tmp/row_ids_sorted"); do fail "$id (in $req) has no row in $map"; done
for id in $(comm -13 "$tmp/req_ids" "$tmp/row_ids_sorted"); do fail "$id has a row in $map but is not in $req"; done
echo "requirements.sh: $(wc -l <"$tmp/req_ids") IDs of $req, each with one row"
if [ -z "${JIG_REQUIREMENTS:-}" ] && [ -f "$upstream" ]; then
	sed -n 's/^- \(R-[A-Z][0-9][0-9]\) .*/\1/p' "$upstream" | sort -u >"$tmp/up_ids"
	for id in $(comm -13 "$tmp/req_ids" "$tmp/up_ids"); do fail "$id (in $upstream) is missing from $req: copy the list again"; done
	for id in $(comm -23 "$tmp/req_ids" "$tmp/up_ids"); do fail "$id (in $req) is no longer in $upstream: copy the list again"; done
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
	$4 ~ /^ proven/ {
		st = tolower($4)
		n = split("not done|not exercised|not built|not yet|not proven|not tested|untested|not measured|not met|fake agent|fake client|by construction|follow from the shape|no test", w, "|")
		for (i = 1; i <= n; i++) if (index(st, w[i])) {
			print "requirements.sh: " id " is \"proven\" but its own words say \"" w[i] "\": make it \"partly: ...\"" > "/dev/stderr"; bad = 1; break
		}
	}
	END { exit bad }' "$tmp/rows" || bad=1
exit "$bad"
