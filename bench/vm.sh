#!/bin/sh
# Issue 14's paired launch benchmarks, one after another in one VM (the
# supported-host lane's guest, TCG), after scripts/setup.sh and ctest's
# install-prefix:
#   tests/vm/run --timeout 2400 -- sh bench/vm.sh build
# scope launch of /bin/true (and a Bun hello) vs the same bare bwrap
# (bench/scope.sh), jig run of a trivial Flow vs bare bwrap + bun
# (bench/flow.sh), a Flow making 20 HTTP requests vs 20 bare curls
# (bench/http.sh). Figures in docs/performance.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for b in scope flow http; do
	echo "=== bench/$b.sh"
	sh "$here/$b.sh" "${1:-build}"
done
