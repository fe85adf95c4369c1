#!/bin/sh
# A jig run that proves instead of rebuilding (issue 36 item 2, decision
# 179), inside the supported-host VM:
#   tests/vm/run --timeout 1800 -- sh bench/memo.sh build [RUNS]
# One interleaved run (bench/interleave.py, the guest's drift on every
# command alike) of: the bare `bwrap ... bun` command of bench/flow.sh (the
# baseline of the ratios), `jig run` of the admitted trivial Flow with its
# remembered admission, and the same `jig run` in a second copy of the
# project whose memo is blocked (.jig/admission-memo.json is a directory:
# every Run derives the Plan as before decision 179, plus the key's few
# reads). Same binary, same snapshot; jig runs from a copy on the guest's
# tmpfs (see bench/scope.sh).
set -eu
B=$(cd "${1:-build}" && pwd)
runs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
bench_prefix "$B"
for p in pm pd; do
	mkdir -p "$T/$p/hello"
	echo '{"format":"jig-project/1","flows":{"hello":"hello"}}' >"$T/$p/jig.json"
	echo '{"format":"jig-flow/1","name":"hello","entry":"main.js","inputs":[],"outputs":["hello.txt"]}' >"$T/$p/hello/flow.json"
	printf '%s\n' 'export default (jig) => jig.write("hello.txt", "hello world");' >"$T/$p/hello/main.js"
	(cd "$T/$p" && "$JIG" review --yes >/dev/null)
done
rm "$T/pd/.jig/admission-memo.json" && mkdir "$T/pd/.jig/admission-memo.json"
bare="$bench_ns --ro-bind $SNAP/libexec/bun /.jig/bun --ro-bind $SNAP/libexec/runtime /.jig/runtime \
 --ro-bind $T/pm/hello /flow --ro-bind /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu --ro-bind /usr/lib64 /usr/lib64 \
 --symlink usr/lib /lib --symlink usr/lib64 /lib64 --size 16777216 --tmpfs /output --size 67108864 --tmpfs /scratch \
 --remount-ro / --chdir /scratch --setenv HOME /scratch -- /.jig/bun /.jig/runtime/boot.js main.js"
run() { echo "cd $T/$1 && { chmod -R u+w $T/out$1 2>/dev/null; rm -rf $T/out$1; } && $JIG run hello --output $T/out$1 >/dev/null 2>&1"; }
for p in pm pd; do sh -c "$(run $p)" || { echo "jig run in $p failed"; exit 1; }; done
jq -r '"remembered project: \(.admission); blocked project: "' "$T/pm/.jig/runs/hello.json" | tr -d '\n'
jq -r '"\(.admission) (\(.admission_why))"' "$T/pd/.jig/runs/hello.json"
echo "== jig run (bare = bwrap+bun; remembered; derived)"
python3 "$here/interleave.py" "$runs" 2 shell=: "bare=$bare 3>/dev/null" "remembered=$(run pm)" "derived=$(run pd)"
