#!/bin/sh
# Exact network grants (issue 34, R-P11; docs/scope-policy.md "network"):
# jig scope run policies in the supported-host lane. Real listeners on the
# guest's 127.0.0.1:1234, :1235 and :1236 (each answers "PORT:what it
# got" and logs the contact) and a loopback HTTPS peer on 127.0.0.1:8443
# standing in for a remote provider. Each case_* is one ctest
# (netgrant.<case>); the probe (tests/sandbox/probe.c) runs in the scope.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_PROBE:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"

T=$(mktemp -d /tmp/jig-net.XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# policy NETWORK [JQ]: the probe at /probe, stdio, the given network.
policy() {
	jq -n --arg probe "$JIG_PROBE" --argjson net "$1" '{
	  format: "jig-scope-policy/1", scope: "net",
	  binds: [{source: $probe, target: "/probe"}],
	  tmpfs: [{target: "/scratch", size_bytes: 4194304}],
	  symlinks: [], env: {}, cwd: "/scratch", network: $net,
	  descriptors: [{source: 0, target: 0}, {source: 1, target: 1}, {source: 2, target: 2}],
	  limits: {memory_bytes: 134217728, tasks: 128, cpu_quota_us: 100000, wall_ms: 60000}
	}' | jq "${2:-.}" >"$T/policy.json"
}

# scope ARGS...: runs ARGS in the scope; $rc, $T/out, $T/err, $T/rec.json.
scope() {
	set +e
	"$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	echo "--- $* (exit $rc)"
	cat "$T/out" "$T/err"
	return 0
}
ran_clean() {
	[ "$(jq -r .outcome "$T/rec.json")" = exited ] || fail "outcome $(jq -r .outcome "$T/rec.json")"
	[ "$(jq -r .cleanup_confirmed "$T/rec.json")" = true ] || fail "cleanup not confirmed"
}
out_has() { grep -q -- "$1" "$T/out" || fail "expected \"$1\" in the output"; }

# The guest's loopback services: PORT:DATA echo servers that log contacts.
servers() {
	python3 "$JIG_SOURCE/tests/sandbox/echo_peers.py" "$T/contacts" "$@" &
	PIDS="$PIDS $!"
	i=0; until grep -q listening "$T/contacts" 2>/dev/null; do i=$((i+1)); [ $i -lt 200 ] || fail "echo servers"; sleep 0.05; done
}
contacts() { grep -c "^contact $1\$" "$T/contacts" || true; }

# --- loopback endpoints ------------------------------------------------------
case_loopback_exact_port() {
	servers 1234 1235 1236
	policy '{"loopback": ["127.0.0.1:1234"]}'
	"$JIG" scope plan "$T/policy.json" | tee "$T/plan"
	grep -q "loopback 127.0.0.1:1234 -> the host's 127.0.0.1:1234" "$T/plan" || fail "the plan does not show the endpoint"
	scope /probe talk 127.0.0.1 1234 hello; ran_clean
	out_has "reply: 1234:hello"
	[ "$(contacts 1234)" = 1 ] || fail "1234 was not reached once"
	scope /probe talk 127.0.0.1 1235 hello; ran_clean
	out_has "denied: 127.0.0.1: Connection refused"
	scope /probe talk 127.0.0.1 1236 hello; ran_clean
	out_has "denied: 127.0.0.1: Connection refused"
	scope /probe talk 127.0.0.1 47999 hello; ran_clean
	out_has "denied: 127.0.0.1: Connection refused"
	[ "$(contacts 1235)" = 0 ] && [ "$(contacts 1236)" = 0 ] || fail "an ungranted port was reached"
	# Not the host network: no route anywhere but its own lo.
	scope /probe talk 10.0.2.2 80 hello; ran_clean
	out_has "denied: 10.0.2.2: Network is unreachable"
	# Still no raw sockets, though inet is allowed.
	scope /probe raw; ran_clean
	! grep -q ESCAPE "$T/out" || fail "a raw socket was allowed"
}
case_loopback_two_ports() {
	servers 1234 1235 1236
	policy '{"loopback": ["127.0.0.1:1235", "127.0.0.1:1234"]}'
	scope /probe talk 127.0.0.1 1234 a; ran_clean; out_has "reply: 1234:a"
	scope /probe talk 127.0.0.1 1235 b; ran_clean; out_has "reply: 1235:b"
	scope /probe talk 127.0.0.1 1236 c; ran_clean; out_has "denied: 127.0.0.1: Connection refused"
	[ "$(contacts 1236)" = 0 ] || fail "1236 was reached"
}
case_loopback_none_without_grant() {
	servers 1234 1235
	policy '"none"'
	scope /probe talk 127.0.0.1 1234 x; ran_clean
	out_has "denied: 127.0.0.1: Address family not supported"
	policy '{"loopback": ["127.0.0.1:1235"]}'
	scope /probe talk 127.0.0.1 1234 x; ran_clean
	out_has "denied: 127.0.0.1: Connection refused"
	[ "$(contacts 1234)" = 0 ] || fail "1234 was reached without its grant"
}
# The endpoints could not be created (test fault "net listen"): the
# launcher refuses, the payload never runs, nothing is left.
case_loopback_listen_failure_refused() {
	policy '{"loopback": ["127.0.0.1:1234"]}'
	set +e
	JIG_FAULT_FAIL="net listen" "$JIG" scope run "$T/policy.json" --record "$T/rec.json" -- /probe write /scratch/ran >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -ne 0 ] || fail "ran without its endpoints"
	grep -q "network: its endpoints were not created" "$T/err" || fail "no reason given"
	[ "$(jq -r .outcome "$T/rec.json")" = failed ] && [ "$(jq -r .payload_started "$T/rec.json")" = false ] || fail "record: $(jq -c . "$T/rec.json")"
	[ "$(jq -r .cleanup_confirmed "$T/rec.json")" = true ] || fail "cleanup not confirmed"
}
case_loopback_refused_policy() {
	policy '{"loopback": ["127.0.0.2:1234"]}'
	scope /probe talk 127.0.0.1 1234 x
	[ "$rc" -eq 2 ] || fail "exit $rc"
	grep -q 'network.loopback\[0\] "127.0.0.2:1234": only 127.0.0.1 is relayed today' "$T/err" || fail "no one-line refusal"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line"
}

