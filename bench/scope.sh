#!/bin/sh
# Scope launch cost (issue 4, item 11), run inside the supported-host VM:
#   tests/vm/run --timeout 900 -- sh bench/scope.sh build
# Paired hyperfine runs: jig scope run of /bin/true vs the same bare bwrap
# command (same namespaces, binds and flags, no cgroup, filter or launcher),
# and a Bun hello both ways. Target: scope launch <= 1.3x bare bwrap.
set -eu
B=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/common.sh"
BUN=$B/bun/bun
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The VM's root file system is the host's over 9p, where every open and stat
# is a round trip to the host; jig checks ownership and modes of each path
# component of its snapshot, so it would pay for 9p far more than bwrap.
# Run jig from a copy on the guest's tmpfs (/tmp), as a local disk would
# serve it; the copy belongs to the user, who then is the installer.
cp -a "$B/test-prefix" "$T/prefix"
JIG=${JIG:-$T/prefix/bin/jig}
bench_policy "$T/p.json" "$BUN"
bare="$bench_ns --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
 --size 16777216 --tmpfs /scratch --ro-bind /usr /usr --ro-bind $BUN /bun --remount-ro / --chdir /scratch \
 --setenv PATH /usr/bin --setenv HOME /scratch --setenv TMPDIR /scratch --"
hyperfine -N --warmup 3 --runs 30 --export-json "$T/true.json" \
	"$bare /bin/true" "$JIG scope run $T/p.json -- /bin/true"
hyperfine -N --warmup 2 --runs 15 --export-json "$T/bun.json" \
	"$bare /bun -e 'console.log(1)'" "$JIG scope run $T/p.json -- /bun -e 'console.log(1)'"
for f in true bun; do
	jq -r --arg f "$f" '.results | "\($f): bare bwrap median \(.[0].median*1000|floor) ms, jig scope median \(.[1].median*1000|floor) ms, ratio \((.[1].median/.[0].median)*100|floor/100)"' "$T/$f.json"
done
