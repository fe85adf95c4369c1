#!/bin/sh
# Before/after pairs for a change that must not cost anything (issue 32),
# inside the supported-host VM, both installs copied to the guest's tmpfs:
#   tests/vm/run --timeout 1800 -- sh bench/ab.sh BEFORE_PREFIX AFTER_PREFIX [RUNS]
# A PREFIX is an installed jig (ctest's build/test-prefix, copied aside
# before the change). The two are interleaved run by run (bench/interleave.py)
# so the guest's drift falls on both alike: `jig scope run` of /bin/true,
# `jig run` of an admitted trivial Flow, and an unchanged re-review.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
runs=${3:-20}
T=$(mktemp -d)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
bench_policy "$T/p.json"
for side in a b; do
	if [ $side = a ]; then src=$1; else src=$2; fi
	cp -a "$src" "$T/$side"
	mkdir -p "$T/p$side/hello"
	echo '{"format":"jig-project/1","flows":{"hello":"hello"}}' >"$T/p$side/jig.json"
	echo '{"format":"jig-flow/1","name":"hello","entry":"main.js","inputs":[],"outputs":["hello.txt"]}' >"$T/p$side/hello/flow.json"
	printf '%s\n' 'export default (jig) => jig.write("hello.txt", "hello world");' >"$T/p$side/hello/main.js"
	(cd "$T/p$side" && "$T/$side/bin/jig" review --yes >/dev/null)
done
run() { echo "cd $T/p$1 && { chmod -R u+w $T/out$1 2>/dev/null; rm -rf $T/out$1; } && $T/$1/bin/jig run hello --output $T/out$1 >/dev/null 2>&1"; }
scope() { echo "$T/$1/bin/jig scope run $T/p.json -- /bin/true"; }
review() { echo "cd $T/p$1 && $T/$1/bin/jig review --yes >/dev/null"; }
for what in scope run review; do
	echo "== $what (before = a, after = b)"
	python3 "$here/interleave.py" "$runs" 2 shell=: "a=$($what a)" "b=$($what b)"
done
