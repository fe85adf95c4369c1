#!/bin/sh
# The rooms of host/ (issue 32, docs/architecture.md): the room graph the
# includes draw and the headers' guards, checked on the sources, plain
# lane. Each case_* is one ctest (layout.<case>).
set -eu
: "${JIG_SOURCE:?}"
cd "$JIG_SOURCE"
fail() { echo "FAIL: $*" >&2; exit 1; }

# No include cycle between rooms; every arrow is in architecture.md's table.
case_room_graph() {
	sh scripts/rooms.sh || fail "scripts/rooms.sh refused the room graph of host/"
}

# The check fires: on a temporary tree with a cycle, with an arrow the
# table does not allow, with a room the table lacks; and passes a clean one.
case_room_graph_fires() {
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/host/a" "$t/host/b" "$t/host/c" "$t/docs"
	table() {
		printf '| room | job | may use |\n| --- | --- | --- |\n' >"$t/docs/architecture.md"
		printf '| `host/a/` | a | %s |\n| `host/b/` | b | %s |\n| `host/c/` | c | — |\n' "$1" "$2" >>"$t/docs/architecture.md"
	}
	printf '#include "b/b.h"\n#include "a/own.h"\n' >"$t/host/a/a.c"
	printf '#include "../c/c.h"\n' >"$t/host/b/b.h"
	table '`b`' '`c`'
	out=$(sh scripts/rooms.sh "$t" 2>&1) || fail "a clean tree refused: $out"
	printf '#include "a/a.h"\n' >"$t/host/b/b.c"
	table '`b`' '`a`, `c`'
	out=$(sh scripts/rooms.sh "$t" 2>&1) && fail "a cycle a -> b -> a passed: $out"
	echo "$out" | grep -q "a cycle between rooms" || fail "the cycle was refused for another reason: $out"
	table '`b`' '`c`'
	out=$(sh scripts/rooms.sh "$t" 2>&1) && fail "an arrow outside the table passed: $out"
	echo "$out" | grep -q 'b -> a (host/b/b.c) is not in b' || fail "the arrow was refused for another reason: $out"
	rm "$t/host/b/b.c"
	mkdir "$t/host/d"
	out=$(sh scripts/rooms.sh "$t" 2>&1) && fail "a room without a row passed: $out"
	echo "$out" | grep -q "without a row.*d" || fail "the missing row was refused for another reason: $out"
	rmdir "$t/host/d"
	table '`b`, `a`' '`c`'
	printf '| `host/c/` | c | `a` |\n' >>"$t/docs/architecture.md"
	out=$(sh scripts/rooms.sh "$t" 2>&1) && fail "a table with a cycle passed: $out"
	echo "$out" | grep -q "a cycle between rooms in docs/architecture.md" || fail "the table's cycle was refused for another reason: $out"
}

# Every header of host/ is guarded by JIG_<ROOM>_<FILE>_H (docs/conventions.md).
case_header_guards() {
	bad=$(for h in $(find host -name '*.h' | sort); do
		g=$(echo "$h" | sed 's#^host/##; s#\.h$##' | tr 'a-z/' 'A-Z_')
		g="JIG_${g}_H"
		grep -q "^#ifndef $g\$" "$h" && grep -q "^#define $g\$" "$h" || echo "$h (want $g)"
	done)
	[ -z "$bad" ] || fail "headers without their guard: $bad"
}

"case_$1"
echo "PASS: $1"
