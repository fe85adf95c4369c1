#!/bin/sh
# Benchmarks for docs/performance.md. Run after scripts/setup.sh, as root.
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
T=$(mktemp -d) && chmod 755 "$T" && trap 'rm -rf "$T"' EXIT
mkdir "$T/modules"
cp "$B/testmods/testmod-big.so" "$T/modules/big.so"
chmod -R go-w "$T"
"$B/jig-snapshot" create --dir "$T" --id bench --sequence 1 --module testmod:sandbox:modules/big.so >/dev/null
"$B/jig-snapshot" sign --dir "$T" --key tests/fixtures/keys/test.key >/dev/null
"$B/bench/bench_load" "$T" testmod 500
# As jig's commands load it (cached verification, decision 85), as the user:
mkdir "$T/home" && chown jigtest "$T/home"
runuser -u jigtest -- env HOME="$T/home" XDG_CACHE_HOME= "$B/bench/bench_load" "$T" testmod 500 cached
P=${PREFIX:-/opt/jig}
hyperfine --warmup 5 --runs 50 -i \
	"runuser -u jigtest -- $P/bin/jig modules verify" \
	"runuser -u jigtest -- $P/bin/jig host check"
