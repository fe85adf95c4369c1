#!/bin/sh
# --display web (issue 19), plain lane: jig inspect PACKET --display web on
# a synthesised, valid packet, run as the unprivileged user; every request
# rule proven with raw HTTP on loopback (tests/display/raw.py), the bounds,
# the lifecycle, and (case browser) the page in Debian's headless Chromium
# driven by playwright-core (tests/display/browser.mjs).
# Each case_* is one ctest (display.<case>). Requirements: R-D01..R-D08
# (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-display.XXXXXX)
chmod 755 "$T"
JPID=""
cleanup() {
	[ -z "$JPID" ] || kill -KILL "$JPID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
P="$T/prefix"
cp -a "$JIG_TEST_PREFIX" "$P"
mkdir "$T/home" && chown "$USER_NAME" "$T/home"
RAW="python3 $JIG_SOURCE/tests/display/raw.py"
fail() { echo "FAIL: $*" >&2; exit 1; }

# A valid packet (record and files as a Run publishes them) whose files
# are hostile to a browser.
make_packet() { # DIR
	mkdir -p "$1/files/notes"
	printf '<script>window.__pwned=1</script>\n<img src=/x onerror="window.__pwned=2">\n<svg onload="window.__pwned=3"><script>window.__pwned=4</script></svg>\n<iframe src="/x" onload="window.__pwned=5"></iframe>\n<a href="javascript:window.__pwned=6">click</a>\n' >"$1/files/report.html"
	printf '# Notes\n\n<img src=/x onerror="window.__pwned=7">\n[link](javascript:window.__pwned=8)\n<script>fetch("/x")</script>\n' >"$1/files/notes/readme.md"
	printf '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=9"><image href="/x"/></svg>\n' >"$1/files/pic.svg"
	python3 - "$1" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
outs = []
for root, _, names in os.walk(d + "/files"):
    for n in sorted(names):
        p = os.path.join(root, n)
        b = open(p, "rb").read()
        outs.append({"path": os.path.relpath(p, d + "/files"), "size": len(b), "sha256": hashlib.sha256(b).hexdigest()})
rec = {"format": "jig-run-record/1", "status": "succeeded", "error": "", "flow": "hostile-report",
       "plan_sha256": "ab" * 32, "package_sha256": "cd" * 32, "timeout_ms": 30000, "started_ms": 1700000000000,
       "termination": {"outcome": "exited", "exit_status": 0, "signal": 0, "core_dumped": False, "fenced": True,
                       "cleanup_confirmed": True, "oom_kills": 0, "pids_max_hits": 0,
                       "memory_peak_bytes": 12345678, "cpu_usec": 4321, "wall_ms": 87},
       "inputs": [], "outputs": sorted(outs, key=lambda o: o["path"]),
       "logs": ["started <b>bold</b>", "<img src=/x onerror=\"window.__pwned=10\">"],
       "effects": [{"effect": "http", "route": "status", "method": "GET", "url": "https://example.org/",
                    "outcome": "response", "status": 200, "response_bytes": 12}],
       "scope": {"policy_sha256": "12" * 32,
                 "policy": {"limits": {"memory_bytes": 536870912, "tasks": 128, "cpu_quota_us": 100000, "wall_ms": 86400000}}},
       # Two children of the root (x with a grandchild y, and z), each with
       # its scope's facts, effects and logs (issue 35: the tree, the
       # timeline, human units).
       "children": [{"id": 1, "binding": "x", "flow": "child", "level": 1, "status": "failed",
                     "why": "<img src=/x onerror=\"window.__pwned=11\">", "deadline_ms": 60000,
                     "cleanup_confirmed": True, "reservation_released": True, "scope_policy_sha256": "ef" * 32,
                     "started_ms": 1700000000010,
                     "limits": {"memory_bytes": 268435456, "tasks": 64, "cpu_quota_us": 50000, "wall_ms": 60000},
                     "reservation": {"memory_bytes": 805306368, "tasks": 256, "cpu_quota_us": 150000},
                     "termination": {"outcome": "exited", "exit_status": 1, "signal": 0, "wall_ms": 50,
                                     "memory_peak_bytes": 31457280, "cpu_usec": 20000, "oom_kills": 0, "pids_max_hits": 0},
                     "outputs": [{"path": "result.json", "size": 2048, "sha256": "aa" * 32}],
                     "effects": [{"effect": "agent", "route": "ask", "outcome": "answer", "api": "fake",
                                  "model": "<script>window.__pwned=12</script>", "answer_bytes": 4096}],
                     "logs": ["child says <b>x</b>", "<svg onload=\"window.__pwned=13\">"],
                     "children": [{"id": 2, "binding": "y", "flow": "grandchild", "level": 2, "status": "succeeded",
                                   "cleanup_confirmed": True, "reservation_released": False, "secret_path": "/home/x",
                                   "started_ms": 1700000000020,
                                   "limits": {"memory_bytes": 134217728, "tasks": 32, "cpu_quota_us": 50000, "wall_ms": 30000},
                                   "termination": {"outcome": "exited", "exit_status": 0, "signal": 0, "wall_ms": 20,
                                                   "memory_peak_bytes": 134217728, "cpu_usec": 5000},
                                   "effects": [{"effect": "command", "route": "run", "outcome": "exited", "exit_code": 0,
                                                "stdout_bytes": 10, "stderr_bytes": 0, "cleanup_confirmed": True}],
                                   "logs": ["grandchild says y"]}]},
                    {"id": 3, "binding": "z", "flow": "second", "level": 1, "status": "succeeded",
                     "cleanup_confirmed": True, "reservation_released": True, "scope_policy_sha256": "fe" * 32,
                     "started_ms": 1700000000040, "deadline_ms": 30000,
                     "limits": {"memory_bytes": 268435456, "tasks": 64, "cpu_quota_us": 100000, "wall_ms": 30000},
                     "termination": {"outcome": "exited", "exit_status": 0, "signal": 0, "wall_ms": 40,
                                     "memory_peak_bytes": 2097152, "cpu_usec": 30000},
                     "effects": [], "logs": ["second says hi"]}]}
json.dump(rec, open(d + "/record.json", "w"))
PY
	chmod -R go= "$1" # owner-only, as jig publishes it (R-S07; jig inspect checks it, decision 121)
	chown -R "$USER_NAME" "$1"
}
make_packet "$T/pk"

# show [ARGS...]: jig inspect $T/pk --display web ARGS in the background as
# the unprivileged user (setpriv execs jig itself, so $JPID is jig); waits
# for the link; sets PORT, CAP, LINK.
show() {
	: >"$T/out"
	(cd "$T" && exec setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --init-groups \
		env -i HOME="$T/home" PATH=/usr/bin:/bin ${SHOW_ENV:-} "$P/bin/jig" inspect "$T/pk" --display web "$@") \
		>"$T/out" 2>"$T/err" &
	JPID=$!
	i=0
	until grep -q '^display: http' "$T/out"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$T/out" "$T/err" >&2; fail "no link printed"; }
		kill -0 "$JPID" 2>/dev/null || { cat "$T/out" "$T/err" >&2; fail "jig ended"; }
		sleep 0.1
	done
	LINK=$(sed -n 's/^display: \(http[^ ]*\).*/\1/p' "$T/out")
	PORT=$(echo "$LINK" | sed 's|^http://127.0.0.1:\([0-9]*\)/#cap=.*|\1|')
	CAP=${LINK##*#cap=}
	echo "$CAP" | grep -Eq '^[0-9a-f]{64}$' || fail "capability is not 256 bits of hex: $LINK"
}
# stop: SIGTERM to jig; it must end with 0 and close the port.
stop() {
	kill -TERM "$JPID"
	set +e
	wait "$JPID"
	rc=$?
	set -e
	JPID=""
	[ "$rc" -eq 0 ] || fail "jig inspect --display web ended with $rc after SIGTERM"
	grep -q '^display: closed (interrupted)' "$T/out" || fail "no closing line"
	not_listening "$PORT"
}
not_listening() {
	! ss -Htln "sport = :$1" | grep -q . || fail "port $1 is still listening"
}
# no_cap_in_files CAP: no file the unprivileged user (jig) wrote since the
# set-up holds CAP: the packet, its home, cache, temporary files.
touch "$T/stamp"
no_cap_in_files() {
	find "$T" /tmp /var/tmp /dev/shm -xdev -user "$USER_NAME" -type f -newer "$T/stamp" 2>/dev/null >"$T/written" || true
	echo "files jig wrote: $(wc -l <"$T/written")"
	while read -r f; do
		! grep -qF "$1" "$f" 2>/dev/null || fail "the capability is in $f"
	done <"$T/written"
	! grep -rqF "$1" "$T/pk" "$T/home" || fail "the capability is in the packet or home"
}
# req 'RAW REQUEST' -> the status code ("closed" if none); the whole
# answer in $T/resp.
req() {
	printf "%b" "$1" | $RAW "$PORT" send >"$T/resp"
	head -n1 "$T/resp" | sed 's|^HTTP/1.1 \([0-9]*\).*|\1|'
}
# (escapes for req's printf: a substitution would drop a trailing newline)
H() { printf 'Host: 127.0.0.1:%s\\r\\n' "$PORT"; }
CAPH() { printf 'X-Jig-Capability: %s\\r\\n' "$CAP"; }
expect() { # WHAT WANT GOT
	[ "$2" = "$3" ] || fail "$1: expected $2, got $3"
	echo "ok: $1 -> $3"
}
# body of the last answer, without the Date line
answer() { grep -v '^Date:' "$T/resp"; }

case_children_tree() {
	# The record's tree of child Flows in the view, bounded to its fields
	# (no other key of a node passes), hostile text as data.
	show
	expect "GET /api/view" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
	sed '1,/^\r*$/d' "$T/resp" | python3 -c '
import json, sys
v = json.load(sys.stdin)
c = v["children"]
assert len(c) == 2 and c[0]["binding"] == "x" and c[0]["flow"] == "child" and c[0]["status"] == "failed", c
assert c[0]["outcome"] == "exited" and c[0]["why"].startswith("<img") and c[0]["cleanup_confirmed"] is True, c
# issue 35: each child with its scope facts, effects, outputs and logs
assert c[0]["started_ms"] == 1700000000010 and c[0]["limits"]["memory_bytes"] == 268435456, c
assert c[0]["termination"]["cpu_usec"] == 20000 and c[0]["termination"]["memory_peak_bytes"] == 31457280, c
assert c[0]["effects"][0]["route"] == "ask" and c[0]["logs"][1].startswith("<svg") and c[0]["outputs"][0]["size"] == 2048, c
assert c[1]["flow"] == "second" and c[1]["logs"] == ["second says hi"] and c[1]["effects"] == [], c
g = c[0]["children"]
assert len(g) == 1 and g[0]["flow"] == "grandchild" and g[0]["reservation_released"] is False, g
assert g[0]["effects"][0]["route"] == "run" and g[0]["logs"] == ["grandchild says y"], g
assert "secret_path" not in g[0] and "id" not in g[0], g
r = v["scopes"][0]
assert r["limits"]["memory_bytes"] == 536870912 and r["started_ms"] == 1700000000000, r
assert r["limits"]["wall_ms"] == 30000, r  # the Run's deadline, not the policy's ceiling
print("ok: the tree", json.dumps(c))' || fail "the children in the view"
	stop
}

case_inspect_tree() {
	# Issue 35, jig inspect's text of the same packet (two children of the
	# root, a grandchild): the tree drawn as a tree, each child's effects,
	# outputs and logs under it, the root's own effects counted apart, human
	# units beside the exact values, limits against what each scope used;
	# the Flows' text inert.
	setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --init-groups env -i HOME="$T/home" \
		"$P/bin/jig" inspect "$T/pk" >"$T/inspect" 2>"$T/err" || { cat "$T/err"; fail "jig inspect"; }
	cat "$T/inspect"
	for want in \
		'^  started 2023-11-14 22:13:20.000 UTC (1700000000000 ms since the epoch); deadline 30000 ms (30.0 s)$' \
		'^  termination exited, exit 0, signal 0, wall 87 ms, CPU 4321 us (0.004 s), peak memory 12345678 bytes (11.8 MiB), cleanup confirmed$' \
		'^  limits memory 536870912 bytes (512 MiB), peak 2.3% of it; 128 tasks; CPU 100000 us per 100 ms (1.00 CPU), used 0.05 CPU on average; deadline 30000 ms (30.0 s)$' \
		'^  file notes/readme.md  [0-9]* bytes  sha256 [0-9a-f]*  verified$' \
		'^  effects: 1 of its own, 2 made by child Flows (under each child below)$' \
		'^  http status response status 200$' \
		'^  child Flows: 2 called by the root, 3 in all$' \
		'^  |-- child x -> flow child: failed: <img src=/x onerror="window.__pwned=11">$' \
		'^  |   started 2023-11-14 22:13:20.010 UTC (1700000000010 ms since the epoch), 10 ms into the Run$' \
		'^  |   reserved 768 MiB, 256 tasks, 1.5 CPU; released after confirmed cleanup$' \
		'^  |   termination exited, exit 1, signal 0, wall 50 ms, CPU 20000 us (0.020 s), peak memory 31457280 bytes (30 MiB); scope efef' \
		'^  |   limits memory 268435456 bytes (256 MiB), peak 11.7% of it; 64 tasks; CPU 50000 us per 100 ms (0.50 CPU), used 0.40 CPU on average; deadline 60000 ms (1 min 0 s)$' \
		'^  |   output result.json  2048 bytes (2 KiB)  sha256 aaaa' \
		'^  |   agent ask answer (fake, model <script>window.__pwned=12</script>) 4096 answer bytes$' \
		'^  |   log child says <b>x</b>$' \
		'^  |   `-- child y -> flow grandchild: succeeded$' \
		'^  |       command run exited exit 0, 10 stdout and 0 stderr bytes, cleanup confirmed$' \
		'^  |       log grandchild says y$' \
		'^  `-- child z -> flow second: succeeded$' \
		'^      log second says hi$' \
		'^  log started <b>bold</b>$'; do
		grep -q -- "$want" "$T/inspect" || fail "jig inspect lacks: $want"
	done
	echo "ok: the tree, each child's effects, outputs and logs under it, human units beside exact values"
	! grep -q '^  |   log grandchild' "$T/inspect" || fail "the grandchild's log is under its parent's level"
	setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --init-groups env -i HOME="$T/home" \
		"$P/bin/jig" inspect "$T/pk" --json | jq -e '.record.children | length == 2' >/dev/null || fail "jig inspect --json"
}

case_view_bounds_children() {
	# Issue 35: the view carries each child's logs and effects; a record
	# whose children's logs alone pass the view's 1 MiB (three children of
	# 256 lines of 4000 bytes) is still served, within 1 MiB: the Run's
	# logs halved first, then the children's logs dropped and marked
	# (logs_trimmed), their effects and the tree kept.
	python3 - "$T/pk/record.json" <<'PY'
import json, sys
p = sys.argv[1]
rec = json.load(open(p))
line = "y" * 4000
rec["children"] = [{"binding": b, "flow": "big", "level": 1, "status": "succeeded", "started_ms": 1700000000010,
                    "termination": {"outcome": "exited", "wall_ms": 20, "memory_peak_bytes": 1048576, "cpu_usec": 100},
                    "effects": [{"effect": "http", "route": "r", "outcome": "response", "status": 200}],
                    "logs": [line] * 256} for b in ("a", "b", "c")]
import os
os.chmod(p, 0o600)
json.dump(rec, open(p, "w"))
os.chmod(p, 0o400)
PY
	show
	expect "GET /api/view" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
	sed '1,/^\r*$/d' "$T/resp" >"$T/view.json"
	size=$(wc -c <"$T/view.json")
	[ "$size" -le 1048576 ] || fail "the view is $size bytes"
	jq -e '(.children | length) == 3 and all(.children[]; .logs == [] and .logs_trimmed == true and (.effects | length) == 1
		and .termination.memory_peak_bytes == 1048576)' "$T/view.json" >/dev/null || fail "the children in a trimmed view: $(head -c 600 "$T/view.json")"
	echo "ok: a view of $size bytes; the children's logs trimmed and marked, their effects and facts kept"
	stop
}

case_page_and_headers() {
	show
	for path in / /app.js /app.css; do
		expect "GET $path" 200 "$(req "GET $path HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")"
		for h in "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" \
			"X-Content-Type-Options: nosniff" "Referrer-Policy: no-referrer" "Cache-Control: no-store" \
			"Cross-Origin-Resource-Policy: same-origin" "Cross-Origin-Opener-Policy: same-origin"; do
			grep -qiF "$h" "$T/resp" || fail "GET $path lacks $h"
		done
		! grep -qi '^Access-Control-' "$T/resp" || fail "GET $path has CORS headers"
	done
	# The view, with the capability: headers on API answers too, and no CORS
	# even for a request that names an Origin.
	expect "GET /api/view" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nConnection: close\r\n\r\n")"
	grep -qi '^Content-Security-Policy: default-src' "$T/resp" || fail "view lacks the CSP"
	! grep -qi '^Access-Control-' "$T/resp" || fail "view has CORS headers"
	sed -n '/^{/p' "$T/resp" | jq -e '.kind == "packet" and .final and (.artifacts | length) == 3 and .summary.flow == "hostile-report" and .summary.headline == "flow hostile-report succeeded"' >/dev/null ||
		fail "view: $(cat "$T/resp")"
	# Nothing in the view names a path outside the packet.
	! grep -q "$T" "$T/resp" || fail "the view names the packet's location"
	# A preflight is refused (a foreign Origin first) and answered without CORS.
	expect "OPTIONS preflight" 403 "$(req "OPTIONS /api/view HTTP/1.1\r\n$(H)Origin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: x-jig-capability\r\nConnection: close\r\n\r\n")"
	! grep -qi '^Access-Control-' "$T/resp" || fail "preflight has CORS headers"
	stop
}

case_host_rules() {
	show
	expect "exact Host" 200 "$(req "GET / HTTP/1.1\r\nHost: 127.0.0.1:$PORT\r\nConnection: close\r\n\r\n")"
	other=$((PORT == 65535 ? 1 : PORT + 1))
	for host in "localhost:$PORT" "127.0.0.1" "127.0.0.1:$other" "127.0.0.2:$PORT" "[::1]:$PORT" \
		"127.0.0.1.:$PORT" "LOCALHOST:$PORT" "Localhost:$PORT" "127.0.0.1:$PORT." "127.0.0.1:0$PORT" \
		"evil.example" "evil.example:$PORT" "" " 127.0.0.1:$PORT:1"; do
		got=$(req "GET / HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n\r\n")
		[ "$got" != 200 ] || fail "Host '$host' accepted"
		echo "ok: Host '$host' -> $got"
		got=$(req "GET /api/view HTTP/1.1\r\nHost: $host\r\n$(CAPH)Connection: close\r\n\r\n")
		[ "$got" != 200 ] || fail "Host '$host' reached the view"
	done
	got=$(req "GET /api/view HTTP/1.1\r\n$(CAPH)Connection: close\r\n\r\n")
	[ "$got" != 200 ] || fail "missing Host accepted"; echo "ok: no Host -> $got"
	expect "duplicated Host" 421 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(H)$(CAPH)Connection: close\r\n\r\n")"
	expect "duplicated Host, one foreign" 421 "$(req "GET /api/view HTTP/1.1\r\n$(H)Host: evil.example\r\n$(CAPH)Connection: close\r\n\r\n")"
	got=$(req "GET http://127.0.0.1:$PORT/api/view HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")
	[ "$got" != 200 ] || fail "absolute-form target accepted"; echo "ok: absolute-form -> $got"
	got=$(req "GET http://evil.example/api/view HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")
	[ "$got" != 200 ] || fail "absolute-form foreign target accepted"
	got=$(req "GET /api/view HTTP/1.0\r\n$(H)$(CAPH)\r\n")
	[ "$got" != 200 ] || fail "HTTP/1.0 accepted"; echo "ok: HTTP/1.0 -> $got"
	stop
}

case_origin_rules() {
	show
	expect "exact Origin" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nConnection: close\r\n\r\n")"
	other=$((PORT == 65535 ? 1 : PORT + 1))
	for origin in null "http://127.0.0.1:$other" "https://127.0.0.1:$PORT" "http://localhost:$PORT" \
		"http://evil.example" "http://127.0.0.1:$PORT/" "http://127.0.0.1" "HTTP://127.0.0.1:$PORT" ""; do
		expect "Origin '$origin' (view)" 403 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Origin: $origin\r\nConnection: close\r\n\r\n")"
		expect "Origin '$origin' (page)" 403 "$(req "GET / HTTP/1.1\r\n$(H)Origin: $origin\r\nConnection: close\r\n\r\n")"
	done
	expect "two Origins" 403 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nOrigin: http://127.0.0.1:$PORT\r\nConnection: close\r\n\r\n")"
	stop
}

case_fetch_site_rules() {
	show
	expect "page, none" 200 "$(req "GET / HTTP/1.1\r\n$(H)Sec-Fetch-Site: none\r\nConnection: close\r\n\r\n")"
	expect "page, same-origin" 200 "$(req "GET / HTTP/1.1\r\n$(H)Sec-Fetch-Site: same-origin\r\nConnection: close\r\n\r\n")"
	expect "view, same-origin" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Sec-Fetch-Site: same-origin\r\nConnection: close\r\n\r\n")"
	for site in cross-site same-site SAME-ORIGIN "same-origin, none" ""; do
		expect "page, '$site'" 403 "$(req "GET / HTTP/1.1\r\n$(H)Sec-Fetch-Site: $site\r\nConnection: close\r\n\r\n")"
		expect "view, '$site'" 403 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Sec-Fetch-Site: $site\r\nConnection: close\r\n\r\n")"
	done
	expect "view, none" 403 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Sec-Fetch-Site: none\r\nConnection: close\r\n\r\n")"
	expect "app.js, none" 403 "$(req "GET /app.js HTTP/1.1\r\n$(H)Sec-Fetch-Site: none\r\nConnection: close\r\n\r\n")"
	expect "two fetch sites" 403 "$(req "GET / HTTP/1.1\r\n$(H)Sec-Fetch-Site: none\r\nSec-Fetch-Site: none\r\nConnection: close\r\n\r\n")"
	stop
}

case_capability_refusals() {
	show
	expect "right capability" 200 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
	wrong=$(echo "$CAP" | tr '0-9a-f' '1-9a-f0')
	prefix=$(echo "$CAP" | cut -c1-63)
	upper=$(echo "$CAP" | tr a-f A-F)
	n=0
	for what in missing wrong prefix longer upper cookie query bearer duplicated empty; do
		case $what in
		missing) extra="" ; path=/api/view ;;
		wrong) extra="X-Jig-Capability: $wrong\r\n" ; path=/api/view ;;
		prefix) extra="X-Jig-Capability: $prefix\r\n" ; path=/api/view ;;
		longer) extra="X-Jig-Capability: ${CAP}0\r\n" ; path=/api/view ;;
		upper) extra="X-Jig-Capability: $upper\r\n" ; path=/api/view ;;
		cookie) extra="Cookie: cap=$CAP; X-Jig-Capability=$CAP\r\n" ; path=/api/view ;;
		query) extra="" ; path="/api/view?cap=$CAP" ;;
		bearer) extra="Authorization: Bearer $CAP\r\n" ; path=/api/view ;;
		duplicated) extra="$(CAPH)$(CAPH)" ; path=/api/view ;;
		empty) extra="X-Jig-Capability: \r\n" ; path=/api/view ;;
		esac
		for p in "$path" /api/artifact/0000000000000000000000000000000000000000000000000000000000000000 /api/close; do
			m=GET; [ "$p" != /api/close ] || m=POST
			expect "$what capability, $m $p" 401 "$(req "$m $p HTTP/1.1\r\n$(H)Origin: http://127.0.0.1:$PORT\r\n${extra}Connection: close\r\n\r\n")"
			answer >"$T/a.$n"
			[ $n -eq 0 ] || cmp -s "$T/a.0" "$T/a.$n" || fail "the 401 answers differ ($what): $(cat "$T/a.$n")"
			n=$((n + 1))
		done
	done
	stop
	# Nothing jig wrote holds the capability: not its output but the link
	# line, not the packet, home, cache or temporary files.
	[ "$(grep -c "$CAP" "$T/out")" -eq 1 ] && grep -q "^display: http://127.0.0.1:$PORT/#cap=$CAP" "$T/out" || fail "the capability is printed other than in the one link"
	! grep -q "$CAP" "$T/err" || fail "the capability is on stderr"
	no_cap_in_files "$CAP"
}

