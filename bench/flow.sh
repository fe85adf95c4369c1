#!/bin/sh
# Flow run cost (issue 5, item 10), inside the supported-host VM:
#   tests/vm/run --timeout 900 -- sh bench/flow.sh build
# Paired hyperfine: `jig run` of an admitted trivial Flow vs the equivalent
# bare `bwrap ... bun` command (same binds and tmpfs, no review check,
# cgroup, filter, launcher, Run/0 or publication); and an unchanged
# re-review. jig runs from a copy on the guest's tmpfs (see bench/scope.sh).
set -eu
B=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/common.sh"
bench_prefix "$B"
mkdir -p "$T/p/hello"
echo '{"format":"jig-project/1","flows":{"hello":"hello"}}' >"$T/p/jig.json"
echo '{"format":"jig-flow/1","name":"hello","entry":"main.js","inputs":[],"outputs":["hello.txt"]}' >"$T/p/hello/flow.json"
printf '%s\n' 'export default (jig) => jig.write("hello.txt", "hello world");' >"$T/p/hello/main.js"
cd "$T/p"
"$JIG" review --yes >/dev/null
bare="$bench_ns --ro-bind $SNAP/libexec/bun /.jig/bun --ro-bind $SNAP/libexec/runtime /.jig/runtime \
 --ro-bind $T/p/hello /flow --ro-bind /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu --ro-bind /usr/lib64 /usr/lib64 \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --size 16777216 --tmpfs /output --size 67108864 --tmpfs /scratch \
 --remount-ro / --chdir /scratch --setenv HOME /scratch -- /.jig/bun /.jig/runtime/boot.js main.js"
sh -c "$bare 3>$T/run0.txt" || { echo "bare run failed: $?"; cat "$T/run0.txt"; }
hyperfine -N --warmup 2 --runs 15 --export-json "$T/run.json" \
	--prepare "sh -c 'chmod -R u+w $T/out 2>/dev/null; rm -rf $T/out; true'" \
	"sh -c '$bare 3>/dev/null'" \
	"sh -c '$JIG run hello --output $T/out'"
hyperfine -N --warmup 2 --runs 15 --export-json "$T/review.json" "$JIG review --yes"
jq -r '.results | "run: bare bwrap+bun median \(.[0].median*1000|floor) ms, jig run median \(.[1].median*1000|floor) ms, ratio \((.[1].median/.[0].median)*100|floor/100)"' "$T/run.json"
jq -r '.results | "unchanged re-review: median \(.[0].median*1000|floor) ms"' "$T/review.json"
