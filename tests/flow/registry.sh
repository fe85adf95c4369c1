# Sourced by tests/flow/deps.sh and tests/integration/deps.sh.
# registry_serve CONFIG [STALL]: the suite's loopback registry
# (tests/flow/registry.py) serving $T/reg on a free port ($PORT; its
# process $SERVER), every request it gets logged in $T/log, named as the
# operator's registry in CONFIG/npm.json.
registry_serve() {
	config=$1
	shift
	mkdir -p "$T/reg"
	: >"$T/log"
	rm -f "$T/port"
	python3 "$JIG_SOURCE/tests/flow/registry.py" serve "$T/reg" "$T/port" "$T/log" "$@" &
	SERVER=$!
	i=0
	while [ ! -s "$T/port" ]; do
		i=$((i + 1)); [ "$i" -lt 100 ] || fail "the registry did not start"; sleep 0.1
	done
	PORT=$(cat "$T/port")
	printf '{"format": "jig-npm/1", "registry": "http://127.0.0.1:%s/"}\n' "$PORT" >"$config/npm.json"
}