# --- the CONNECT relay ------------------------------------------------------------
# A loopback HTTPS peer (self-signed for IP 127.0.0.1) standing in for the provider.
https_peer() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=provider -addext subjectAltName=IP:127.0.0.1 \
		-keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
	python3 "$JIG_SOURCE/tests/sandbox/https_peer.py" "$T/cert.pem" "$T/key.pem" "$T/https.log" &
	PIDS="$PIDS $!"
	i=0; until grep -q listening "$T/https.log" 2>/dev/null; do i=$((i+1)); [ $i -lt 200 ] || fail "https peer"; sleep 0.05; done
}
GRANT='{"connect": ["127.0.0.1:8443"], "proxy": "127.0.0.1:3128"}'
# curl in the scope (the system's /usr read-only), https_proxy the relay.
curl_policy() {
	policy "$GRANT" ".binds += [{source: \"/usr\", target: \"/usr\"}, {source: \"$T/cert.pem\", target: \"/ca.pem\"}]
	  | .symlinks += [{target: \"/lib\", link: \"usr/lib\"}, {target: \"/lib64\", link: \"usr/lib64\"}, {target: \"/bin\", link: \"usr/bin\"}]
	  | .env = {HTTPS_PROXY: \"http://127.0.0.1:3128\", https_proxy: \"http://127.0.0.1:3128\", PATH: \"/usr/bin\"}"
}
case_connect_exact_destination() {
	https_peer
	curl_policy
	"$JIG" scope plan "$T/policy.json" | tee "$T/plan"
	grep -q "proxy 127.0.0.1:3128: HTTP CONNECT to exactly these HOST:PORT" "$T/plan" || fail "the plan does not show the proxy"
	grep -q "connect 127.0.0.1:8443" "$T/plan" || fail "the plan does not show the destination"
	scope /usr/bin/curl -sS --max-time 20 --cacert /ca.pem https://127.0.0.1:8443/; ran_clean
	out_has "provider ok"
	grep -q "https contact" "$T/https.log" || fail "the peer was not reached"
	# Without the proxy the peer is out of reach (its own namespace).
	scope /usr/bin/curl -sS --max-time 10 --noproxy '*' --cacert /ca.pem https://127.0.0.1:8443/; ran_clean
	[ "$rc" -ne 0 ] || fail "curl reached the peer without the relay"
	grep -q "Connection refused\|Failed to connect" "$T/err" || fail "not refused: $(cat "$T/err")"
}
case_connect_refusals() {
	servers 1234 8444
	https_peer
	policy "$GRANT"
	# The granted destination through the relay: 200, then TLS bytes flow
	# (the peer answers our "ping" with a TLS alert or closes).
	scope /probe proxy 3128 connect 127.0.0.1:8443; ran_clean
	out_has "status: HTTP/1.1 200 Connection established"
	# Any other host:port: 403, nothing reached.
	for t in 127.0.0.1:8444 127.0.0.1:1234 localhost:8443 example.com:443 '[::1]:8443'; do
		scope /probe proxy 3128 connect "$t"; ran_clean
		out_has "status: HTTP/1.1 403 Forbidden"
	done
	[ "$(contacts 8444)" = 0 ] && [ "$(contacts 1234)" = 0 ] || fail "an ungranted destination was reached"
	# Not CONNECT, not its exact form, an oversized head.
	scope /probe proxy 3128 get 127.0.0.1:8443; ran_clean
	out_has "status: HTTP/1.1 400 Bad Request"
	scope /probe proxy 3128 connect "127.0.0.1:8443 HTTP/1.0"; ran_clean
	out_has "status: HTTP/1.1 400 Bad Request"
	scope /probe proxy 3128 big 127.0.0.1:8443; ran_clean
	out_has "status: HTTP/1.1 431 Request Header Fields Too Large"
	# The relay's port only; the loopback ports are not relayed.
	scope /probe talk 127.0.0.1 1234 x; ran_clean
	out_has "denied: 127.0.0.1: Connection refused"
}
case_connect_too_many() {
	https_peer
	policy "$GRANT"
	scope /probe proxy 3128 flood 127.0.0.1:8443; ran_clean
	out_has "the 65th: status: (closed)"
	out_has "the first: status: HTTP/1.1 200 Connection established"
}

"case_$1"