case_methods_refused() {
	show
	for m in POST PUT DELETE PATCH HEAD OPTIONS TRACE PROPFIND; do
		for p in / /api/view /app.js; do
			expect "$m $p" 405 "$(req "$m $p HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")"
		done
	done
	expect "GET /api/close" 405 "$(req "GET /api/close HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
	expect "PUT /api/close" 405 "$(req "PUT /api/close HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")"
	# The close request needs a browser's Origin.
	expect "POST /api/close without Origin" 403 "$(req "POST /api/close HTTP/1.1\r\n$(H)$(CAPH)Content-Length: 0\r\nConnection: close\r\n\r\n")"
	kill -0 "$JPID" || fail "a refused close closed the display"
	stop
}

case_bodies_refused() {
	show
	expect "GET with a body" 400 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Content-Length: 5\r\nConnection: close\r\n\r\nhello")"
	expect "GET / with a body" 400 "$(req "GET / HTTP/1.1\r\n$(H)Content-Length: 2\r\nConnection: close\r\n\r\n{}")"
	expect "GET chunked" 400 "$(req "GET /api/view HTTP/1.1\r\n$(H)$(CAPH)Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")"
	expect "POST close with a body" 400 "$(req "POST /api/close HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{\"apply\":true}")"
	kill -0 "$JPID" || fail "a refused close closed the display"
	stop
}

