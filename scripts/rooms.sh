#!/bin/sh
# The room graph of the trusted host (issue 32, docs/architecture.md):
# every directory of host/ is a room; an arrow A -> B is an
# `#include "B/..."` (or "../B/...") in a file of host/A/. Fails when
#   - a room of host/ has no row in docs/architecture.md's table, or a row
#     names no room;
#   - an arrow of the code is not in its room's "may use" column (the
#     backquoted room names of the row's last cell);
#   - the arrows of the code, or the table's, contain a cycle.
# The table is the one statement of the allowed graph: the doc and the
# code cannot drift. Usage: scripts/rooms.sh [SOURCE_ROOT] (default: this
# checkout); prints the arrows with -v.
set -eu
verbose=
[ "${1:-}" = -v ] && { verbose=1; shift; }
root=${1:-$(dirname "$0")/..}
cd "$root"
doc=docs/architecture.md
fail() { echo "rooms: $*" >&2; exit 1; }
[ -d host ] && [ -f "$doc" ] || fail "no host/ or $doc under $root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ls -d host/*/ | sed 's#^host/##; s#/$##' | sort >"$tmp/rooms"
# The table: "| `host/ROOM/` | job | may use |" -> "ROOM USED" pairs.
awk -F'|' '$2 ~ /^ *`host\/[a-z_]+\/` *$/ {
	room = $2; gsub(/[ `]|host\//, "", room); sub(/\/$/, "", room)
	print room > "'"$tmp/rows"'"
	n = split($(NF - 1), w, "`")
	for (i = 2; i <= n; i += 2) print room, w[i]
}' "$doc" | sort -u >"$tmp/allowed"
[ -s "$tmp/rows" ] || fail "$doc has no table of rooms (| \`host/ROOM/\` | job | may use |)"
sort -u "$tmp/rows" >"$tmp/rows.s"
missing=$(comm -23 "$tmp/rooms" "$tmp/rows.s" | tr '\n' ' ')
[ -z "$missing" ] || fail "rooms of host/ without a row in $doc: $missing"
extra=$(comm -13 "$tmp/rooms" "$tmp/rows.s" | tr '\n' ' ')
[ -z "$extra" ] || fail "$doc has rows for rooms host/ does not have: $extra"
bad=$(awk '{print $2}' "$tmp/allowed" | sort -u | comm -23 - "$tmp/rooms" | tr '\n' ' ')
[ -z "$bad" ] || fail "$doc's \"may use\" column names rooms host/ does not have: $bad"

# The code's arrows, with one file that draws each (a `#include "x.h"`
# without a directory is the file's own room).
find host -type f \( -name '*.c' -o -name '*.h' \) | sort | xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
	awk -v rooms="$tmp/rooms" 'BEGIN { while ((getline r < rooms) > 0) known[r] = 1 }
	{
		f = $0; sub(/:.*/, "", f); split(f, p, "/"); from = p[2]
		inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
		while (inc ~ /^\.\.\//) sub(/^\.\.\//, "", inc)
		if (inc !~ /\//) next
		to = inc; sub(/\/.*/, "", to)
		if (to != from && (to in known)) print from, to, f
	}' | sort -u -k1,2 >"$tmp/arrows"
[ -n "$verbose" ] && awk '{print $1 " -> " $2}' "$tmp/arrows"

out=$(awk '{print $1, $2}' "$tmp/arrows" | sort -u | comm -23 - "$tmp/allowed")
if [ -n "$out" ]; then
	echo "$out" | while read -r a b; do
		echo "rooms: $a -> $b ($(awk -v a="$a" -v b="$b" '$1 == a && $2 == b {print $3; exit}' "$tmp/arrows")) is not in $a's \"may use\" column of $doc" >&2
	done
	exit 1
fi
# tsort reports a loop on stderr (and, depending on the implementation,
# may still exit 0): any output there is a cycle.
for g in arrows allowed; do
	awk '{print $1, $2}' "$tmp/$g" | tsort >/dev/null 2>"$tmp/loop" || true
	what=$([ $g = arrows ] && echo "the includes of host/" || echo "$doc's table")
	[ ! -s "$tmp/loop" ] || fail "a cycle between rooms in $what: $(grep -v 'input contains a loop' "$tmp/loop" | sed 's/^tsort: //' | tr '\n' ' ')"
done
echo "rooms: $(wc -l <"$tmp/rooms") rooms, $(wc -l <"$tmp/arrows") arrows, no cycle, every arrow allowed by $doc"
