#!/bin/sh
# tests/vm/selftest.sh - check that tests/vm/run gives what the containment
# tests rely on: a delegated cgroup v2 subtree, exit status, separate
# stdout/stderr, unprivileged user namespaces, a hard timeout, and lanes
# (one VM for many commands, fresh state for each, a hung command failing
# alone). Exits non-zero and names every check that failed.  Takes about
# two minutes.

here=$(cd "$(dirname "$0")" && pwd -P)
run=$here/run
cache=${JIG_VM_CACHE:-$PWD/build/vm}
mkdir -p "$cache" || exit 1
tmp=$(mktemp -d "$cache/selftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! id jigtest >/dev/null 2>&1; then
	[ "$(id -u)" = 0 ] && useradd -m -s /bin/sh jigtest ||
		{ echo "selftest: user jigtest is missing and cannot be created" >&2; exit 1; }
fi

failed=
pass() { echo "ok   $1"; }
bad() {
	echo "FAIL $1" >&2
	for f in "$tmp/out" "$tmp/err"; do
		[ -s "$f" ] && { echo "--- ${f##*/}:"; cat "$f"; } >&2
	done
	failed="$failed
  $1"
}

# (1)-(3) in one one-shot VM: the delegated subtree has the controllers jig
# needs, stdout and stderr stay separate (boot noise in neither), and the
# command's exit status comes back
"$run" -- sh -c 'cat /sys/fs/cgroup/jig-test/cgroup.controllers; echo out; echo err >&2; exit 7' \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
name="1 controllers in \$JIG_TEST_CGROUP"
if grep -qw cpu "$tmp/out" && grep -qw memory "$tmp/out" && grep -qw pids "$tmp/out"; then
	pass "$name"
else
	bad "$name"
fi
name="2 exit status 7"
if [ "$rc" = 7 ]; then pass "$name"; else bad "$name (got $rc)"; fi
name="3 stdout/stderr separated"
if [ "$(tail -n 1 "$tmp/out")" = out ] && [ "$(wc -l <"$tmp/out")" = 2 ] && [ "$(cat "$tmp/err")" = err ]; then
	pass "$name"
else
	bad "$name"
fi

lane=$tmp/lane
# (4) as the unprivileged user: not root, may manage its subtree, may create
# user namespaces (bwrap).  Each step says which one broke.  (In a lane,
# which the checks below reuse.)
name="4 unprivileged: uid, child cgroup, memory.max, bwrap"
if JIG_VM_LANE=$lane "$run" -- sh -c '
	u=$(id -u); [ "$u" != 0 ] || { echo "id -u is 0" >&2; exit 1; }
	mkdir "$JIG_TEST_CGROUP/child" || { echo "mkdir child cgroup failed" >&2; exit 1; }
	echo 100M >"$JIG_TEST_CGROUP/child/memory.max" || { echo "writing memory.max failed" >&2; exit 1; }
	[ "$(cat "$JIG_TEST_CGROUP/child/memory.max")" = 104857600 ] || { echo "memory.max did not stick" >&2; exit 1; }
	bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true || { echo "bwrap failed" >&2; exit 1; }
	echo "uid=$u"' >"$tmp/out" 2>"$tmp/err" && grep -q '^uid=[1-9]' "$tmp/out"; then
	pass "$name"
else
	bad "$name"
fi

# (5) a hung command is killed: exit 124 and a clear message
name="5 timeout kills the VM"
"$run" --timeout 10 -- sleep 1000 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 124 ] && grep -q '^vm: timeout after 10 s: killed the VM' "$tmp/err"; then
	pass "$name"
else
	bad "$name (got $rc)"
fi

# (6) a lane: one VM serves consecutive commands, and each starts from a
# fresh guest state (no file, process, cgroup or home left by the last)
name="6 lane: one boot, fresh state per command"
if JIG_VM_LANE=$lane "$run" -- sh -c '
	cat /proc/sys/kernel/random/boot_id
	touch /tmp/left /var/tmp/left /dev/shm/left "$HOME/left"
	mkdir "$JIG_TEST_CGROUP/left"
	setsid sleep 1000 </dev/null >/dev/null 2>&1 &
	exit 3' >"$tmp/out" 2>"$tmp/err"; [ $? = 3 ] &&
	boot1=$(cat "$tmp/out") &&
	JIG_VM_LANE=$lane "$run" -- sh -c '
	cat /proc/sys/kernel/random/boot_id
	ls -A /tmp /var/tmp /dev/shm "$HOME"
	ls -d "$JIG_TEST_CGROUP"/*/
	pgrep -x sleep || echo no-sleep' >"$tmp/out" 2>"$tmp/err" &&
	[ "$(head -n 1 "$tmp/out")" = "$boot1" ] && ! grep -q left "$tmp/out" &&
	grep -qx no-sleep "$tmp/out" && [ "$(grep -c '/$' "$tmp/out")" = 1 ]; then
	pass "$name"
else
	bad "$name"
fi

# (8) a lane-safe root set-up is undone after its command: its mount, its
# process, its file in /run and the user-namespace limit are gone for the
# next command, in the same VM
name="8 lane: a --lane-root-setup is undone"
if JIG_VM_LANE=$lane "$run" --lane-root-setup 'mount -t tmpfs tmpfs /mnt && echo 0 >/proc/sys/user/max_user_namespaces &&
	: >/run/left && (setsid sleep 1000 </dev/null >/dev/null 2>&1 &)' -- sh -c '
	cat /proc/sys/kernel/random/boot_id; cat /proc/sys/user/max_user_namespaces' >"$tmp/out" 2>"$tmp/err" &&
	[ "$(sed -n 2p "$tmp/out")" = 0 ] && boot1=$(head -n 1 "$tmp/out") &&
	JIG_VM_LANE=$lane "$run" -- sh -c '
	cat /proc/sys/kernel/random/boot_id; cat /proc/sys/user/max_user_namespaces
	grep -c " /mnt " /proc/self/mountinfo; ls -A /run; pgrep -x sleep || echo no-sleep' >"$tmp/out" 2>"$tmp/err" &&
	[ "$(head -n 1 "$tmp/out")" = "$boot1" ] && [ "$(sed -n 2p "$tmp/out")" != 0 ] &&
	[ "$(sed -n 3p "$tmp/out")" = 0 ] && ! grep -qx left "$tmp/out" && grep -qx no-sleep "$tmp/out"; then
	pass "$name"
else
	bad "$name"
fi

# (7) a command that hangs in a lane fails alone, with a clear message; the
# next command runs on a fresh guest
name="7 lane: a hung command fails alone, the next gets a fresh VM"
JIG_VM_LANE=$lane "$run" -- cat /proc/sys/kernel/random/boot_id >"$tmp/boot1" 2>/dev/null
JIG_VM_LANE=$lane "$run" --timeout 10 -- sleep 1000 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 124 ] && grep -q '^vm: timeout after 10 s: killed the VM' "$tmp/err" &&
	JIG_VM_LANE=$lane "$run" -- cat /proc/sys/kernel/random/boot_id >"$tmp/out" 2>>"$tmp/err" &&
	[ -s "$tmp/out" ] && [ "$(cat "$tmp/out")" != "$(cat "$tmp/boot1")" ]; then
	pass "$name"
else
	bad "$name (got $rc)"
fi
JIG_VM_LANE=$lane "$run" --stop-lane

if [ -n "$failed" ]; then
	echo "selftest: FAILED:$failed" >&2
	exit 1
fi
echo "selftest: all checks passed"