case_artifact_ids() {
	show
	id=$(sha256sum "$T/pk/files/report.html" | cut -d' ' -f1)
	expect "known id" 200 "$(req "GET /api/artifact/$id HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
	sed -n '/^{/p' "$T/resp" | jq -r .excerpt >"$T/excerpt"
	{ cat "$T/pk/files/report.html"; echo; } >"$T/excerpt.want"
	cmp -s "$T/excerpt" "$T/excerpt.want" || fail "the excerpt is not the exact text"
	upper=$(echo "$id" | tr a-f A-F)
	n=0
	for p in "/api/artifact/0000000000000000000000000000000000000000000000000000000000000000" \
		"/api/artifact/$upper" "/api/artifact/${id}0" "/api/artifact/$(echo "$id" | cut -c2-)" \
		"/api/artifact/../../../../etc/passwd" "/api/artifact/..%2f..%2fetc%2fpasswd" "/api/artifact/%2e%2e/record.json" \
		"/api/artifact/report.html" "/api/artifact/notes/readme.md" "/api/artifact/files/report.html" \
		"/api/artifact/$id/" "/api/artifact/$id/../$id" "/api/artifact/" "/api/artifact" \
		"/api/artifact/$id?x=1" "/api/../record.json" "/api/record.json" "/record.json" "/files/report.html" \
		"//api/artifact/$id" "/api//artifact/$id" "/./api/view" "/api/./view" "/api/view/" "/%61pi/view" \
		"/index.html" "/api/view/.." "/$T/pk/record.json"; do
		expect "$p" 404 "$(req "GET $p HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")"
		answer >"$T/a.$n"
		[ $n -eq 0 ] || cmp -s "$T/a.0" "$T/a.$n" || fail "the 404 answers differ ($p): $(cat "$T/a.$n")"
		n=$((n + 1))
	done
	# A NUL escape: the parser refuses it before the handler (no answer).
	got=$(req "GET /api/artifact/$id%00 HTTP/1.1\r\n$(H)$(CAPH)Connection: close\r\n\r\n")
	case $got in 400 | 404 | closed) echo "ok: %00 -> $got" ;; *) fail "%00: $got" ;; esac
	stop
}

