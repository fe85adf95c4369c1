#!/bin/sh
# Runs a supported-host test command: inside the cgroup-v2 VM (tests/vm/run)
# by default, or directly when JIG_SUPPORTED_HOST=native (a real supported
# host: systemd, cgroup v2 delegated to the user). Never skips.
# usage: tests/supported-host.sh [VM OPTIONS] -- COMMAND [ARGS...]
set -eu
if [ "${JIG_SUPPORTED_HOST:-vm}" = native ]; then
	while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
	[ $# -gt 0 ] || { echo "supported-host: missing -- COMMAND" >&2; exit 2; }
	shift
	exec "$@"
fi
exec "$(dirname "$0")/vm/run" "$@"
