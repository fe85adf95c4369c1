#!/bin/sh
# The HTTP worker (plugins/http, jig-http-worker) against real loopback
# peers (tests/http/peer.py), run directly as the unprivileged user: what it
# sends, what it refuses, what it withholds. Plain lane; the worker inside
# its scope, from a Flow, is tested in tests/flow/cases.sh (VM lane).
# Each case_* is one ctest (http.<case>).
# Requirements: R-H01, R-H03, R-H04, R-H09, R-H10 (see docs/requirements.md).
set -eu
: "${JIG_WORKER:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-http.XXXXXX)
chmod 755 "$T"; chown "$USER_NAME" "$T"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# certs: two CAs, a server certificate for IP 127.0.0.1 from each.
certs() { sh "$JIG_SOURCE/tests/http/certs.sh" "$T"; }
# peer NAME [--tls CERT KEY]: starts a peer; its port in $T/NAME.port.
peer() {
	name=$1; shift
	runuser -u "$USER_NAME" -- /usr/bin/python3 "$JIG_SOURCE/tests/http/peer.py" --portfile "$T/$name.port" \
		--log "$T/$name.log" "$@" &
	PIDS="$PIDS $!"
	i=0
	while [ ! -s "$T/$name.port" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "peer $name did not start"; sleep 0.05
	done
	runuser -u "$USER_NAME" -- touch "$T/$name.log"
}
port() { cat "$T/$1.port"; }
# req JSON: runs the worker with JSON on stdin; its output in $T/out.
# req JSON [ENV=V...]: the worker on JSON (a request object gets the
# protocol's format, jig-http-request/1, as jig sends it).
req() {
	printf '%s' "$1" | jq -c '. + {format: "jig-http-request/1"}' >"$T/in" 2>/dev/null || printf '%s' "$1" >"$T/in"
	shift
	runuser -u "$USER_NAME" -- env "$@" "$JIG_WORKER" <"$T/in" >"$T/out" 2>"$T/err" || fail "worker exit $?: $(cat "$T/err")"
	cat "$T/out"
}
# grant METHOD URL [MAXRESP] [TIMEOUT_MS]
grant() {
	printf '{"method":"%s","url":"%s","max_request_bytes":65536,"max_response_bytes":%s,"timeout_ms":%s,"connect_timeout_ms":2000}' \
		"$1" "$2" "${3:-1048576}" "${4:-5000}"
}
outcome() { jq -r .outcome "$T/out"; }
expect() { # expect OUTCOME PATTERN
	[ "$(outcome)" = "$1" ] || fail "outcome $(outcome), expected $1"
	[ -z "${2:-}" ] || jq -r .error "$T/out" | grep -q -- "$2" || fail "error does not match /$2/: $(jq -r .error "$T/out")"
}
hits() { wc -l <"$T/$1.log"; }
body() { jq -r .body_base64 "$T/out" | base64 -d; }

case_loopback_get() {
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}"
	expect response
	[ "$(jq .status "$T/out")" = 200 ] || fail "status"
	body | jq -e '.method == "GET" and .auth == "none" and .accept_encoding == null' >/dev/null || fail "body: $(body)"
	jq -e '.headers["content-type"] == "application/json" and .response_bytes > 0 and .request_bytes > 0 and (.total_ms | type) == "number"' "$T/out" >/dev/null || fail "evidence"
}
case_post_body_and_bearer() {
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	req "{\"grant\":$(grant POST "$u"),\"method\":\"POST\",\"url\":\"$u\",\"body\":\"{\\\"a\\\":1}\",\"bearer\":\"tok-123\"}"
	expect response
	body | jq -e '.method == "POST" and .body == "{\"a\":1}" and .auth == "bearer" and .content_type == "application/json"' >/dev/null || fail "body: $(body)"
}
case_refuse_other_method() {
	# R-H01 (decision 334): the worker holds the grant's method itself: a
	# POST to a GET grant (and a GET to a POST grant) is refused, nothing
	# reaches the peer.
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"POST\",\"url\":\"$u\",\"body\":\"{}\"}"
	expect refused "method POST is not the granted GET"
	req "{\"grant\":$(grant POST "$u"),\"method\":\"GET\",\"url\":\"$u\"}"
	expect refused "method GET is not the granted POST"
	[ ! -s "$T/p.log" ] || fail "a refused request reached the peer: $(cat "$T/p.log")"
}
case_request_body_over_grant() {
	# R-H04 (decision 334): the worker holds the grant's max_request_bytes
	# itself (the host checked it first): 8 bytes of body to an 8-byte grant
	# are sent; 9 are refused and nothing reaches the peer.
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	g=$(grant POST "$u" | jq -c '.max_request_bytes = 8')
	req "{\"grant\":$g,\"method\":\"POST\",\"url\":\"$u\",\"body\":\"{\\\"a\\\":123}\"}"
	expect refused "request body of 9 bytes is over the grant's 8"
	[ ! -s "$T/p.log" ] || fail "a refused body reached the peer: $(cat "$T/p.log")"
	req "{\"grant\":$g,\"method\":\"POST\",\"url\":\"$u\",\"body\":\"{\\\"a\\\":12}\"}"
	expect response
	body | jq -e '.body == "{\"a\":12}"' >/dev/null || fail "body: $(body)"
}
case_refuse_url_one_char() {
	# R-H01: a URL or method one character off the grant is never sent.
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"${u}x\"}"
	expect refused "is not the granted"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$(echo "$u" | sed 's/ok$/oK/')\"}"
	expect refused "is not the granted"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"POST\",\"url\":\"$u\"}"
	expect refused "method POST is not the granted GET"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"get\",\"url\":\"$u\"}"
	expect refused "method get"
	[ "$(hits p)" -eq 0 ] || fail "a refused request reached the server"
}
case_refuse_loopback_aliases() {
	# localhost, 127.1, 2130706433, 0x7f.1 for a grant of 127.0.0.1: refused,
	# even though curl would connect them to the same address.
	peer p
	P=$(port p)
	g=$(grant GET "http://127.0.0.1:$P/ok")
	for alias in localhost 127.1 2130706433 0x7f.1 127.000.000.001 LOCALHOST; do
		req "{\"grant\":$g,\"method\":\"GET\",\"url\":\"http://$alias:$P/ok\"}"
		expect refused
	done
	[ "$(hits p)" -eq 0 ] || fail "an alias reached the server"
}
case_refuse_schemes() {
	peer p
	P=$(port p)
	for u in "file:///etc/passwd" "gopher://127.0.0.1:$P/ok" "ftp://127.0.0.1:$P/ok" "127.0.0.1:$P/ok" "//127.0.0.1:$P/ok" \
		"http://example.com/ok" "dict://127.0.0.1:$P/" "http://u:p@127.0.0.1:$P/ok"; do
		req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}"
		expect refused
	done
	[ "$(hits p)" -eq 0 ] || fail "a refused scheme reached the server"
}
case_redirect_not_followed() {
	peer p
	u="http://127.0.0.1:$(port p)/redirect"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}"
	expect response
	jq -e '.status == 302 and .redirect_not_followed == true and (.headers.location | endswith("/ok"))' "$T/out" >/dev/null || fail "redirect"
	[ "$(hits p)" -eq 1 ] || fail "the redirect was followed: $(cat "$T/p.log")"
}
case_proxy_env_ignored() {
	# A proxy in the environment (every name libcurl reads) is ignored: the
	# request goes straight to the server; the proxy sees nothing.
	peer p; peer proxy
	u="http://127.0.0.1:$(port p)/ok"
	pr="http://127.0.0.1:$(port proxy)"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}" http_proxy="$pr" HTTP_PROXY="$pr" \
		https_proxy="$pr" HTTPS_PROXY="$pr" ALL_PROXY="$pr" all_proxy="$pr" NO_PROXY= SSLKEYLOGFILE="$T/keys" CURL_HOME="$T"
	expect response
	[ "$(hits p)" -eq 1 ] && [ "$(hits proxy)" -eq 0 ] || fail "proxy used: server $(hits p), proxy $(hits proxy)"
	[ ! -e "$T/keys" ] || fail "SSLKEYLOGFILE honoured"
}
case_response_over_cap() {
	# Chunked, no Content-Length: the cap is enforced in the write callback.
	peer p
	u="http://127.0.0.1:$(port p)/big/3000000"
	req "{\"grant\":$(grant GET "$u" 1048576),\"method\":\"GET\",\"url\":\"$u\"}"
	expect refused "over the grant's 1048576 bytes; cut"
	[ "$(jq .response_bytes "$T/out")" -le 1048576 ] || fail "more than the cap was kept"
	jq -e 'has("body_base64") | not' "$T/out" >/dev/null || fail "a cut body was delivered"
	u="http://127.0.0.1:$(port p)/big/1000"
	req "{\"grant\":$(grant GET "$u" 1000),\"method\":\"GET\",\"url\":\"$u\"}"
	expect response
	[ "$(body | wc -c)" -eq 1000 ] || fail "exactly the cap is allowed"
}
case_trickle_past_deadline() {
	peer p
	u="http://127.0.0.1:$(port p)/trickle"
	start=$(date +%s%N)
	req "{\"grant\":$(grant GET "$u" 1048576 1000),\"method\":\"GET\",\"url\":\"$u\"}"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	expect failed "deadline of 1000 ms"
	[ "$ms" -lt 5000 ] || fail "the deadline was not enforced ($ms ms)"
}
case_echoed_bearer() {
	peer p
	u="http://127.0.0.1:$(port p)/echo-auth"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\",\"bearer\":\"canary-7f3a\"}"
	expect refused "contains the bound bearer"
	! grep -q canary-7f3a "$T/out" "$T/err" || fail "the bearer is in the worker's output"
}
case_tls_untrusted_ca() {
	# R-H09: a certificate from a CA not in the trust store is refused; with
	# the operator's CA it succeeds.
	certs
	peer a --tls "$T/srv-a.pem" "$T/srv-a.key"
	peer b --tls "$T/srv-b.pem" "$T/srv-b.key"
	ua="https://127.0.0.1:$(port a)/ok"; ub="https://127.0.0.1:$(port b)/ok"
	req "{\"grant\":$(grant GET "$ua"),\"method\":\"GET\",\"url\":\"$ua\"}"
	expect failed "TLS"
	req "{\"grant\":$(grant GET "$ua"),\"method\":\"GET\",\"url\":\"$ua\",\"ca_files\":[\"/etc/ssl/certs/ca-certificates.crt\",\"$T/ca-a.pem\"]}"
	expect response
	body | jq -e '.ok' >/dev/null || fail "body over TLS"
	req "{\"grant\":$(grant GET "$ub"),\"method\":\"GET\",\"url\":\"$ub\",\"ca_files\":[\"$T/ca-a.pem\"]}"
	expect failed "TLS"
	[ "$(hits b)" -eq 0 ] || fail "a request reached the untrusted server"
}
case_https_only_no_http_downgrade() {
	# http to anything but 127.0.0.1 is not a grant; https is.
	req "{\"grant\":$(grant GET "http://10.0.0.1/x"),\"method\":\"GET\",\"url\":\"http://10.0.0.1/x\"}"
	expect refused "only https"
}
# The protocol is versioned (<jig/http.h>): a request of another format, or
# none, is refused before anything is sent; every result names its format.
case_refuse_other_format() {
	peer p
	u="http://127.0.0.1:$(port p)/ok"
	for f in '"jig-http-request/2",' '' '1,'; do
		printf '%s' "{${f:+\"format\":$f}\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}" >"$T/in"
		runuser -u "$USER_NAME" -- "$JIG_WORKER" <"$T/in" >"$T/out" 2>"$T/err" || fail "worker exit $?"
		cat "$T/out"
		expect refused "malformed"
		[ "$(jq -r .format "$T/out")" = jig-http-result/1 ] || fail "the result names no format"
	done
	[ "$(hits p)" -eq 0 ] || fail "a request of another format was sent"
}
case_malformed_input() {
	req '{"grant":{}}'
	expect refused "malformed"
	req 'not json'
	expect refused "malformed"
	head -c 3000000 /dev/zero | tr '\0' a >"$T/big"
	runuser -u "$USER_NAME" -- "$JIG_WORKER" <"$T/big" >"$T/out" 2>"$T/err" || fail "worker crashed on big input"
	expect refused "malformed"
}