case_close_from_page() {
	show
	expect "POST /api/close" 204 "$(req "POST /api/close HTTP/1.1\r\n$(H)$(CAPH)Origin: http://127.0.0.1:$PORT\r\nSec-Fetch-Site: same-origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")"
	set +e
	wait "$JPID"
	rc=$?
	set -e
	JPID=""
	[ "$rc" -eq 0 ] || fail "exit $rc after close"
	grep -q '^display: closed (closed from the page)' "$T/out" || fail "no closing line: $(cat "$T/out")"
	not_listening "$PORT"
}

case_limits_request_size() {
	show
	long=$(head -c 20000 /dev/zero | tr '\0' a)
	got=$(req "GET /$long HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")
	case $got in 414 | 431 | 400 | closed) echo "ok: 20000-byte request line -> $got" ;; *) fail "long request line: $got" ;; esac
	got=$(req "GET / HTTP/1.1\r\n$(H)X-Big: $long\r\nConnection: close\r\n\r\n")
	case $got in 431 | 400 | 413 | closed) echo "ok: 20000-byte header -> $got" ;; *) fail "long header: $got" ;; esac
	many=$(i=0; while [ $i -lt 400 ]; do printf 'X-H%d: v\\r\\n' $i; i=$((i + 1)); done)
	got=$(req "GET / HTTP/1.1\r\n$(H)${many}Connection: close\r\n\r\n")
	case $got in 431 | 400 | 413 | closed) echo "ok: 400 headers -> $got" ;; *) fail "many headers: $got" ;; esac
	expect "still serving" 200 "$(req "GET / HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")"
	stop
}

