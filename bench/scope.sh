#!/bin/sh
# Scope launch cost (issue 4, item 11), run inside the supported-host VM:
#   tests/vm/run --timeout 900 -- sh bench/scope.sh build
# Paired hyperfine runs: jig scope run of /bin/true vs the same bare bwrap
# command (same namespaces, binds and flags, no cgroup, filter or launcher),
# and a Bun hello both ways. Target: scope launch <= 1.3x bare bwrap.
set -eu
B=$(cd "${1:-build}" && pwd)
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
jq -n --arg bun "$BUN" '{
  format: "jig-scope-policy/1", scope: "bench",
  binds: [{source: "/usr", target: "/usr"}, {source: $bun, target: "/bun"}],
  tmpfs: [{target: "/scratch", size_bytes: 16777216}],
  symlinks: [{target: "/bin", link: "usr/bin"}, {target: "/lib", link: "usr/lib"}, {target: "/lib64", link: "usr/lib64"}],
  env: {PATH: "/usr/bin", HOME: "/scratch", TMPDIR: "/scratch"}, cwd: "/scratch", network: "none",
  descriptors: [{source: 1, target: 1}, {source: 2, target: 2}],
  limits: {memory_bytes: 1073741824, tasks: 64, cpu_quota_us: 200000, wall_ms: 60000}
}' >"$T/p.json"
bare="bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup --unshare-net \
 --disable-userns --die-with-parent --new-session --as-pid-1 --clearenv --cap-drop ALL --hostname jig \
 --dev /dev --proc /proc --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
 --size 16777216 --tmpfs /scratch --ro-bind /usr /usr --ro-bind $BUN /bun --remount-ro / --chdir /scratch \
 --setenv PATH /usr/bin --setenv HOME /scratch --setenv TMPDIR /scratch --"
hyperfine -N --warmup 3 --runs 30 --export-json "$T/true.json" \
	"$bare /bin/true" "$JIG scope run $T/p.json -- /bin/true"
hyperfine -N --warmup 2 --runs 15 --export-json "$T/bun.json" \
	"$bare /bun -e 'console.log(1)'" "$JIG scope run $T/p.json -- /bun -e 'console.log(1)'"
for f in true bun; do
	jq -r --arg f "$f" '.results | "\($f): bare bwrap median \(.[0].median*1000|floor) ms, jig scope median \(.[1].median*1000|floor) ms, ratio \((.[1].median/.[0].median)*100|floor/100)"' "$T/$f.json"
done
