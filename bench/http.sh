#!/bin/sh
# HTTP effect cost (issue 6, item 5), inside the supported-host VM:
#   tests/vm/run --timeout 900 -- sh bench/http.sh build
# One paired hyperfine run over the same loopback peer (tests/http/peer.py):
#   curl      20 bare `curl` requests
#   worker    20 jig-http-worker runs, no scope (the worker's own cost)
#   flow-20   `jig run` of a Flow making 20 jig.http requests
#   flow-0    the same Flow making none
# Per request, the HTTP effect adds (flow-20 - flow-0)/20 over a Flow; that
# is the requests-per-second figure of a Flow, against curl/20.
set -eu
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'kill $peer 2>/dev/null; chmod -R u+w "$T"; rm -rf "$T"' EXIT
cp -a "$B/test-prefix" "$T/prefix"
JIG=$T/prefix/bin/jig
SNAP=$T/prefix/lib/jig/$(readlink "$T/prefix/lib/jig/current")
/usr/bin/python3 "$SRC/tests/http/peer.py" --port 18080 --portfile "$T/port" & peer=$!
while [ ! -s "$T/port" ]; do sleep 0.05; done
cp -r "$SRC/tests/flow/http" "$T/p"
cd "$T/p"
"$JIG" review --yes >/dev/null
n=20
i=0; s=""; while [ $i -lt $n ]; do s="$s${s:+,}{\"do\":\"http\",\"route\":\"ok\"}"; i=$((i + 1)); done
echo "[$s]" >"$T/steps20"
echo "[]" >"$T/steps0"
u=http://127.0.0.1:18080/ok
printf '{"grant":{"method":"GET","url":"%s","max_request_bytes":65536,"max_response_bytes":1048576,"timeout_ms":10000,"connect_timeout_ms":10000},"method":"GET","url":"%s"}' "$u" "$u" >"$T/in"
loop() { echo "i=0; while [ \$i -lt $n ]; do $1 >/dev/null; i=\$((i + 1)); done"; }
"$JIG" run caller --input steps="$T/steps20" --output "$T/check" >/dev/null
jq -e 'length == 20 and all(.ok)' "$T/check/files/result.json" >/dev/null || { echo "the Flow's requests failed"; exit 1; }
hyperfine -N --warmup 2 --runs 10 --export-json "$T/http.json" \
	--prepare "sh -c 'chmod -R u+w $T/out 2>/dev/null; rm -rf $T/out; true'" \
	"sh -c '$(loop "curl -s $u")'" \
	"sh -c '$(loop "$SNAP/libexec/jig-http-worker <$T/in")'" \
	"sh -c '$JIG run caller --input steps=$T/steps20 --output $T/out'" \
	"sh -c '$JIG run caller --input steps=$T/steps0 --output $T/out'"
jq -r --argjson n $n '.results | (.[0].median / $n) as $curl | (.[1].median / $n) as $w | ((.[2].median - .[3].median) / $n) as $eff |
  "per request: curl \($curl*1000*10|floor/10) ms, worker without scope \($w*1000*10|floor/10) ms, jig.http from a Flow \($eff*1000*10|floor/10) ms (\(1/$eff|floor) requests/s; \(($eff/$curl)*10|floor/10)x curl, +\((($eff-$curl)*1000)|floor) ms each)"' "$T/http.json"