case_limits_slow_client() {
	show
	secs=$($RAW "$PORT" slow)
	echo "a trickling client was cut after $secs s (head deadline 5 s)"
	awk -v s="$secs" 'BEGIN { exit !(s >= 4 && s <= 8) }' || fail "slow client cut after $secs s"
	expect "still serving" 200 "$(req "GET / HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")"
	stop
}

case_limits_client_cap() {
	show
	got=$($RAW "$PORT" cap 16)
	expect "the 17th client" refused "$got"
	sleep 0.5
	expect "served after the others left" 200 "$(req "GET / HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")"
	stop
}

case_limits_noread_under_load() {
	command -v wrk >/dev/null || fail "wrk is not installed (scripts/deps.sh)"
	# In the ASan build, freed memory waits in ASan's quarantine (256 MiB)
	# instead of being reused: without it the same bound holds.
	! ldd "$P/bin/jig" | grep -q libasan || SHOW_ENV=ASAN_OPTIONS=quarantine_size_mb=0
	show
	wrk -t1 -c8 -d20s "http://127.0.0.1:$PORT/" >"$T/wrk" 2>&1 &
	wpid=$!
	sleep 1
	set -- $($RAW "$PORT" noread "$JPID" 25)
	wait "$wpid" || true
	cat "$T/wrk"
	echo "non-reading client: $1 ${2:-}; jig RSS $3 KiB before, $4 KiB after"
	[ "$1" = dropped ] || fail "the non-reading client was not dropped"
	# dropped by the 10 s inactivity timeout, not at once (keep-alive holds)
	awk -v s="$2" 'BEGIN { exit !(s >= 9 && s <= 16) }' || fail "dropped after $2 s, not at the 10 s inactivity timeout"
	[ $(($4 - $3)) -lt 8192 ] || fail "memory grew by $(($4 - $3)) KiB"
	grep -q 'Requests/sec' "$T/wrk" || fail "wrk did not run"
	expect "still serving" 200 "$(req "GET / HTTP/1.1\r\n$(H)Connection: close\r\n\r\n")"
	stop
}