# --- R-H03 (audit #62, #65, #66): no authored code, no arbitrary headers, no
# automatic retries in the worker.
heads() { tail -n 1 "$T/$1.log.headers"; }
case_r_h03_no_arbitrary_headers() {
	# The peer sees exactly the worker's own headers: Host, User-Agent,
	# Accept; with a body Content-Type and Content-Length; with a bearer
	# Authorization. Nothing else (no Expect, no Accept-Encoding, no
	# Proxy-*), whatever the environment says.
	peer p
	u="http://127.0.0.1:$(port p)/headers"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}" CURL_CA_BUNDLE=/x HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=
	expect response
	[ "$(heads p)" = "accept host user-agent" ] || fail "GET sent: $(heads p)"
	body | jq -e '.other == {}' >/dev/null || fail "other headers: $(body)"
	req "{\"grant\":$(grant POST "$u"),\"method\":\"POST\",\"url\":\"$u\",\"body\":\"{\\\"a\\\":1}\",\"bearer\":\"tok-1\"}"
	expect response
	[ "$(heads p)" = "accept authorization content-length content-type host user-agent" ] || fail "POST sent: $(heads p)"
	body | jq -e '.other == {}' >/dev/null || fail "other headers: $(body)"
	n=$(hits p)
	# A header the request asks for is refused, never sent: as a field of
	# its own (any name), or smuggled in the bearer, the method or the URL.
	for extra in '"headers":{"X-Evil":"1"}' '"header":"X-Evil: 1"' '"proxy":"http://127.0.0.1:9"' '"user_agent":"evil"' \
		'"retries":3' '"options":{"CURLOPT_HTTPHEADER":["X-Evil: 1"]}'; do
		req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\",$extra}"
		expect refused "unknown field"
	done
	req "{\"grant\":$(grant GET "$u" | jq -c '. + {headers: {"X-Evil": "1"}}'),\"method\":\"GET\",\"url\":\"$u\"}"
	expect refused 'unknown field "headers"'
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\",\"bearer\":\"tok\\r\\nX-Evil: 1\"}"
	expect refused "line break"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\\r\\nX-Evil: 1\"}"
	expect refused
	[ "$(hits p)" -eq "$n" ] || fail "a refused request reached the peer: $(tail -n 3 "$T/p.log")"
	! grep -qi "x-evil\|proxy" "$T/p.log.headers" || fail "a smuggled header was sent: $(cat "$T/p.log.headers")"
}
case_r_h03_no_authored_code() {
	# Nothing of the input becomes code or configuration the worker loads:
	# fields naming a module, a script, an engine or a libcurl
	# configuration file are refused before anything is sent; LD_PRELOAD,
	# CURL_HOME and a .curlrc/.netrc in HOME are not read (the worker clears
	# its environment; the scope gives it none).
	peer p
	u="http://127.0.0.1:$(port p)/headers"
	for extra in '"import":"/flow/evil.js"' '"module":"/flow/evil.so"' '"script":"1"' '"engine":"evil"' '"config":"/flow/.curlrc"' \
		'"ssl_engine":"evil"'; do
		req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\",$extra}"
		expect refused "unknown field"
	done
	[ "$(hits p)" -eq 0 ] || fail "a refused request reached the peer"
	mkdir -p "$T/home"
	printf 'header = "X-Evil: curlrc"\nproxy = "http://127.0.0.1:9"\n' >"$T/home/.curlrc"
	printf 'machine 127.0.0.1 login evil password evil\n' >"$T/home/.netrc"
	chmod -R a+rX "$T/home"
	req "{\"grant\":$(grant GET "$u"),\"method\":\"GET\",\"url\":\"$u\"}" HOME="$T/home" CURL_HOME="$T/home" LD_PRELOAD="$T/home/nonexistent.so"
	expect response
	[ "$(heads p)" = "accept host user-agent" ] || fail "sent: $(heads p)"
}
case_r_h03_no_automatic_retries() {
	# A peer that fails the first request sees exactly one: a connection
	# closed unanswered, a 503 with Retry-After: 0, a POST closed
	# unanswered, a deadline passed while the peer is slow.
	peer p
	P=$(port p)
	n=0
	for m in GET:/drop:failed GET:/unavailable:response POST:/drop:failed PUT:/unavailable:response; do
		method=${m%%:*} rest=${m#*:}; path=${rest%%:*} want=${rest#*:}
		u="http://127.0.0.1:$P$path"
		req "{\"grant\":$(grant "$method" "$u"),\"method\":\"$method\",\"url\":\"$u\"}"
		expect "$want"
		n=$((n + 1))
		sleep 0.3 # a retry would have arrived by now
		[ "$(hits p)" -eq "$n" ] || fail "$method $path: the peer saw $(($(hits p) - n + 1)) requests: $(cat "$T/p.log")"
	done
	[ "$(jq .status "$T/out")" = 503 ] || fail "the 503 is evidence"
	u="http://127.0.0.1:$P/slow/3000"
	req "{\"grant\":$(grant GET "$u" 1048576 1000),\"method\":\"GET\",\"url\":\"$u\"}"
	expect failed "deadline of 1000 ms"
	sleep 3
	[ "$(hits p)" -eq $((n + 1)) ] || fail "the slow request was retried: $(cat "$T/p.log")"
}

"case_$1"
echo "PASS: $1"
