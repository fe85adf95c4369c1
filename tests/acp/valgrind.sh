#!/bin/sh
# valgrind over jig-acp-worker: malformed and refused requests (the parser),
# and whole turns with the fake agent (spawn, the poll loop, a refusal at
# initialize, a withheld answer, the exit sequence up to SIGKILL). valgrind
# 3.19 has no pidfd_open (it warns about syscall 434): the worker's
# fallback, polling for the client's exit, is the path taken here.
# Usage: valgrind.sh VALGRIND WORKER FAKE_AGENT
set -eu
vg=$1 worker=$2 agent=$3
d=$(mktemp -d /var/tmp/jig-acp-vg.XXXXXX)
trap 'rm -rf "$d"' EXIT
lim='{"deadline_ms":30000,"cancel_grace_ms":300,"exit_grace_ms":3000,"max_line_bytes":65536,"max_messages":100,"max_transcript_bytes":65536}'
short='{"deadline_ms":1000,"cancel_grace_ms":300,"exit_grace_ms":300,"max_line_bytes":65536,"max_messages":100,"max_transcript_bytes":65536}'
# req MODE [LIMITS]: a request for the fake agent in MODE (ARG: the
# credential's name).
req() {
	printf '{"format":"jig-acp-request/1","argv":["%s","%s","TOKEN"],"env":{"PATH":"/usr/bin:/bin","TOKEN":"tok-vg-1"},"secrets":["tok-vg-1",""],"cwd":"%s","expect":{"name":"fake-agent","version":"1.0.0"},"prompt":[{"type":"text","text":"hi"}],"limits":%s}' \
		"$agent" "$1" "$d" "${2:-$lim}"
}
for c in '[1,2:refused' '{"format":"jig-acp-request/1","argv":["x"]}:refused' \
	"$(req answer | sed 's/"limits"/"extra":1,"limits"/'):refused" \
	"$(req answer):answer" "$(req echo):withheld" "$(req badversion):refused" "$(req crash):failed" \
	"$(req hang "$short"):timeout"; do
	in=${c%:*} want=${c##*:}
	out=$(printf '%s' "$in" | "$vg" --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$worker")
	echo "$out"
	case $out in *"\"outcome\":\"$want\""*) ;; *) echo "FAIL: not $want" >&2; exit 1 ;; esac
done