case_lifecycle() {
	show
	ss -Htln "sport = :$PORT" >"$T/ss"
	[ "$(wc -l <"$T/ss")" -eq 1 ] && grep -q "127.0.0.1:$PORT " "$T/ss" || fail "not listening on 127.0.0.1 only: $(cat "$T/ss")"
	p1=$PORT c1=$CAP
	pid1=$JPID
	JPID=""
	show
	[ "$PORT" != "$p1" ] && [ "$CAP" != "$c1" ] || fail "a second command reused the port or capability"
	expect "the first capability on the second display" 401 "$(req "GET /api/view HTTP/1.1\r\n$(H)X-Jig-Capability: $c1\r\nConnection: close\r\n\r\n")"
	stop
	# SIGKILL: the kernel closes the socket with the process.
	kill -KILL "$pid1"
	wait "$pid1" 2>/dev/null || true
	not_listening "$p1"
	no_cap_in_files "$c1"
	no_cap_in_files "$CAP"
}

case_refuse_tampered_packet() {
	printf 'x' >>"$T/pk/files/pic.svg"
	set +e
	setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --init-groups env -i HOME="$T/home" \
		"$P/bin/jig" inspect "$T/pk" --display web >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	[ "$rc" -eq 4 ] || fail "a tampered packet: exit $rc"
	! grep -q 'display: http' "$T/out" || fail "a display was offered for a tampered packet"
	grep -q 'pic.svg is missing or differs from the record' "$T/err" || fail "error: $(cat "$T/err")"
}

