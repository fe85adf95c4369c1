#!/bin/sh
# The ACP worker (plugins/acp, jig-acp-worker) against a scripted ACP agent
# (tests/acp/fake_agent.c, jig-fake-agent), run directly as the unprivileged
# user: the turn, what it refuses, what it withholds, and that no process of
# the agent outlives it. Plain lane; the worker inside its scope is the VM
# lane's. Each case_* is one ctest (acp.<case>).
set -eu
: "${JIG_ACP_WORKER:?}" "${JIG_FAKE_AGENT:?}" "${JIG_PI_LAUNCHER:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-acp.XXXXXX)
chmod 755 "$T"; chown "$USER_NAME" "$T"
mkdir "$T/work" "$T/home"; chown "$USER_NAME" "$T/work" "$T/home"
# A credential of this run only: parallel cases never see each other's.
CRED="cred-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# An agent that escaped its group (fork mode) is this script's to stop.
trap 'for p in $(awk '\''$1 == "escaped" {print $2}'\'' "$T/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# request MODE [ARG]: $T/in, the request for the fake agent in MODE, as the
# host would write it. Knobs: PROMPT, XENV (merged into env), EXPECT, and
# the limits DEADLINE CANCEL_GRACE EXIT_GRACE MAX_LINE MAX_MSG MAX_TEXT.
request() {
	: >"$T/pids"; chown "$USER_NAME" "$T/pids"
	prompt=${PROMPT:-'[{"type":"text","text":"hello"}]'}
	xenv=${XENV:-'{}'}
	exp=${EXPECT:-'{"name":"fake-agent","version":"1.0.0"}'}
	# The credential goes through the environment, never a command line.
	CRED=$CRED jq -n --arg agent "$JIG_FAKE_AGENT" --arg mode "$1" --arg arg "${2:-}" --arg t "$T" \
		--argjson prompt "$prompt" --argjson xenv "$xenv" --argjson expect "$exp" \
		--argjson limits "{\"deadline_ms\":${DEADLINE:-5000},\"cancel_grace_ms\":${CANCEL_GRACE:-300},\
\"exit_grace_ms\":${EXIT_GRACE:-300},\"max_line_bytes\":${MAX_LINE:-1048576},\"max_messages\":${MAX_MSG:-1000},\
\"max_transcript_bytes\":${MAX_TEXT:-1048576}}" '{
		format: "jig-acp-request/1",
		argv: ([$agent, $mode] + (if $arg == "" then [] else [$arg] end)),
		env: ({PATH: "/usr/bin:/bin", HOME: ($t + "/home"), JIG_TEST_CRED: env.CRED,
		       FAKE_AGENT_PIDFILE: ($t + "/pids")} + $xenv),
		secrets: [env.CRED],
		cwd: ($t + "/work"),
		expect: $expect,
		prompt: $prompt,
		limits: $limits}' >"$T/in"
	if [ -n "${XREQ:-}" ]; then jq -c ". + $XREQ" "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"; fi
}
# run [NAME=VALUE...]: the worker as the user on $T/in (with the
# assignments in its own environment); result in $T/out, wall time in $MS.
run() {
	start=$(date +%s%N)
	runuser -u "$USER_NAME" -- env "$@" "$JIG_ACP_WORKER" <"$T/in" >"$T/out" 2>"$T/err" ||
		fail "worker exit $?: $(cat "$T/err")"
	MS=$((($(date +%s%N) - start) / 1000000))
	[ "$(wc -l <"$T/out")" -eq 1 ] || fail "not one result line: $(cat "$T/out")"
}
turn() { request "$@"; run; }
outcome() { jq -r .outcome "$T/out"; }
expect() { # expect OUTCOME [PATTERN]
	[ "$(outcome)" = "$1" ] || fail "outcome $(outcome), expected $1: $(cat "$T/out")"
	[ -z "${2:-}" ] || jq -r .error "$T/out" | grep -q -- "$2" || fail "error does not match /$2/: $(jq -r .error "$T/out")"
	jq -e '.format == "jig-acp-result/1" and (.counts | type) == "object" and (.timing | type) == "object"' \
		"$T/out" >/dev/null || fail "not a result: $(cat "$T/out")"
}
check() { jq -e "$1" "$T/out" >/dev/null || fail "not $1: $(cat "$T/out")"; }
text() { jq -r .text "$T/out"; }
pid_of() { awk -v r="$1" '$1 == r {print $2}' "$T/pids"; }
# running PID: the process exists and is not a zombie (this lane's pid 1
# may reap the orphans of a killed group late).
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
# no_agent_left: neither the agent nor anything of its process group runs.
no_agent_left() {
	a=$(pid_of agent)
	[ -n "$a" ] || fail "the agent did not start"
	! running "$a" || fail "the agent ($a) still runs"
	left=$(ps -e -o pgid=,stat=,pid= | awk -v g="$a" '$1 == g && $2 !~ /^Z/ {print $3}')
	[ -z "$left" ] || fail "its group still has $left"
}
no_agent_started() { [ ! -s "$T/pids" ] || fail "an agent was started for a refused request"; }

