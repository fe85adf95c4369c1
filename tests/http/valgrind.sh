#!/bin/sh
# valgrind over jig-http-worker: a malformed input, a refused request (an
# alias of 127.0.0.1), and a request to a closed loopback port (libcurl set
# up, connect refused, torn down). Usage: valgrind.sh VALGRIND WORKER
set -eu
vg=$1 worker=$2
g='{"method":"GET","url":"http://127.0.0.1:1/x","max_request_bytes":10,"max_response_bytes":10,"timeout_ms":2000,"connect_timeout_ms":2000}'
for in in '[1,2' "{\"format\":\"jig-http-request/1\",\"grant\":$g,\"method\":\"GET\",\"url\":\"http://127.1:1/x\"}" \
	"{\"format\":\"jig-http-request/1\",\"grant\":$g,\"method\":\"GET\",\"url\":\"http://127.0.0.1:1/x\",\"bearer\":\"b\"}"; do
	out=$(printf '%s' "$in" | "$vg" --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$worker")
	echo "$out"
	case $out in *'"outcome":'*) ;; *) echo "FAIL: no outcome" >&2; exit 1 ;; esac
done
