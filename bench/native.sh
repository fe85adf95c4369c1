#!/bin/sh
# What jig adds to bwrap, step by step (issue 14), natively as root on a
# host that cannot run a whole scope (this machine: cgroup v1):
#   sudo sh bench/native.sh [build]
# or in the supported-host VM lane, as its user, with a prefix root owns
# (as /opt/jig is; the lane root set-up copies it):
#   tests/vm/run --lane-root-setup "cp -a $PWD/build/test-prefix /tmp/rootprefix" \
#     -- env JIG_PREFIX=/tmp/rootprefix sh bench/native.sh build
# Paired runs as the unprivileged user, interleaved (bench/interleave.py),
# each command exec'd by bash (a redirection would otherwise make bash fork
# first, ~3 ms on this machine):
#   1. bare bwrap /bin/true (bench/scope.sh's command line);
#   2. + jig's seccomp filter (the prebuilt program, --seccomp);
#   3. + jig's launcher as the scope's PID 1 (--ro-bind-fd, its argv) and
#      the four read-only remounts: jig's own bwrap command line;
#   4. `jig scope run` of the same policy: on a cgroup v1 host refused at
#      the cgroup step, i.e. all of jig's work before it creates the cgroup
#      leaf and starts bwrap; on a supported host the whole launch.
# Natively a scope launch costs about 3 + 4 + the cgroup leaf, the clone
# into it and the fence (a few directory and file operations), against 1.
set -eu
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/common.sh"
T=$(mktemp -d "${TMPDIR:-/var/tmp}/jig-bench-native.XXXXXX")
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
P=${JIG_PREFIX:-}
if [ -z "$P" ]; then
	[ "$(id -u)" = 0 ] || { echo "bench/native.sh: run it as root, or give JIG_PREFIX (a prefix root owns)"; exit 2; }
	cp -a "$B/test-prefix" "$T/prefix" # root owns it, as /opt/jig
	P=$T/prefix
fi
SNAP=$P/lib/jig/$(readlink "$P/lib/jig/current")
# The user's own home for jig's verification cache (runuser would set the
# user's HOME from passwd).
as_user() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u jigtest -- env HOME="$T/home" XDG_CACHE_HOME= "$@"
	else
		env HOME="$T/home" XDG_CACHE_HOME= "$@"
	fi
}
printf '%s\n' '#include <stdio.h>' 'extern const unsigned char jig_filter_none[];' \
	'extern const unsigned long jig_filter_none_len;' \
	'int main(void) { return fwrite(jig_filter_none, 1, jig_filter_none_len, stdout) != jig_filter_none_len; }' >"$T/dump.c"
cc -I"$SRC/plugins/sandbox-linux" -o "$T/dump" "$T/dump.c" "$B/plugins/sandbox-linux/filters.c"
"$T/dump" >"$T/filter.bpf"
bench_policy "$T/p.json"
chmod 644 "$T/p.json" "$T/filter.bpf"
mkdir "$T/home" && { [ "$(id -u)" != 0 ] || chown jigtest "$T/home"; }
ns="exec $bench_ns"
mounts="--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
 --size 16777216 --tmpfs /scratch --ro-bind /usr /usr"
run="--remount-ro / --chdir /scratch --setenv PATH /usr/bin --setenv HOME /scratch --setenv TMPDIR /scratch -- /bin/true"
bare="$ns $mounts $run"
filt="$ns --seccomp 101 $mounts $run 101<$T/filter.bpf"
jigs="$ns --seccomp 101 $mounts --ro-bind-fd 103 /.jig/init --remount-ro / --remount-ro /dev --remount-ro /dev/pts \
 --remount-ro /proc -- /.jig/init 1,2 /scratch - 3 PATH=/usr/bin HOME=/scratch TMPDIR=/scratch -- /bin/true \
 100>/dev/null 101<$T/filter.bpf 103<$SNAP/libexec/jig-scope-init"
refused="exec $P/bin/jig scope run $T/p.json -- /bin/true 2>/dev/null"
for c in "$bare" "$filt" "$jigs"; do
	as_user bash -c "$c" || { echo "failed: $c"; exit 1; }
done
as_user bash -c "$refused" || true # the first run stores the verification
as_user python3 "$SRC/bench/interleave.py" "${RUNS:-100}" 5 "shell=:" "bare bwrap=$bare" \
	"+ seccomp filter=$filt" "jig's bwrap command (+ launcher, remounts)=$jigs" \
	"jig scope run (refused at the cgroup step on a cgroup v1 host)=$refused"