case_answer() {
	PROMPT='[{"type":"text","text":"hello"},{"type":"text","text":" world"}]'
	turn answer
	expect answer
	check '.text == "ANSWER:hello world" and .stop_reason == "end_turn" and has("error") == false'
	check '.agent == {"name": "fake-agent", "version": "1.0.0"}'
	check '.counts | .lines == 5 and .messages == 5 and .skipped_lines == 0 and .updates == 2 and .late_updates == 0
		and .requests_refused == 0 and .permissions_refused == 0 and .transcript_bytes == 18
		and .bytes_in > 0 and .bytes_out > 0'
	check '.exit == {"how": "exited", "status": 0, "forced": "none"}'
	check '.timing | .initialize_ms >= 0 and .prompt_ms >= 0 and .total_ms >= .prompt_ms'
	no_agent_left
}
case_profile_meta_and_model() {
	# A host profile: session/new carries the profile's _meta, and the
	# model is selected with session/set_model before the prompt.
	request profile
	jq '.session_meta = {"disableBuiltInTools": true, "claudeCode": {"options": {"settingSources": []}}} | .model = "m-1"' \
		"$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect answer
	text | jq -e '.meta == {"disableBuiltInTools": true, "claudeCode": {"options": {"settingSources": []}}} and .model == "m-1"' >/dev/null ||
		fail "the agent was told: $(text)"
	# Without them: no _meta and no session/set_model.
	turn profile
	expect answer
	text | jq -e '.meta == null and .model == null' >/dev/null || fail "the agent was told: $(text)"
	jq '.session_meta = [1]' "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect refused "session_meta must be an object"
}
case_last_line_without_newline() {
	# A response written as the client's last bytes, with no newline, and
	# the client gone at once: still the answer.
	turn nonewline
	expect answer
	check '.stop_reason == "end_turn"'
}
case_null_id_error() {
	# JSON-RPC: an error with a null id (the client could not read our
	# request) fails the step at once, not at the deadline.
	DEADLINE=20000 turn nullid
	expect failed "could not read session/new: error -32700: Parse error"
	[ "$MS" -lt 10000 ] || fail "took $MS ms"
}
case_client_closes_input() {
	# A client that closes its input: the next message fails the turn at
	# once, naming the step.
	DEADLINE=20000 turn closein
	expect failed "closed its input before"
	[ "$MS" -lt 10000 ] || fail "took $MS ms"
	no_agent_left
}
case_env_is_exactly_the_request() {
	# The agent's environment is the request's, nothing of the worker's
	# own; its credential shows in no other process it can read; of the
	# worker's descriptors (7 here) it has none but its stdin and stdout.
	XENV='{"LANG":"C.UTF-8","FAKE_AGENT_PROBE":"/etc/passwd:/nonexistent"}'
	request report JIG_TEST_CRED
	run WORKER_ONLY=leak SHELL=/bin/sh 7</etc/hostname
	expect answer
	text | jq -e --arg cwd "$T/work" --arg home "$T/home" --argjson uid "$(id -u "$USER_NAME")" '
		.env == ["FAKE_AGENT_PIDFILE", "FAKE_AGENT_PROBE", "HOME", "JIG_TEST_CRED", "LANG", "PATH"]
		and .cwd == $cwd and .entries == [] and .home == $home and .uid == $uid
		and .credential.found_in == [] and .probe == {"/etc/passwd": true, "/nonexistent": false}
		and .sid == .pid and .pgid == .pid and .fds == {"open": [0, 1, 2], "stderr": "/dev/null"}' \
		>/dev/null || fail "the agent sees $(text)"
}
refused_method() { # refused_method MODE: the agent's request is answered -32601
	turn "$1"
	expect answer
	text | jq -e '.error == {"code": -32601, "message": "Method not found"} and (has("result") | not)' >/dev/null ||
		fail "the agent got $(text)"
	check '.counts.requests_refused == 1 and .counts.permissions_refused == 0'
}
case_fs() { refused_method fs; }
case_terminal() { refused_method terminal; }
case_mcp() { refused_method mcp; }
case_permission() {
	turn permission
	expect answer
	text | jq -e '.result == {"outcome": {"outcome": "selected", "optionId": "r"}}' >/dev/null || fail "the agent got $(text)"
	check '.counts.permissions_refused == 1 and .counts.requests_refused == 0'
}
case_longline() {
	turn longline 2097152
	expect failed "the client sent a line over 1048576 bytes"
	check 'has("text") == false'
	no_agent_left
}
case_flood() {
	MAX_MSG=1000
	turn flood 100000
	expect failed "the client sent more than 1000 messages"
	no_agent_left
}
case_bigtext() {
	turn bigtext 4194304
	expect failed "the agent's text is over 1048576 bytes"
	check 'has("text") == false and .counts.transcript_bytes <= 1048576'
	no_agent_left
}
case_transcript_at_cap() {
	MAX_TEXT=200000
	turn bigtext 200000
	expect answer
	check '.counts.transcript_bytes == 200000 and (.text | length) == 200000'
	MAX_TEXT=199999
	turn bigtext 200000
	expect failed "the agent's text is over 199999 bytes"
}
case_line_at_cap() {
	# A line of exactly max_line_bytes (without its newline) is read (and,
	# not being JSON, skipped); one byte more ends the turn.
	MAX_LINE=4096
	turn longline 4096
	expect answer
	check '.counts.skipped_lines == 1 and .text == "ANSWER:hello"'
	turn longline 4097
	expect failed "the client sent a line over 4096 bytes"
}
case_messages_at_cap() {
	# The turn is 5 messages (3 responses, 2 chunks) plus the flood.
	MAX_MSG=25
	turn flood 20
	expect answer
	check '.counts.messages == 25 and .counts.updates == 22'
	MAX_MSG=24
	turn flood 20
	expect failed "the client sent more than 24 messages"
}
case_crash() {
	turn crash
	expect failed "the client exited with status 3 before answering session/prompt"
	check '.exit == {"how": "exited", "status": 3, "forced": "none"}'
	no_agent_left
}
case_segv() {
	turn segv
	expect failed "the client was killed by signal 11 (SIGSEGV) before answering session/prompt"
	check '.exit.how == "signaled" and .exit.signal == 11 and .exit.forced == "none"'
	no_agent_left
}
case_hang() {
	# It ignores session/cancel, stdin's end and SIGTERM: killed, on time.
	DEADLINE=1000 CANCEL_GRACE=300 EXIT_GRACE=300
	turn hang
	expect timeout "the deadline of 1000 ms passed; the client did not answer session/cancel within 300 ms"
	check '.exit == {"how": "signaled", "signal": 9, "forced": "kill"} and has("text") == false'
	[ "$MS" -ge 1000 ] && [ "$MS" -lt 3500 ] || fail "took $MS ms (deadline 1000 + graces 300, 300, 300)"
	no_agent_left
}
case_hang_kill_bound_under_load() {
	# The host's graces (cancel 2000 ms, exit 1000 ms; host/effects/agents.c):
	# a client that ignores session/cancel, stdin's end and SIGTERM while
	# four of its processes spin on the CPU is killed within the 4 s after
	# the deadline docs/agents.md states (plus 1 s for scheduling).
	DEADLINE=1000 CANCEL_GRACE=2000 EXIT_GRACE=1000
	turn hang 4
	expect timeout "did not answer session/cancel within 2000 ms"
	check '.exit == {"how": "signaled", "signal": 9, "forced": "kill"}'
	[ "$MS" -ge 5000 ] && [ "$MS" -lt 6000 ] || fail "took $MS ms (deadline 1000 + cancel 2000 + exit 1000 + 1000)"
	echo "deadline to SIGKILL and reaped: $((MS - 1000)) ms"
	for p in $(pid_of spinner); do ! running "$p" || fail "spinner $p still runs"; done
	no_agent_left
}
case_hang_cancel() {
	DEADLINE=1000 CANCEL_GRACE=1000 EXIT_GRACE=300
	turn hang_cancel
	expect timeout "honoured session/cancel"
	check '.stop_reason == "cancelled" and has("text") == false and (.exit.forced == "none" or .exit.forced == "term")'
	[ "$MS" -lt 3000 ] || fail "took $MS ms"
	no_agent_left
}
case_late() {
	turn late
	expect answer
	check '.text == "ANSWER:hello" and .counts.late_updates == 5 and .counts.updates == 2'
}
case_echo() {
	# An answer that contains the credential is withheld, whole.
	turn echo JIG_TEST_CRED
	expect withheld "contains a credential"
	check 'has("text") == false'
	! grep -qF -e "$CRED" "$T/out" "$T/err" || fail "the credential is in the worker's output"
}
case_badversion() {
	turn badversion
	expect refused "the client speaks ACP protocol version 2; the worker speaks version 1"
	check '.counts.messages == 1 and has("text") == false and .agent.name == "fake-agent"'
	no_agent_left
}
case_wrongname() {
	turn wrongname
	expect refused "the client reports name someone-else, reviewed fake-agent; review again"
	check '.agent.name == "someone-else" and .counts.messages == 1'
}
case_wrong_version() {
	XENV='{"FAKE_AGENT_VERSION":"1.0.1"}'
	turn answer
	expect refused "the client reports version 1.0.1, reviewed 1.0.0; review again"
	# Only what the request names is checked.
	EXPECT='{"name":"fake-agent"}'
	turn answer
	expect answer
	check '.agent.version == "1.0.1"'
}
case_noise() {
	turn noise
	expect answer
	check '.text == "ANSWER:hello" and .counts.skipped_lines == 9 and .counts.lines == 14 and .counts.messages == 5'
}
# chunk TEXT_JSON [JSONRPC_MEMBER]: an agent_message_chunk line of the fake
# agent's session, TEXT_JSON as the text's JSON (escapes as written).
chunk_line() {
	printf '{%s"method":"session/update","params":{"sessionId":"sess-fake-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%s}}}}' \
		"${2-\"jsonrpc\":\"2.0\",}" "$1"
}
case_chunk_with_nul() {
	# A valid chunk whose text holds \u0000: jig passes on text only, so
	# the turn fails and says why (never an answer without that chunk).
	turn raw "$(chunk_line '"a\u0000b"')"
	expect failed "the client sent a message the worker cannot pass on (line 3): a string holds U+0000 (NUL"
	check 'has("text") == false and .counts.skipped_lines == 1'
	no_agent_left
	# The same for a lone surrogate escape and for bytes that are not UTF-8.
	turn raw "$(chunk_line '"a\ud800b"')"
	expect failed "a string holds a lone UTF-16 surrogate escape"
	turn raw "$(chunk_line '"a%ffb"')"
	expect failed "the line is not UTF-8 text"
	# A paired surrogate is a character: passed on.
	turn raw "$(chunk_line '"\ud83d\ude00"')"
	expect answer
	check '.text == "😀ANSWER:hello" and .counts.skipped_lines == 0'
}
case_jsonrpc_required() {
	# Every incoming message must say "jsonrpc": "2.0"; another (1.0, a
	# number, none) is counted and ignored like a line that is not JSON:
	# the chunk is not in the answer and skipped_lines shows it.
	for member in '"jsonrpc":"1.0",' '"jsonrpc":2.0,' ''; do
		turn raw "$(chunk_line '"NOT-2.0 "' "$member")"
		expect answer
		check '.text == "ANSWER:hello" and .counts.skipped_lines == 1 and .counts.messages == 5 and .counts.updates == 2'
	done
	# A response to the prompt (id 5) without it is no response: had it
	# been taken, the turn would have ended before the agent's chunks.
	turn raw '{"id":5,"result":{"stopReason":"end_turn"}}'
	expect answer
	check '.text == "ANSWER:hello" and .counts.skipped_lines == 1'
}
case_unknown_stop_reason() {
	# ACP v1's stop reasons pass; any other is a protocol error, not an end.
	for r in end_turn max_tokens max_turn_requests refusal cancelled; do
		turn stop "$r"
		expect answer
		check ".stop_reason == \"$r\" and .text == \"ANSWER:hello\""
	done
	turn stop paused
	expect failed "the client's session/prompt result has an unknown stopReason paused (ACP v1: end_turn"
	check '.stop_reason == "paused" and has("text") == false'
	turn stop 'end_turn '
	expect failed "unknown stopReason end_turn "
	no_agent_left
}
case_fork() {
	# The group's other process is stopped with it; the one that left the
	# group with setsid() is the scope cgroup's to fence (VM lane), here
	# this script's.
	turn fork
	expect answer
	check '.text == "ANSWER:hello" and .exit.status == 0'
	c=$(pid_of group_child)
	[ -n "$c" ] && [ -n "$(pid_of escaped)" ] || fail "the agent did not fork: $(cat "$T/pids")"
	! running "$c" || fail "the agent's group child ($c) still runs"
	running "$(pid_of escaped)" || fail "the escaped child is gone (the test proves less than it says)"
	no_agent_left
}
case_error() {
	turn error
	expect failed "the client answered session/prompt with error -32000: model unavailable"
	no_agent_left
}
case_start_failure() {
	request answer
	jq -c '.argv = ["/nonexistent/agent"]' "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect failed "cannot start the client /nonexistent/agent: exec: No such file or directory"
	check '.exit == {"how": "exited", "status": 127, "forced": "none"}'
	request answer
	jq -c '.cwd = "/nonexistent"' "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect failed "cannot start the client .*: working directory: No such file or directory"
	no_agent_started
}
case_silent_client() {
	# A client that never answers initialize: no session to cancel; at the
	# deadline the exit sequence stops it.
	DEADLINE=500 EXIT_GRACE=300
	request answer
	jq -c '.argv = ["/bin/sleep", "100"]' "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect timeout "the deadline of 500 ms passed while the client had not answered initialize"
	check '.exit == {"how": "signaled", "signal": 15, "forced": "term"} and has("agent") == false'
	[ "$MS" -lt 2500 ] || fail "took $MS ms"
}
case_refuse_other_format() {
	for f in '"jig-acp-request/2"' 'null' '1'; do
		request answer
		jq -c ".format = $f" "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
		run
		expect refused "malformed request: format is not \"jig-acp-request/1\""
		no_agent_started
	done
	request answer
	jq -c 'del(.format)' "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
	run
	expect refused "format is not"
	check 'has("exit") == false'
}
case_refuse_unknown_key() {
	for edit in '.extra = 1:unknown key "extra"' '.limits.extra = 1:unknown key "extra" in limits' \
		'.expect.title = "x":unknown key "title" in expect' 'del(.secrets):"secrets" is missing' \
		'.argv[0] = "jig-fake-agent":argv\[0\] is not an absolute path' '.limits.deadline_ms = 0:limits.deadline_ms must be'; do
		request answer
		jq -c "${edit%%:*}" "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
		run
		expect refused "malformed request: ${edit#*:}"
		no_agent_started
	done
}
case_malformed_input() {
	printf 'not json' >"$T/in"
	run
	expect refused "malformed request: not one JSON object"
	head -c 26000000 /dev/zero | tr '\0' ' ' >"$T/in"
	run
	expect refused "over 25165824 bytes"
	printf '[1]' >"$T/in"
	run
	expect refused "not a JSON object"
}
case_secret_not_in_worker_environ() {
	# While the agent runs, the credential is in its environment (so the
	# check can see it) and not in its parent's, the worker's.
	DEADLINE=3000 CANCEL_GRACE=300
	request hang_cancel
	runuser -u "$USER_NAME" -- sh -c 'echo $$ >"$1"; exec "$2"' sh "$T/worker.pid" "$JIG_ACP_WORKER" \
		<"$T/in" >"$T/out" 2>"$T/err" &
	bg=$!
	i=0
	while [ -z "$(pid_of agent)" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "the agent did not start"; sleep 0.05
	done
	w=$(cat "$T/worker.pid") a=$(pid_of agent)
	[ "$(ps -o ppid= -p "$a" | tr -d ' ')" = "$w" ] || fail "the worker ($w) is not the agent's parent"
	tr '\0' '\n' <"/proc/$a/environ" | grep -qxF -e "JIG_TEST_CRED=$CRED" || fail "the agent has no credential"
	# (/proc/PID/environ is the environment a process started with.)
	tr '\0' '\n' <"/proc/$w/environ" >"$T/worker.env" && grep -q '^PATH=' "$T/worker.env" ||
		fail "cannot read the worker's environment"
	! grep -qF -e "$CRED" "$T/worker.env" || fail "the credential is in the worker's environment"
	cat "/proc/$w/cmdline" "/proc/$a/cmdline" >"$T/cmdlines" && [ -s "$T/cmdlines" ] || fail "cannot read command lines"
	! grep -qF -e "$CRED" "$T/cmdlines" || fail "the credential is on a command line"
	wait "$bg" || fail "worker exit"
	expect timeout
}

# --- retained session history (Codex's rollouts; the fake agent plays Codex) ---
HIST='{"history":{"dir":".codex/sessions","max_bytes":8388608}}'
# restore_from OUT: XREQ restoring the history collected in result OUT.
restore_from() {
	XREQ=$(jq -c '{history: {dir: ".codex/sessions", max_bytes: 8388608},
		restore: {session_id: .history.session_id, path: .history.path, rollout: .history.rollout}}' "$1")
}
case_history_collected_and_restored() {
	XREQ=$HIST turn codex
	expect answer
	check '.text == "ANSWER:history=-1 hello" and has("history_error") == false'
	check '.history.session_id | test("^[0-9a-f-]{36}$")'
	check '.history.path == "2026/12/03/rollout-2026-12-03T00-00-00-\(.history.session_id).jsonl"'
	check '.history.rollout == "{\"type\":\"session_meta\"}\n{\"type\":\"turn\"}\n"'
	cp "$T/out" "$T/first"
	# The next turn starts from an empty HOME: the history comes only from
	# the request, and session/load (not session/new) resumes it. The
	# replayed history is not this turn's answer.
	rm -rf "$T/home/.codex"
	restore_from "$T/first"
	turn codex
	expect answer
	check '.text == "ANSWER:history=2 hello"'
	check ".history.session_id == \"$(jq -r .history.session_id "$T/first")\""
	check '.history.rollout | split("\n") | length == 4'
	check '.counts.updates >= 4'
	no_agent_left
}
case_history_not_without_answer() {
	# A client that does not exit cleanly, or a turn without an answer: no
	# history (its rollout may be incomplete).
	XREQ=$HIST turn codex crash
	expect answer
	check '.history_error | test("exited with status 3; its history is not collected")'
	check 'has("history") == false'
	XREQ=$HIST DEADLINE=1500 turn hang_cancel
	expect timeout
	check '.history_error | test("did not end with an answer")'
}
case_history_over_cap() {
	XREQ=$HIST turn codex big
	expect answer
	check '.history_error | test("the session.s history is 83[0-9]+ bytes, over 8388608")'
	check 'has("history") == false'
	XREQ='{"history":{"dir":".codex/sessions","max_bytes":16777217}}' turn codex
	expect refused "history.max_bytes must be an integer from 1 to 16777216"
}
case_history_credential_refused() {
	XREQ=$HIST turn codex secret:JIG_TEST_CRED
	expect answer
	check '.history_error == "the session'"'"'s history contains a credential of the request; not collected"'
	! grep -qF -e "$CRED" "$T/out" || fail "the credential is in the result"
}
case_history_owned_file_only() {
	XREQ=$HIST turn codex twice
	check '.history_error | test("has 2 history files, not one")'
	XREQ=$HIST turn codex link
	check '.history_error == "the session'"'"'s history is not a regular file"'
	! grep -q root: "$T/out" || fail "a linked file was collected"
	XREQ=$HIST turn codex dirty
	check '.history_error == "the session'"'"'s history holds a control byte"'
	XREQ=$HIST turn answer
	check '.history_error | test("the client.s session id is not a plain name|left no history|cannot be opened|not a directory")'
}
case_history_linked_directory_not_followed() {
	# A directory below the history directory that is a link to one
	# outside it (where the client wrote the session's rollout): the walk
	# does not follow it, and the file is opened from the directory the
	# walk holds, never by its path again.
	mkdir -p "$T/home/.codex/sessions" "$T/outside"
	ln -s "$T/outside" "$T/home/.codex/sessions/2026"
	chown -R -h "$USER_NAME" "$T/home/.codex" "$T/outside"
	XREQ=$HIST turn codex
	expect answer
	ls "$T"/outside/12/03/rollout-*.jsonl >/dev/null || fail "the agent did not write through the link"
	check '.history_error == "the client left no history for its session"'
	check 'has("history") == false'
	# The history directory itself a link: refused.
	rm -rf "$T/home/.codex"; mkdir -p "$T/home/.codex"
	ln -s "$T/outside" "$T/home/.codex/sessions"
	chown -R -h "$USER_NAME" "$T/home/.codex"
	XREQ=$HIST turn codex
	expect answer
	check '.history_error | test("not a directory")'
	check 'has("history") == false'
}
case_history_unrestorable_path_refused() {
	# A rollout at a path restore would refuse (a space in its name) is
	# not collected: a retained session must be restorable.
	XREQ=$HIST turn codex oddname
	expect answer
	ls "$T"/home/.codex/sessions/2026/12/03/rollout-2026-12-03\ * >/dev/null || fail "the agent wrote no odd name"
	check '.history_error | test("not at a path of 1-4 plain names; not collected")'
	check 'has("history") == false'
}
case_history_restore_path_too_long() {
	# history.dir and restore.path each valid, together over the 519
	# bytes jig builds them in: refused, not truncated into another name.
	XREQ=$HIST turn codex
	cp "$T/out" "$T/first"
	a=$(printf '%0200d' 0 | tr 0 a) c=$(printf '%0100d' 0 | tr 0 c)
	XREQ=$(jq -c --arg dir "$a/$a" --arg c "$c" '{history: {dir: $dir, max_bytes: 8388608},
		restore: {session_id: .history.session_id, path: ($c + "/rollout-x-" + .history.session_id + ".jsonl"),
			  rollout: .history.rollout}}' "$T/first")
	turn codex
	expect failed "the restored history's path is too long"
	[ ! -e "$T/home/$a" ] || fail "a truncated path was written"
}
case_history_restore_needs_load() {
	XREQ=$HIST turn codex
	expect answer
	cp "$T/out" "$T/first"
	rm -rf "$T/home/.codex"
	restore_from "$T/first"
	turn codex noload
	expect failed "the client cannot load a retained session"
}
case_history_request_refused() {
	XREQ=$HIST turn codex
	cp "$T/out" "$T/first"
	sid=$(jq -r .history.session_id "$T/first")
	for edit in 'del(.history):restore needs history' \
		'.history.dir = "../x":history.dir must be a relative path' \
		'.history.dir = "/abs":history.dir must be a relative path' \
		'.restore.path = "../rollout-x-'"$sid"'.jsonl":restore.path must be' \
		'.restore.path = "2026/rollout-x-other.jsonl":restore.path must be' \
		'.restore.path = "a/b/c/d/rollout-x-'"$sid"'.jsonl":restore.path must be' \
		'.restore.session_id = "../x":restore.session_id must be' \
		'.history.max_bytes = 10:restore.rollout must be a string of at most' \
		'.restore.extra = 1:restore must be'; do
		restore_from "$T/first"
		request codex
		jq -c "${edit%%:*}" "$T/in" >"$T/in2" && mv "$T/in2" "$T/in"
		run
		expect refused "malformed request: ${edit#*:}"
		no_agent_started
	done
	# Nothing is written outside the history directory, even by a request
	# that is refused.
	[ ! -e "$T/x" ] && [ ! -e "$T/home/x" ] || fail "a refused restore wrote a file"
}

# jig's pi profile: the launcher pi-acp starts as Pi (plugins/acp/
# pi_launcher.c). $T/pi/fake-pi stands in for Pi: it writes its arguments,
# one a line, and its environment.
fake_pi() {
	mkdir -p "$T/pi"
	printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done >"%s/pi/args"\nenv >"%s/pi/env"\n' "$T" "$T" >"$T/pi/fake-pi"
	chmod 755 "$T/pi/fake-pi"
	echo '{"providers": {}}' >"$T/pi/models.json"
	rm -rf "$T/home/.pi" "$T/pi/args" "$T/pi/env"
	chown -R "$USER_NAME" "$T/pi"
}
# launch [ARG...]: the launcher as the user with the profile's variables
# (PI_ARGV overrides JIG_PI_ARGV; NO_ARGV leaves it out); $lrc, $T/lerr.
launch() {
	argv=${PI_ARGV:-$(jq -cn --arg pi "$T/pi/fake-pi" '[$pi, "--no-tools", "--no-extensions", "--model", "stub/m 1"]')}
	set +e
	if [ -n "${NO_ARGV:-}" ]; then
		runuser -u "$USER_NAME" -- env -i PATH=/usr/bin:/bin HOME="$T/home" JIG_PI_MODELS="$T/pi/models.json" "$JIG_PI_LAUNCHER" "$@" 2>"$T/lerr"
	else
		runuser -u "$USER_NAME" -- env -i PATH=/usr/bin:/bin HOME="$T/home" JIG_PI_MODELS="$T/pi/models.json" JIG_PI_ARGV="$argv" \
			"$JIG_PI_LAUNCHER" "$@" 2>"$T/lerr"
	fi
	lrc=$?
	set -e
}
case_pi_launcher() {
	# Issue 15: Pi gets exactly its reviewed command, the profile's flags,
	# then pi-acp's own arguments; Pi's agent directory is in HOME with the
	# operator's models.json linked in; the launcher's variables are gone.
	fake_pi
	launch --mode rpc --no-themes
	[ "$lrc" -eq 0 ] || fail "launcher exit $lrc: $(cat "$T/lerr")"
	printf '%s\n' --no-tools --no-extensions --model "stub/m 1" --mode rpc --no-themes >"$T/want"
	cmp "$T/want" "$T/pi/args" || fail "Pi's arguments: $(cat "$T/pi/args")"
	grep -qx "PI_CODING_AGENT_DIR=$T/home/.pi/agent" "$T/pi/env" || fail "PI_CODING_AGENT_DIR: $(cat "$T/pi/env")"
	! grep -q "^JIG_PI_" "$T/pi/env" || fail "the launcher's variables reached Pi"
	[ "$(readlink "$T/home/.pi/agent/models.json")" = "$T/pi/models.json" ] || fail "models.json is not linked"
	[ "$(stat -c %a "$T/home/.pi/agent")" = 700 ] || fail "the agent directory is not private"
}
case_pi_launcher_again_in_same_home() {
	# A second launch in the same HOME keeps the link an earlier one made
	# when it points exactly at the reviewed models.json; anything else
	# there is refused.
	fake_pi
	launch --mode rpc --no-themes
	[ "$lrc" -eq 0 ] || fail "first launch exit $lrc: $(cat "$T/lerr")"
	rm "$T/pi/args"
	launch --mode rpc --no-themes
	[ "$lrc" -eq 0 ] && [ -e "$T/pi/args" ] || fail "second launch exit $lrc: $(cat "$T/lerr")"
	[ "$(readlink "$T/home/.pi/agent/models.json")" = "$T/pi/models.json" ] || fail "models.json is not linked"
	for other in link file; do
		rm -f "$T/home/.pi/agent/models.json" "$T/pi/args"
		if [ $other = link ]; then ln -s /etc/passwd "$T/home/.pi/agent/models.json"; else echo '{}' >"$T/home/.pi/agent/models.json"; fi
		chown -h "$USER_NAME" "$T/home/.pi/agent/models.json"
		launch --mode rpc --no-themes
		[ "$lrc" -eq 127 ] && [ "$(wc -l <"$T/lerr")" -eq 1 ] && grep -q "cannot link models.json into Pi's agent directory: another file or link is there" "$T/lerr" ||
			fail "models.json already a $other: exit $lrc: $(cat "$T/lerr")"
		[ ! -e "$T/pi/args" ] || fail "Pi started with models.json already a $other"
	done
}
case_pi_launcher_refuses_option_model() {
	# A model Pi would parse as an option ("--model -e ..."), or no model
	# after --model: one line, exit 127, Pi never starts.
	for m in '"-e"' '"--tools"' ''; do
		fake_pi
		PI_ARGV=$(jq -cn --arg pi "$T/pi/fake-pi" "[\$pi, \"--no-tools\", \"--model\"${m:+, $m}]") launch --mode rpc --no-themes
		[ "$lrc" -eq 127 ] && [ "$(wc -l <"$T/lerr")" -eq 1 ] && grep -q "the model is missing or starts with '-'; refused" "$T/lerr" ||
			fail "model ${m:-none}: exit $lrc: $(cat "$T/lerr")"
		[ ! -e "$T/pi/args" ] || fail "Pi started with model ${m:-none}"
	done
}
case_pi_launcher_refusals() {
	# Issue 15: an adapter argument other than pi-acp's known ones (a
	# session to resume), a missing or malformed Pi command: one line,
	# exit 127, and Pi never starts.
	for args in "--mode rpc --no-themes --session /tmp/s.jsonl" "--mode rpc" "--mode json --no-themes" ""; do
		fake_pi
		# shellcheck disable=SC2086
		launch $args
		[ "$lrc" -eq 127 ] && [ "$(wc -l <"$T/lerr")" -eq 1 ] && grep -q 'other than "--mode rpc --no-themes"; refused' "$T/lerr" ||
			fail "adapter arguments '$args': exit $lrc: $(cat "$T/lerr")"
		[ ! -e "$T/pi/args" ] || fail "Pi started with adapter arguments '$args'"
	done
	for bad in '{"a":1}' '[]' '["pi"]' '[1]' 'not json' "[\"$T/pi/nonexistent\"]"; do
		fake_pi
		PI_ARGV=$bad launch --mode rpc --no-themes
		[ "$lrc" -eq 127 ] && [ "$(wc -l <"$T/lerr")" -eq 1 ] && grep -q '^jig-pi-launcher: ' "$T/lerr" || fail "JIG_PI_ARGV $bad: exit $lrc: $(cat "$T/lerr")"
		[ ! -e "$T/pi/args" ] || fail "Pi started with JIG_PI_ARGV $bad"
	done
	fake_pi
	NO_ARGV=1 launch --mode rpc --no-themes
	[ "$lrc" -eq 127 ] && grep -q "JIG_PI_ARGV, JIG_PI_MODELS and HOME must be set" "$T/lerr" || fail "without JIG_PI_ARGV: exit $lrc: $(cat "$T/lerr")"
}

"case_$1"
echo "PASS: $1"
