#!/bin/sh
# Runs a supported-host test command: inside the cgroup-v2 VM (tests/vm/run)
# by default, or directly when JIG_SUPPORTED_HOST=native (a real supported
# host: systemd, cgroup v2 delegated to the user). Never skips.
# usage: tests/supported-host.sh [VM OPTIONS] -- COMMAND [ARGS...]
#        tests/supported-host.sh --stop-lane
set -eu
# The main lane is a pool of JIG_VM_LANE_POOL lane VMs (tests/CMakeLists.txt):
# lane 1 is $JIG_VM_LANE, lane N is ${JIG_VM_LANE}N.
pool_lane() { if [ "$1" = 1 ]; then echo "$JIG_VM_LANE"; else echo "$JIG_VM_LANE$1"; fi; }
if [ "${1:-}" = --stop-lane ]; then
	[ "${JIG_SUPPORTED_HOST:-vm}" = native ] && exit 0
	[ -n "${JIG_VM_LANE:-}" ] || exec "$(dirname "$0")/vm/run" --stop-lane
	i=1 rc=0
	while [ "$i" -le "${JIG_VM_LANE_POOL:-1}" ]; do
		JIG_VM_LANE=$(pool_lane "$i") "$(dirname "$0")/vm/run" --stop-lane || rc=$?
		i=$((i + 1))
	done
	exit "$rc"
fi
# ctest's resource allocation names the pool's lane this case has
# (CTEST_RESOURCE_GROUP_0_VMLANE=id:N,slots:1); without it, lane 1.
if [ -n "${JIG_VM_LANE:-}" ] && [ -n "${CTEST_RESOURCE_GROUP_0_VMLANE:-}" ]; then
	id=${CTEST_RESOURCE_GROUP_0_VMLANE#id:}
	id=${id%%,*}
	case $id in ''|*[!0-9]*) echo "supported-host: unexpected lane allocation '$CTEST_RESOURCE_GROUP_0_VMLANE'" >&2; exit 2 ;; esac
	JIG_VM_LANE=$(pool_lane "$id")
	export JIG_VM_LANE
fi
if [ "${JIG_SUPPORTED_HOST:-vm}" = native ]; then
	while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
	[ $# -gt 0 ] || { echo "supported-host: missing -- COMMAND" >&2; exit 2; }
	shift
	exec "$@"
fi
# A TCG guest very rarely stalls mid-command (seen about once per hundred
# cases on these machines; the console log of such a run is kept as
# build/vm/console-timeout.log). A case whose VM was killed at its timeout
# is run once more in a fresh VM, saying so; a case that times out twice,
# or fails in any other way, fails.
err=$(mktemp)
set +e
"$(dirname "$0")/vm/run" "$@" 2>"$err"
rc=$?
set -e
cat "$err" >&2
if [ "$rc" -eq 124 ] && grep -q 'timeout after .* killed the VM' "$err"; then
	rm -f "$err"
	echo "supported-host: the VM was killed at its timeout; running the case once more in a fresh VM" >&2
	exec "$(dirname "$0")/vm/run" "$@"
fi
rm -f "$err"
exit "$rc"
