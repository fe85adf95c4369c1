#!/bin/sh
# ctest's bench.scale_native (plain lane) and bench.scale_vm (the
# supported-host lane): bench/scale.sh --short, its rows appended to
# BUILD/bench-history/scale.csv (never the committed bench/history), the
# PNG of every row there drawn to BUILD/bench-history/bench-history.png and
# checked to be a non-empty PNG. Each case stands alone: whichever runs
# last draws both parts' rows (decision 182).
#   sh bench/scale-ci.sh native|vm BUILD
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$2" && pwd)
H=$B/bench-history
mkdir -p "$H"
export JIG_SCALE_VM="$S/tests/supported-host.sh" JIG_SCALE_VM_TIMEOUT="${JIG_SCALE_VM_TIMEOUT:-400}"
sh "$S/bench/scale.sh" --short --part "$1" --csv "$H/scale.csv" --png "$H/bench-history.png" "$B"
test -s "$H/bench-history.png" || { echo "scale-ci: no PNG at $H/bench-history.png" >&2; exit 1; }
[ "$(head -c 8 "$H/bench-history.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	{ echo "scale-ci: $H/bench-history.png is not a PNG" >&2; exit 1; }
n=$(grep -c ",short,$([ "$1" = vm ] && echo guest || echo native)," "$H/scale.csv")
echo "scale-ci: $n short-mode $1 rows in $H/scale.csv; PNG $(stat -c %s "$H/bench-history.png") bytes"