case_usage() {
	for args in "--display" "--display tui" "--display web --json"; do
		set +e
		# shellcheck disable=SC2086
		"$P/bin/jig" inspect "$T/pk" $args >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$args': exit $rc, $(cat "$T/err")"
		echo "ok: '$args' -> $(cat "$T/err")"
	done
	# jig run refuses the same before anything is read or run.
	for args in "--display" "--display tui" "--display web --json"; do
		set +e
		# shellcheck disable=SC2086
		"$P/bin/jig" run some-flow --output "$T/never" $args >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/never" ] || fail "run '$args': exit $rc, $(cat "$T/err")"
		echo "ok: run '$args' -> $(cat "$T/err")"
	done
}

case_browser() {
	[ -x /usr/bin/chromium ] || fail "Debian's chromium is not installed (scripts/deps.sh)"
	: "${JIG_DISPLAY_BROWSER:?}" "${JIG_ARTIFACTS:?}"
	mkdir -p "$JIG_ARTIFACTS"
	mkdir "$T/shots" && chown "$USER_NAME" "$T/shots"
	show
	python3 - "$T/pk" "$LINK" "$PORT" "$CAP" "$JIG_DISPLAY_BROWSER/node_modules" "$T/shots" >"$T/args.json" <<'PY'
import json, os, sys
d, link, port, cap, mods, out = sys.argv[1:]
rec = json.load(open(d + "/record.json"))
files = {o["path"]: open(d + "/files/" + o["path"], encoding="utf-8").read() for o in rec["outputs"]}
print(json.dumps({"link": link, "port": port, "cap": cap, "modules": mods, "out": out, "files": files,
                  "logs": rec["logs"], "children": rec["children"]}))
PY
	chmod 644 "$T/args.json"
	# The browser runs as the unprivileged user, with its own profile.
	(cd "$T/shots" && setpriv --reuid="$USER_NAME" --regid="$(id -g "$USER_NAME")" --init-groups \
		env -i HOME="$T/home" PATH=/usr/bin:/bin node "$JIG_SOURCE/tests/display/browser.mjs" "$T/args.json") ||
		fail "the browser test failed"
	set +e
	wait "$JPID"
	rc=$?
	set -e
	JPID=""
	[ "$rc" -eq 0 ] && grep -q '^display: closed (closed from the page)' "$T/out" || fail "not closed from the page: $rc"
	not_listening "$PORT"
	cp "$T/shots"/*.png "$JIG_ARTIFACTS/"
	echo "screenshots: $(ls "$JIG_ARTIFACTS"/display-*.png)"
	no_cap_in_files "$CAP"
}

"case_$1"
