#!/bin/sh
# The Agent effect end to end (issue 15): a Flow's jig.agent turn, run by
# plugins/acp's worker in the provider scope, against the scripted fake ACP
# agent (tests/acp/fake_agent.c) configured as the operator's provider.
# Each case_* is one ctest (agent.<case>) in the supported-host lane, run as
# the unprivileged user. The worker's protocol behaviour alone is tested in
# the plain lane (tests/acp/worker.sh).
# Requirements: R-A02, R-A03, R-A04, R-A05, R-A07, R-A09, R-C12 (see
# docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}" "${JIG_FAKE_AGENT:?}" "${JIG_ACP_CLIENTS:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
CALLER="$JIG_SOURCE/tests/flow/agent"
. "$JIG_SOURCE/tests/flow/scope_plan.sh"

T=$(mktemp -d /tmp/jig-agent.XXXXXX)
PEERS=""
trap 'for p in $PEERS; do kill "$p" 2>/dev/null || true; done; pkill -KILL -f "$T/client/" 2>/dev/null || true; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; [ ! -s "$T/peer.log" ] || { echo "--- the model peer's log:" >&2; head -c 4000 "$T/peer.log" >&2; }; exit 1; }
export XDG_CONFIG_HOME="$T/config"
mkdir -p "$XDG_CONFIG_HOME/jig" "$T/client"
chmod 700 "$XDG_CONFIG_HOME/jig"
cp "$JIG_FAKE_AGENT" "$T/client/fake-agent"
CANARY=CANARY-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$CANARY" >"$XDG_CONFIG_HOME/jig/fake.key"
chmod 600 "$XDG_CONFIG_HOME/jig/fake.key"

# agents MODE [ARG] [EXTRA_JQ]: the operator's agents.json, provider "fake"
# running the fake agent in MODE; EXTRA_JQ edits the provider.
agents() {
	args=$(jq -cn --arg m "$1" --arg a "${2:-}" '[$m] + (if $a == "" then [] else [$a] end)')
	jq -n --arg exe "$T/client/fake-agent" --arg tree "$T/client" --arg key "$XDG_CONFIG_HOME/jig/fake.key" --argjson args "$args" \
		'{format: "jig-agents/1", providers: {fake: {client: "acp", command: ([$exe] + $args), trees: [$tree],
		  version: "1.0.0", model_env: "FAKE_MODEL", credential: {env: "FAKE_KEY", file: $key}}}}' |
		jq "${3:-.}" >"$XDG_CONFIG_HOME/jig/agents.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/agents.json"
}
# project [FLOW_JQ]: a private copy of the test project, its flow.json
# edited by FLOW_JQ, reviewed.
project() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	cp -r "$CALLER" "$T/p"
	jq "${1:-.}" "$CALLER/caller/flow.json" >"$T/p/caller/flow.json"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
}
# steps JSON: jig run of the caller with those steps; $rc, $T/out, $T/err.
steps() {
	printf '%s\n' "$1" >"$T/steps"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	start=$(date +%s)
	(cd "$T/p" && "$JIG" run caller --output "$T/pkt" --input steps="$T/steps" --timeout "${RUN_TIMEOUT:-30s}") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	took=$(($(date +%s) - start))
	set -e
	echo "--- jig run caller (exit $rc, ${took} s)"
	cat "$T/out" "$T/err"
	[ ! -f "$T/pkt/files/result.json" ] || jq -c '[.[] | {ok, error, stopReason}]' "$T/pkt/files/result.json"
	[ ! -f "$T/pkt/record.json" ] || jq -c '.effects' "$T/pkt/record.json"
	return 0
}
ask='{"do":"agent","route":"ask","instructions":"Say hello","input":"the document"}'
rec() { jq -r ".$1" "$T/pkt/record.json"; }
res() { jq -r ".[$1]$2" "$T/pkt/files/result.json"; }
ev() { jq -r ".effects[$1]$2" "$T/pkt/record.json"; }
succeeded() { [ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] || fail "the Run did not succeed"; }
expect_ok() { [ "$(res "$1" .ok)" = true ] || fail "step $1 failed: $(res "$1" .error)"; }
expect_refused() { # expect_refused STEP PATTERN
	[ "$(res "$1" .ok)" = false ] || fail "step $1 was not refused: $(res "$1" '')"
	res "$1" .error | grep -q -- "$2" || fail "step $1: error does not match /$2/: $(res "$1" .error)"
}
# Nothing of the client is left once the Run is over: the scope fenced it.
no_client_left() {
	! pgrep -f "$T/client/" >/dev/null || fail "a client process outlived the Run: $(pgrep -af "$T/client/")"
}
no_canary() {
	for f in "$T/pkt" "$T/p" "$T/out" "$T/err" "$T/review.out"; do
		! grep -rqa -- "$CANARY" "$f" || fail "the credential is in $f"
	done
}
# peer: the stub model service (tests/http/peer.py) on 127.0.0.1:18090.
peer() {
	/usr/bin/python3 "$JIG_SOURCE/tests/http/peer.py" --port 18090 --portfile "$T/peer.port" --log "$T/peer.log" &
	PEERS="$PEERS $!"
	i=0
	while [ ! -s "$T/peer.port" ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "the peer did not start"; sleep 0.05; done
	touch "$T/peer.log"
}
# http_config JSON: the operator's http.json (bearers), 0600.
http_config() {
	printf '%s\n' "$1" >"$XDG_CONFIG_HOME/jig/http.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/http.json"
}
# The fake agent's answer text (JSON in some modes) of step N.
answer() { res "$1" .text; }

case_answer() {
	# R-A02, R-A04, R-A09: a Flow asks a reviewed route and gets the answer; the
	# Plan shows the route, the provider identity and the provider scope's
	# digest; the record holds the turn's evidence, not the transcript.
	agents answer
	project
	sum=$(sha256sum "$T/client/fake-agent" | cut -d' ' -f1)
	grep -q "agent ask: provider fake (client acp, version 1.0.0), model fake-model-1" "$T/review.out" || fail "the Plan does not show the route: $(cat "$T/review.out")"
	grep -q "file sha256 $sum $T/client/fake-agent" "$T/review.out" || fail "the Plan does not pin the client's digest"
	grep -q "FAKE_KEY=<your credential" "$T/review.out" || fail "the Plan does not name the credential's variable"
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	pol=$(jq -r '.plan.flows[0].agents[0].provider_scope.policy_sha256' "$T/plan.json")
	grep -q "policy sha256 $pol" "$T/review.out" || fail "the Plan text does not show the provider scope's digest"
	jq -e '.plan.flows[0].agents[0] | .identity.files[0].sha256 == "'"$sum"'" and .identity.model == "fake-model-1"
		and .provider_scope.permission_plan.network == "host"' "$T/plan.json" >/dev/null || fail "plan json: $(jq -c '.plan.flows[0].agents' "$T/plan.json")"
	jq -e '.plan.flows[0].scope.permission_plan.network == "none"' "$T/plan.json" >/dev/null || fail "the Flow's scope has a network"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | grep -q "^ANSWER:" && answer 0 | grep -q "Say hello" && answer 0 | grep -q "the document" || fail "answer: $(answer 0)"
	[ "$(res 0 .stopReason)" = end_turn ] || fail "stop reason"
	jq -e '.effects[0] | .effect == "agent" and .route == "ask" and .provider == "fake" and .model == "fake-model-1"
		and .outcome == "answer" and .scope_policy_sha256 == "'"$pol"'" and .answer_bytes > 0 and .prompt_bytes > 0
		and .agent.name == "fake-agent" and (.timing.total_ms | type) == "number" and (has("text") | not)' "$T/pkt/record.json" >/dev/null ||
		fail "evidence: $(jq -c .effects "$T/pkt/record.json")"
	"$JIG" inspect "$T/pkt" | tee "$T/inspect"
	grep -q "^  agent ask answer (fake, model fake-model-1) [0-9]* answer bytes" "$T/inspect" || fail "inspect does not show the turn"
	no_client_left
	no_canary
}

case_sees_nothing() {
	# R-A03, R-A05, R-A07, R-C12: from inside the provider scope: an empty work directory,
	# jig's managed restrictions for the native clients,
	# a private tmpfs HOME, no project, input, output or operator file, the
	# credential only in the client's own environment; the Flow itself has
	# still no network and no credential.
	probe="$T/p:$T/steps:$XDG_CONFIG_HOME/jig/agents.json:$XDG_CONFIG_HOME/jig/fake.key:/flow:/input:/output:$HOME:/run/user"
	agents report FAKE_KEY ".providers.fake.env = {FAKE_AGENT_PROBE: \"$probe\"}"
	project
	steps "[$ask, {\"do\":\"fetch\",\"url\":\"http://127.0.0.1:9/\"}, {\"do\":\"dump\"}]"
	succeeded
	expect_ok 0
	answer 0 >"$T/report.json"
	cat "$T/report.json"
	jq -e '.cwd == "/work" and (.entries | length) == 0' "$T/report.json" >/dev/null || fail "the work directory is not empty"
	jq -e '.home == "/home/agent" and .home_tmpfs == true' "$T/report.json" >/dev/null || fail "HOME is not a private tmpfs"
	jq -e '[.probe[]] | all(. == false)' "$T/report.json" >/dev/null || fail "the client sees host paths: $(jq -c .probe "$T/report.json")"
	jq -e '.credential.name == "FAKE_KEY" and (.credential.found_in | length) == 0' "$T/report.json" >/dev/null ||
		fail "the credential is missing or in another process: $(jq -c .credential "$T/report.json")"
	jq -e '.fds.open == [0,1,2]' "$T/report.json" >/dev/null || fail "the client has other descriptors: $(jq -c .fds "$T/report.json")"
	# R-A07 (managed restrictions): jig's fixed managed settings for Claude
	# Code and requirements for Codex, exactly the signed snapshot's bytes,
	# read-only where each client reads them.
	for m in /etc/claude-code/managed-settings.json:claude-code-managed-settings.json /etc/codex/requirements.toml:codex-requirements.toml; do
		jq -e --arg p "${m%%:*}" --rawfile want "$JIG_SOURCE/policy/managed/${m#*:}" '.managed[$p].text == $want and .managed[$p].writable == false' \
			"$T/report.json" >/dev/null || fail "the managed restrictions at ${m%%:*}: $(jq -c --arg p "${m%%:*}" '.managed[$p]' "$T/report.json")"
	done
	jq -e '(.env | sort) == (["FAKE_AGENT_PROBE","FAKE_KEY","FAKE_MODEL","HOME","LANG","NO_COLOR","PATH","TMPDIR"])' "$T/report.json" >/dev/null ||
		fail "the client's environment is not the Plan's: $(jq -c .env "$T/report.json")"
	expect_refused 1 ""
	grep -q '^env ' "$T/pkt/files/dump.txt" || fail "no dump"
	no_canary
	no_client_left
}

# A client request jig does not serve: -32601, counted.
unserved() {
	agents "$1"
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e '.error.code == -32601' >/dev/null || fail "the client got: $(answer 0)"
	[ "$(ev 0 .counts.requests_refused)" = 1 ] || fail "not counted"
	no_client_left
}
case_fs_request_refused() { unserved fs; }		 # R-A05
case_terminal_request_refused() { unserved terminal; } # R-A05
case_mcp_request_refused() { unserved mcp; }		 # R-A05
case_permission_refused() {
	# R-A05: a permission request is answered with a reject option.
	agents permission
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e '.result.outcome.outcome == "selected" and .result.outcome.optionId == "r"' >/dev/null || fail "the client got: $(answer 0)"
	[ "$(ev 0 .counts.permissions_refused)" = 1 ] || fail "not counted"
}

# A misbehaving client ends the turn with a clear outcome and nothing left.
misbehaves() { # misbehaves MODE ARG PATTERN [FLOW_JQ]
	agents "$1" "$2"
	project "${4:-.}"
	steps "[$ask]"
	succeeded
	expect_refused 0 "$3"
	[ "$(ev 0 .outcome)" != answer ] || fail "recorded as an answer"
	no_client_left
}
case_line_over_cap() { misbehaves longline 2000000 "line over"; }	  # issue 15 bounds
case_update_flood() { misbehaves flood 100000 "more than"; }	  # issue 15 bounds
case_answer_over_cap() { misbehaves bigtext 65537 "over"; }	  # issue 15 bounds
case_answer_at_cap() {
	# Issue 15 bounds: exactly max_answer_bytes is an answer.
	agents bigtext 65536
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	[ "$(answer 0 | tr -d '\n' | wc -c)" -ge 65000 ] || fail "short answer"
}
case_crash_fenced() { misbehaves crash "" "exit"; }		  # issue 15 bounds
case_hang_fenced() {
	# Issue 15 bounds: a client that ignores session/cancel and SIGTERM is killed at
	# the route's deadline plus the graces; nothing is left.
	misbehaves hang "" "deadline\|timeout" '.agents.ask.timeout_ms = 3000'
	[ "$took" -lt 30 ] || fail "the hang took $took s"
	[ "$(ev 0 .outcome)" = timeout ] || fail "outcome $(ev 0 .outcome)"
}
case_fork_fenced() {
	# Issue 15 bounds: processes the client starts (in its group or a new session) end
	# with the turn: the provider scope is fenced.
	agents fork
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	no_client_left
}
case_echo_withheld() {
	# R-A03: an answer that carries the credential is withheld.
	agents echo FAKE_KEY
	project
	steps "[$ask]"
	succeeded
	expect_refused 0 "withheld"
	[ "$(ev 0 .outcome)" = withheld ] || fail "outcome"
	no_canary
}

case_digest_pinned() {
	# R-A09: a client executable that changed since review is refused.
	agents answer
	project
	printf 'x' >>"$T/client/fake-agent"
	steps "[$ask]"
	[ "$rc" -ne 0 ] || fail "ran a changed client"
	grep -q "provider fake changed since review: the client's files" "$T/err" && grep -q "review again" "$T/err" || fail "message"
	[ ! -e "$T/pkt" ] || fail "a packet was published"
}
case_version_pinned() {
	# R-A09: another configured version than reviewed is refused; so is a
	# client reporting another version than the configured one.
	agents answer
	project
	agents answer "" '.providers.fake.version = "2.0.0"'
	steps "[$ask]"
	[ "$rc" -ne 0 ] && grep -q 'its version is "2.0.0", reviewed "1.0.0"' "$T/err" && grep -q "review again" "$T/err" || fail "version change not refused"
	agents answer "" '.providers.fake.env = {FAKE_AGENT_VERSION: "9.9.9"}'
	project
	steps "[$ask]"
	succeeded
	expect_refused 0 "9.9.9"
	res 0 .error | grep -q "review again" || fail "message"
}
case_model_pinned() {
	# R-A09: the model is part of the reviewed identity.
	agents answer
	project
	jq '.agents.ask.model = "other-model"' "$T/p/caller/flow.json" >"$T/f" && cp "$T/f" "$T/p/caller/flow.json"
	steps "[$ask]"
	[ "$rc" -ne 0 ] && grep -q 'its model is "other-model", reviewed "fake-model-1"' "$T/err" || fail "model change not refused"
}
case_credential_file_unsafe() {
	# R-A02, R-A03: an unsafe credential file refuses the turn before any launch.
	agents answer
	project
	chmod 644 "$XDG_CONFIG_HOME/jig/fake.key"
	steps "[$ask]"
	succeeded
	expect_refused 0 "must be your regular file with mode 0600"
	chmod 600 "$XDG_CONFIG_HOME/jig/fake.key"
	[ "$(ev 0 .outcome)" = refused ] || fail "outcome"
	[ "$(ev 0 .counts)" = null ] || fail "a worker ran"
}
case_prompt_cap() {
	# Issue 15 bounds: max_prompt_bytes at and over the cap.
	agents answer
	project
	at=$(head -c 4096 /dev/zero | tr '\0' a)
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"instructions\":\"$at\"}, {\"do\":\"agent\",\"route\":\"ask\",\"instructions\":\"${at}b\"},
		{\"do\":\"agent\",\"route\":\"nope\",\"input\":\"x\"}, {\"do\":\"agent\",\"route\":\"ask\"},
		{\"do\":\"agent\",\"route\":\"$(head -c 63 /dev/zero | tr '\0' a)é\",\"input\":\"x\"}]"
	succeeded
	expect_ok 0
	expect_refused 1 "over its 4096"
	expect_refused 2 "no reviewed agent route"
	expect_refused 3 "empty prompt"
	# A route name cut inside a UTF-8 character still gets its reply.
	expect_refused 4 "no reviewed agent route"
}
case_turns_cap() {
	# Issue 15 bounds: at most 16 turns per Run; the 17th ends the Run.
	agents answer
	project
	s="[$ask"; i=1; while [ $i -lt 16 ]; do s="$s, $ask"; i=$((i + 1)); done
	steps "$s]"
	succeeded
	[ "$(jq '[.[] | select(.ok)] | length' "$T/pkt/files/result.json")" = 16 ] || fail "16 turns did not all answer"
	steps "$s, $ask]"
	[ "$rc" -ne 0 ] && grep -q "more than 16 Agent turns" "$T/err" || fail "the 17th turn did not end the Run"
	no_client_left
}
case_envelope_tasks() {
	# The provider envelope (contract: 128 tasks): 100 children start; of
	# 200, the scope's pids limit stops it short of 128 in all.
	agents tasks 100
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e '.started == 100' >/dev/null || fail "at the cap: $(answer 0)"
	agents tasks 200
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e '.started < 128 and .started > 100' >/dev/null || fail "over the cap: $(answer 0)"
	no_client_left
}
case_envelope_memory() {
	# The provider envelope (contract: 256 MiB): 160 MiB is fine; 400 MiB
	# ends the turn (the kernel kills the client at the scope's limit).
	agents memory 160
	project
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e '.touched_mib == 160' >/dev/null || fail "under the cap: $(answer 0)"
	agents memory 400
	project
	steps "[$ask]"
	succeeded
	expect_refused 0 "memory limit of 256 MiB"
	no_client_left
}
case_example_classify() {
	# The example Flow: classify an attached document with the operator's
	# provider (here the fake agent), publishing its declared output.
	agents answer
	jq '.providers["local-agent"] = .providers.fake | del(.providers.fake)' "$XDG_CONFIG_HOME/jig/agents.json" >"$T/a"
	cp "$T/a" "$XDG_CONFIG_HOME/jig/agents.json"
	rm -rf "$T/ex"; cp -r "$JIG_SOURCE/examples/agents" "$T/ex"
	(cd "$T/ex" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review"; }
	(cd "$T/ex" && "$JIG" run classify --output "$T/pkt" --input document="$T/ex/classify/sample.txt") || fail "run"
	cat "$T/pkt/files/classification.md"
	grep -q "category: ANSWER:" "$T/pkt/files/classification.md" || fail "classification"
}

# claude_code CREDENTIAL_ENV AUTH: the real Claude Code adapter, its
# credential in CREDENTIAL_ENV; the stub must see AUTH.
claude_code() {
	peer
	cc="$JIG_ACP_CLIENTS/node_modules/@zed-industries/claude-code-acp/dist/index.js"
	jq -n --arg cc "$cc" --arg nm "$JIG_ACP_CLIENTS/node_modules" --arg key "$XDG_CONFIG_HOME/jig/fake.key" --arg cred "$1" \
		'{format: "jig-agents/1", providers: {fake: {client: "claude-code", command: ["/usr/bin/node", $cc],
		  trees: ["/usr/bin/node", $nm], version: "0.16.2", env: {ANTHROPIC_BASE_URL: "http://127.0.0.1:18090"},
		  credential: {env: $cred, file: $key}}}}' >"$XDG_CONFIG_HOME/jig/agents.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/agents.json"
	project '.agents.ask.timeout_ms = 480000'
	RUN_TIMEOUT=9m
	grep -q "jig's claude-code profile: session/new _meta .*\"disableBuiltInTools\":true" "$T/review.out" &&
		grep -q "the model selected with session/set_model" "$T/review.out" || fail "the Plan does not show the profile: $(cat "$T/review.out")"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | jq -e --arg auth "$2" '.stub and .model == "fake-model-1" and .tools == 0 and .auth == $auth and (.user | contains("Say hello"))' >/dev/null ||
		fail "the model service saw: $(answer 0)"
	[ "$(ev 0 .agent.name)" = "@zed-industries/claude-code-acp" ] && [ "$(ev 0 .agent.version)" = 0.16.2 ] || fail "agent info"
	grep -q "^POST /v1/messages" "$T/peer.log" || fail "no request reached the stub"
	no_canary
	! pgrep -f claude-code-acp >/dev/null || fail "a client process outlived the Run"
}
case_claude_code() {
	# R-A02, R-A05, R-A06 (the Claude Code part), R-A09: the real Claude Code
	# ACP adapter (@zed-industries/claude-code-acp from npm, pinned by
	# tests/acp/clients) in the provider scope, against a stub Messages API
	# on loopback: jig's claude-code profile turns its built-in tools off
	# (the model request carries no tool), selects the reviewed model, reads
	# no settings; the API key reaches the service, not the Flow.
	claude_code ANTHROPIC_API_KEY api-key
}
case_claude_code_subscription() {
	# R-A07 (subscription authentication): a Claude subscription's token
	# (CLAUDE_CODE_OAUTH_TOKEN, from `claude setup-token`) is projected like
	# any credential: in the client's memory only, its HOME an ephemeral
	# tmpfs; Claude Code sends it as a bearer, and it is in no file a tool
	# could read afterwards (no_canary: not in the packet, record or store).
	claude_code CLAUDE_CODE_OAUTH_TOKEN bearer
}
case_codex() {
	# R-A02, R-A06 (the Codex part), R-A08 (the Codex part), R-A09: the real Codex ACP adapter
	# (@zed-industries/codex-acp from npm, pinned) in the provider scope,
	# against a stub Responses API on loopback: jig's codex profile
	# authenticates with the API key method, runs Codex read-only with
	# approvals on request (refused by the worker) and web search off, with
	# the reviewed model; the key reaches the service, not the Flow.
	peer
	cx="$JIG_ACP_CLIENTS/node_modules/@zed-industries/codex-acp-linux-x64"
	jq -n --arg cx "$cx" --arg key "$XDG_CONFIG_HOME/jig/fake.key" \
		'{format: "jig-agents/1", providers: {fake: {client: "codex",
		  command: [($cx + "/bin/codex-acp"), "-c", "model_provider=\"stub\"",
		            "-c", "model_providers.stub={name=\"stub\",base_url=\"http://127.0.0.1:18090/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}"],
		  trees: [$cx], version: "0.16.0", credential: {env: "OPENAI_API_KEY", file: $key}}}}' >"$XDG_CONFIG_HOME/jig/agents.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/agents.json"
	project '.agents.ask.timeout_ms = 300000'
	RUN_TIMEOUT=6m
	grep -q "jig's codex profile: arguments -c sandbox_mode=\"read-only\" -c approval_policy=\"on-request\"" "$T/review.out" &&
		grep -q "authenticate with openai-api-key" "$T/review.out" || fail "the Plan does not show the profile: $(cat "$T/review.out")"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | sed 's/^[^{]*//' >"$T/seen.json"
	jq -e '.stub and .model == "fake-model-1" and .auth == "bearer" and (.tools | index("web_search") | not) and (.user | contains("Say hello"))' \
		"$T/seen.json" >/dev/null || fail "the model service saw: $(answer 0)"
	# R-A08 (audit #50): no bundled Skill reached the model (the profile
	# turns Codex's bundled Skills and their instructions off).
	jq -c '{skill_md, skills_words, plugin_words, tools}' "$T/seen.json"
	jq -e '.skill_md == 0' "$T/seen.json" >/dev/null || fail "a Skill reached the model: $(answer 0)"
	[ "$(ev 0 .agent.name)" = codex-acp ] && [ "$(ev 0 .agent.version)" = 0.16.0 ] || fail "agent info"
	grep -q "^POST /v1/responses bearer" "$T/peer.log" || fail "no request reached the stub"
	no_canary
	! pgrep -f codex-acp >/dev/null || fail "a client process outlived the Run"
}
# --- retained sessions (R-A10): the fake agent plays Codex (its rollout
# below ~/.codex/sessions, session/load), configured as a codex client ---
retaining() { # retaining [ARG]: a codex provider and a project whose ask route retains sessions
	agents codex "${1:-}" '.providers.fake.client = "codex"'
	project '.agents.ask.retain_sessions = true | .agents.ask2 = (.agents.ask + {retain_sessions: true})'
}
# rereview FLOW_JQ: the same project (and its .jig) with flow.json edited, reviewed again.
rereview() {
	jq "$1" "$CALLER/caller/flow.json" >"$T/p/caller/flow.json"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
}
store() { ls -A "$T/p/.jig/sessions" 2>/dev/null | grep -v '^\.tmp-' || true; }
ref() { res "$1" .session; }
case_retained_session() {
	# R-A10: a clean turn's history is retained; its reference resumes the
	# conversation once (session/load in a fresh provider scope), and is
	# consumed; the Plan says so.
	retaining
	grep -q "retained sessions: after a clean turn the client's session history (.codex/sessions) is kept" "$T/review.out" ||
		fail "the Plan does not show retained sessions: $(cat "$T/review.out")"
	(cd "$T/p" && "$JIG" review --json) | jq -e '.plan.flows[0].agents[] | select(.route == "ask") | .retain_sessions == true
		and .identity.profile.history == ".codex/sessions"' >/dev/null || fail "plan json"
	steps '[{"do":"agent","route":"ask","input":"first"}, {"do":"agent","route":"ask","input":"second","session":"@0"},
		{"do":"agent","route":"ask","input":"again","session":"@0"}]'
	succeeded
	expect_ok 0
	expect_ok 1
	answer 0 | grep -q "^ANSWER:history=-1 " || fail "the first turn was not a new session: $(answer 0)"
	answer 1 | grep -q "^ANSWER:history=2 " || fail "the second turn did not resume the first: $(answer 1)"
	! answer 1 | grep -q REPLAY || fail "the replayed history became the answer"
	ref 0 | grep -Eq '^[0-9a-f]{32}$' && ref 1 | grep -Eq '^[0-9a-f]{32}$' && [ "$(ref 0)" != "$(ref 1)" ] || fail "references"
	expect_refused 2 "unknown, expired (after 24 h) or already used"
	jq -e '.effects[0].session == {"restored": false, "retained": true, "history_bytes": 40}
		and .effects[1].session.restored == true and .effects[1].session.retained == true' "$T/pkt/record.json" >/dev/null ||
		fail "evidence: $(jq -c '[.effects[].session]' "$T/pkt/record.json")"
	! grep -q "$(ref 0)" "$T/pkt/record.json" || fail "the record holds a reference"
	# Only the second session is left; private, 0600 in a 0700 directory.
	[ "$(store | wc -l)" = 1 ] && store | grep -q -- "-$(ref 1)\$" || fail "store: $(store)"
	[ "$(stat -c %a "$T/p/.jig/sessions")" = 700 ] && [ "$(stat -c %a "$T/p/.jig/sessions/$(store)")" = 600 ] || fail "modes"
	no_canary
	! grep -rqa -- "$CANARY" "$T/p/.jig" || fail "the credential is in the store"
	no_client_left
}
case_retained_session_scope() {
	# R-A10: a reference works for its own Flow, route and reviewed
	# provider only (elsewhere it is refused and not consumed), a route
	# without retain_sessions takes none, and after 24 h it is gone.
	retaining
	steps '[{"do":"agent","route":"ask","input":"first"}]'
	succeeded
	a=$(ref 0)
	steps "[{\"do\":\"agent\",\"route\":\"ask2\",\"input\":\"x\",\"session\":\"$a\"},
		{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"x\",\"session\":\"nothex\"}]"
	succeeded
	expect_refused 0 "belongs to another Flow, route or reviewed provider than flow caller, route ask2; not restored (and not consumed)"
	expect_refused 1 "not a reference jig returned"
	[ "$(store | wc -l)" = 1 ] || fail "a foreign use consumed the session"
	# Reviewed again with another model: another provider identity.
	rereview '.agents.ask.retain_sessions = true | .agents.ask.model = "fake-model-2"'
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"x\",\"session\":\"$a\"}]"
	expect_refused 0 "belongs to another Flow, route or reviewed provider"
	[ "$(store | wc -l)" = 1 ] || fail "a foreign use consumed the session"
	# Expiry: 24 h after it was stored (the time in its name), it is pruned.
	rereview '.agents.ask.retain_sessions = true'
	f=$(store)
	mv "$T/p/.jig/sessions/$f" "$T/p/.jig/sessions/$(($(date +%s) - 86401))-$a"
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"x\",\"session\":\"$a\"}]"
	expect_refused 0 "unknown, expired (after 24 h) or already used"
	[ -z "$(store)" ] || fail "the expired session was not pruned: $(store)"
	# A route without retain_sessions refuses a session.
	rereview '.'
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"x\",\"session\":\"$a\"}]"
	expect_refused 0 "route ask does not retain sessions"
}
case_retained_session_store_cap() {
	# R-A10, R-V08 (decisions 230-231): the cap counts only the store's own
	# entries, each MACed under the operator's key for this project: 16
	# files planted in .jig/sessions fill nothing and restore nothing (one
	# line, nothing run). The cap with jig's own entries (16 available, the
	# 17th not retained, room after one expires): unit.agent_sessions.
	retaining
	mkdir -p "$T/p/.jig/sessions" && chmod 700 "$T/p/.jig/sessions"
	now=$(date +%s) i=0
	while [ $i -lt 16 ]; do
		f="$T/p/.jig/sessions/$now-$(printf '%032x' $i)"
		printf '{"format":"jig-agent-session/2"}\nplanted\n' >"$f" && chmod 600 "$f"; i=$((i + 1))
	done
	steps '[{"do":"agent","route":"ask","input":"first"}]'
	succeeded
	expect_ok 0
	ref 0 | grep -Eq '^[0-9a-f]{32}$' || fail "planted entries filled the store: $(res 0 '')"
	[ "$(store | wc -l)" = 17 ] || fail "store: $(store | wc -l)"
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"x\",\"session\":\"$(printf '%032x' 3)\"}]"
	expect_refused 0 "not restored (and not consumed): its stored entry was not made by you for this project"
	[ "$(store | wc -l)" = 17 ] || fail "a planted entry was consumed: $(store | wc -l)"
}
case_retained_session_credential() {
	# R-A10: a history holding the credential is not retained.
	retaining secret:FAKE_KEY
	steps '[{"do":"agent","route":"ask","input":"first"}]'
	succeeded
	expect_ok 0
	res 0 .sessionError | grep -q "contains a credential" || fail "retained: $(res 0 '')"
	[ -z "$(store)" ] || fail "stored: $(store)"
	! grep -rqa -- "$CANARY" "$T/p/.jig" || fail "the credential is in the store"
	no_canary
}
case_retained_session_not_replayed() {
	# R-A10: a reference is consumed before the client starts; a turn that
	# does not end cleanly gives no new one, and the old is never used again.
	retaining
	steps '[{"do":"agent","route":"ask","input":"first"}]'
	a=$(ref 0)
	# (The fake agent exits with status 3 after answering a prompt that says CRASH.)
	steps "[{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"CRASH\",\"session\":\"$a\"},
		{\"do\":\"agent\",\"route\":\"ask\",\"input\":\"y\",\"session\":\"$a\"}]"
	succeeded
	expect_ok 0
	answer 0 | grep -q "^ANSWER:history=2 " || fail "not restored: $(answer 0)"
	[ "$(ref 0)" = null ] && res 0 .sessionError | grep -q "exited with status 3; its history is not collected" || fail "retained: $(res 0 '')"
	expect_refused 1 "already used"
	[ -z "$(store)" ] || fail "store: $(store)"
}

case_r_a10_reference_after_store_commit() {
	# R-A10 (audit #193, #197), with the fake agent playing Codex; the real
	# Codex client is not exercised here: a new reference exists only after
	# the store committed the history. A commit that fails (the test
	# build's fault at the point between the written history and its
	# rename) gives the Flow no reference and leaves nothing in the store;
	# a coordinator stopped at that point has written only a temporary
	# file, and the Flow has no reference until the commit is done.
	retaining
	printf '[{"do":"agent","route":"ask","input":"first"}]\n' >"$T/steps"
	set +e
	(cd "$T/p" && JIG_FAULT_FAIL="session commit" "$JIG" run caller --output "$T/pkt" --input steps="$T/steps") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/err"
	succeeded
	expect_ok 0
	[ "$(ref 0)" = null ] && res 0 .sessionError | grep -q "cannot store the session" || fail "a reference without a commit: $(res 0 '')"
	[ "$(ev 0 .session.retained)" = false ] || fail "evidence: $(ev 0 .session)"
	[ -z "$(ls -A "$T/p/.jig/sessions" 2>/dev/null)" ] || fail "the store holds $(ls -A "$T/p/.jig/sessions")"
	# Stopped between the written history and the commit.
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt" "$T/fault.log"
	(cd "$T/p" && exec env JIG_FAULT_STOP="session commit" JIG_FAULT_LOG="$T/fault.log" "$JIG" run caller --output "$T/pkt" --input steps="$T/steps") >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	i=0
	until [ -s "$T/fault.log" ]; do
		i=$((i + 1)); [ $i -lt 1200 ] || { kill -KILL "$outer"; fail "the coordinator never reached the commit"; }
		sleep 0.1
	done
	pid=$(awk '{print $NF}' "$T/fault.log")
	ls -A "$T/p/.jig/sessions"
	[ "$(ls -A "$T/p/.jig/sessions" | grep -c '^\.tmp-')" -eq 1 ] && [ -z "$(store)" ] || fail "before the commit the store holds $(ls -A "$T/p/.jig/sessions")"
	[ ! -e "$T/pkt" ] || fail "a packet before the commit"
	kill -CONT "$pid"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/err"
	succeeded
	a=$(ref 0)
	echo "$a" | grep -Eq '^[0-9a-f]{32}$' || fail "no reference after the commit: $(res 0 '')"
	[ "$(store | wc -l)" = 1 ] && store | grep -q -- "-$a\$" && ! ls -A "$T/p/.jig/sessions" | grep -q '^\.tmp-' ||
		fail "store after the commit: $(ls -A "$T/p/.jig/sessions")"
	no_client_left
}
case_pi() {
	# Issue 15: the real Pi ACP adapter (pi-acp from npm, pinned) starting
	# the real Pi (@earendil-works/pi-coding-agent, pinned; under jig's
	# pinned Bun) through jig's launcher in the provider scope, against a
	# stub chat-completions service on loopback: jig's pi profile turns
	# every tool off (the model request declares none), selects the
	# reviewed model (not the first of models.json), and the key reaches
	# the service, not the Flow.
	peer
	nm="$JIG_ACP_CLIENTS/node_modules"
	bun=$(ls "$JIG_TEST_PREFIX"/lib/jig/snapshots/*/libexec/bun | head -n 1)
	mkdir -p "$T/pi"
	jq -n '{providers: {stub: {baseUrl: "http://127.0.0.1:18090/v1", api: "openai-completions", apiKey: "$STUB_API_KEY",
		models: [{id: "other-model"}, {id: "fake-model-1"}]}}}' >"$T/pi/models.json"
	jq -n --arg nm "$nm" --arg bun "$bun" --arg pi "$T/pi" --arg key "$XDG_CONFIG_HOME/jig/fake.key" \
		'{format: "jig-agents/1", providers: {fake: {client: "pi", command: ["/usr/bin/node", ($nm + "/pi-acp/dist/index.js")],
		  pi_command: [$bun, ($nm + "/@earendil-works/pi-coding-agent/dist/bundle/cli.js")], pi_models: ($pi + "/models.json"),
		  trees: ["/usr/bin/node", $nm, $bun, $pi], version: "0.0.34", credential: {env: "STUB_API_KEY", file: $key}}}}' \
		>"$XDG_CONFIG_HOME/jig/agents.json"
	chmod 600 "$XDG_CONFIG_HOME/jig/agents.json"
	project '.agents.ask.timeout_ms = 480000'
	RUN_TIMEOUT=9m
	grep -q "jig's pi profile: Pi started by jig's launcher with its command and --no-tools --no-extensions --no-mcp --no-skills" "$T/review.out" &&
		grep -q "client environment PI_ACP_PI_COMMAND=/.jig/pi-launcher (the profile's)" "$T/review.out" &&
		grep -q "file sha256 $(sha256sum "$T/pi/models.json" | cut -d' ' -f1) $T/pi/models.json" "$T/review.out" ||
		fail "the Plan does not show the profile: $(cat "$T/review.out")"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 | sed 's/^[^{]*//' >"$T/seen.json"
	jq -e '.stub and .model == "fake-model-1" and .auth == "bearer" and .tools == 0 and (.system | contains("<tools>\n(none)"))
		and (.user | contains("Say hello")) and (.user | contains("the document"))' "$T/seen.json" >/dev/null ||
		fail "the model service saw: $(answer 0)"
	[ "$(ev 0 .agent.name)" = pi-acp ] && [ "$(ev 0 .agent.version)" = 0.0.34 ] || fail "agent info"
	[ "$(grep -c '^POST /v1/chat/completions bearer' "$T/peer.log")" = 1 ] || fail "peer log: $(cut -c1-300 "$T/peer.log")"
	no_canary
	! pgrep -f "pi-acp|pi-coding-agent" >/dev/null || fail "a client process outlived the Run"
}
case_api_backed() {
	# R-A01: an API-backed Agent's request is prepared as data and sent
	# through the Flow's reviewed http route by the HTTP worker, which holds
	# the operator's bearer; the Flow never sees it (canary); the Plan shows
	# the Agent route and its HTTP grant.
	peer
	agents answer
	project
	grep -q "agent chat: API-backed (openai-chat), model stub-chat-1" "$T/review.out" &&
		grep -q "sent through http route llm above" "$T/review.out" && grep -q "http llm: POST http://127.0.0.1:18090/v1/chat/completions" "$T/review.out" ||
		fail "the Plan does not show the API-backed route and its grant"
	http_config "{\"format\":\"jig-http-config/1\",\"bindings\":[
		{\"flow\":\"caller\",\"route\":\"llm\",\"url\":\"http://127.0.0.1:18090/v1/chat/completions\",\"bearer\":\"$CANARY\"},
		{\"flow\":\"caller\",\"route\":\"msgs\",\"url\":\"http://127.0.0.1:18090/v1/messages\",\"bearer\":\"$CANARY\"}]}"
	steps '[{"do":"agent","route":"chat","instructions":"Be brief.","skills":["Skill A"],"input":{"doc":"d1","north":132.45,"tenth":0.1}},
		{"do":"agent","route":"claude","instructions":"Be brief.","input":"plain input"},
		{"do":"agent","route":"notchat","input":"x"}, {"do":"dump"}]'
	succeeded
	expect_ok 0
	answer 0 | jq -e '.stub and .model == "stub-chat-1" and .auth == "bearer" and .system == "Be brief.\n\nSkill A" and .user == "{\"doc\":\"d1\",\"north\":132.45,\"tenth\":0.1}"' >/dev/null ||
		fail "chat answer: $(answer 0)"
	[ "$(res 0 .stopReason)" = stop ] || fail "chat stop reason"
	expect_ok 1
	answer 1 | jq -e '.model == "stub-messages-1" and .auth == "bearer" and .system == "Be brief." and .user == "plain input" and .max_tokens == 16384' >/dev/null ||
		fail "messages answer: $(answer 1)"
	[ "$(res 1 .stopReason)" = end_turn ] || fail "messages stop reason"
	expect_refused 2 "not a openai-chat response with text"
	jq -e '.effects[0] | .effect == "agent" and .api == "openai-chat" and .http_route == "llm" and .outcome == "answer"
		and .http.outcome == "response" and .http.status == 200' "$T/pkt/record.json" >/dev/null || fail "evidence: $(jq -c .effects "$T/pkt/record.json")"
	[ "$(grep -c ' /v1/' "$T/peer.log")" = 2 ] || fail "peer log: $(cat "$T/peer.log")"
	no_canary
	! grep -qa -- "$CANARY" "$T/pkt/files/dump.txt" || fail "the Flow saw the bearer"
}
case_api_backed_refusals() {
	# R-A01: a revoked binding stops the request before it is sent; an
	# answer over the route's cap is not delivered.
	peer
	agents answer
	project '.agents.chat.max_answer_bytes = 20'
	http_config '{"format":"jig-http-config/1","bindings":[{"flow":"caller","route":"msgs","url":"http://127.0.0.1:18090/v1/messages","bearer":"b","revoked":true}]}'
	steps '[{"do":"agent","route":"claude","input":"x"}, {"do":"agent","route":"chat","input":"x"},
		{"do":"http","route":"llm","body":{"model":"any-model","messages":[]}}]'
	succeeded
	expect_refused 0 "revoked"
	[ "$(ev 0 .outcome)" = refused ] || fail "outcome $(ev 0 .outcome)"
	expect_refused 1 "over its 20"
	# The Agent's http route carries only the Agent's reviewed requests.
	expect_refused 2 "http route llm serves agent route chat"
	[ "$(grep -c ' /v1/' "$T/peer.log")" = 1 ] || fail "peer log: $(cat "$T/peer.log")"
}

case_fault_killed() {
	# Issue 18's fault matrix, during an Agent turn (the client holds the
	# prompt): SIGKILL the ACP worker, the coordinator or the outer command
	# (docs/reliability.md). The worker's loss fails the turn and the Run
	# goes on; the coordinator's publishes nothing; the outer command's
	# cancels. Every time: no client, worker, Flow or cgroup left.
	agents hang
	project '.agents.ask.timeout_ms = 60000'
	printf '%s\n' "[$ask]" >"$T/steps"
	for what in worker coordinator outer; do
		chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt"
		(cd "$T/p" && exec "$JIG" run caller --output "$T/pkt" --input steps="$T/steps" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null &
		outer=$!
		i=0; until pgrep -f "$T/client/fake-agent" >/dev/null; do i=$((i+1)); [ $i -lt 600 ] || fail "the client did not start"; sleep 0.1; done
		coord=$(pgrep -P "$outer" -x jig)
		case $what in
		worker) pkill -KILL -f /.jig/acp-worker ;;
		coordinator) kill -KILL "$coord" ;;
		outer) kill -KILL "$outer" ;;
		esac
		set +e; wait "$outer"; rc=$?; set -e
		echo "--- $what killed: exit $rc"; cat "$T/out" "$T/err"
		[ ! -f "$T/pkt/record.json" ] || jq -c '{status, effects}' "$T/pkt/record.json"
		i=0; while kill -0 "$coord" 2>/dev/null; do i=$((i+1)); [ $i -lt 600 ] || fail "the coordinator did not end"; sleep 0.1; done
		case $what in
		worker) [ "$rc" -eq 0 ] && [ "$(rec status)" = succeeded ] && [ "$(ev 0 .outcome)" = failed ] && [ "$(res 0 .ok)" = false ] ||
			fail "worker killed: the turn did not fail cleanly" ;;
		coordinator) [ "$rc" -eq 1 ] && [ ! -e "$T/pkt" ] && grep -q "killed by signal 9 before it finished; nothing was published; its scope was fenced" "$T/err" ||
			fail "coordinator killed: published or unreported" ;;
		outer) [ "$(rec status)" = cancelled ] || fail "outer killed: not cancelled" ;;
		esac
		no_client_left
		! pgrep -f '/.jig/' >/dev/null || fail "$what killed: a worker or Flow survived: $(pgrep -af /.jig/)"
		[ -z "$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)" ] || fail "$what killed: cgroups left"
		[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*')" ] || fail "$what killed: a run directory was left"
	done
}

case_hang_kill_bound_spinning() {
	# Issue 31: the deadline-to-SIGKILL bound in the provider scope under
	# load. The client ignores session/cancel and SIGTERM while two of its
	# processes spin inside the scope's 0.5 CPU: the worker's whole turn
	# (the client's start, the 3 s deadline, cancel 2 s, exit 1 s + 1 s,
	# reaped) stays within the deadline + 4 s docs/agents.md states, plus
	# 2 s for the client's start and scheduling (measured: 4.8 s past the
	# deadline, 4.2 s without the spinners).
	misbehaves hang 2 "did not answer session/cancel within 2000 ms" '.agents.ask.timeout_ms = 3000'
	total=$(ev 0 .timing.total_ms)
	echo "the turn took $total ms: $((total - 3000)) ms past the deadline, the client's start included"
	[ "$(ev 0 .exit.signal)" = 9 ] && [ "$(ev 0 .exit.forced)" = kill ] || fail "not killed: $(ev 0 .exit)"
	[ "$total" -ge 7000 ] && [ "$total" -lt 9000 ] || fail "the turn took $total ms"
	# Eight spinning processes starve the worker itself of its share of
	# the 0.5 CPU (in the emulated guest): it may not finish its sequence,
	# and then the scope's own wall clock (the deadline + 10 s) fences
	# everything: the bound that holds under any load.
	misbehaves hang 8 "did not answer session/cancel within 2000 ms\|the worker did not complete (its scope's deadline passed)" \
		'.agents.ask.timeout_ms = 3000'
	echo "eight spinners: $(ev 0 .outcome): $(ev 0 .error); the Run took $took s"
	[ "$took" -lt 45 ] || fail "the Run took $took s"
}

# Issue 32, R-P12: the provider scope's first process (a test snapshot's
# jig-acp-worker is the probe, answering with what it reads of itself) runs
# with the Plan's provider_scope: argv, environment, binds, writable mounts,
# descriptors, and the Plan's policy digest (which covers the limits). The
# client's own argv and environment are the reviewed identity, passed to
# the worker in its request (agent.answer and agent.* check those).
scratch_provider_scope_is_the_plan() {
	cp -a "$JIG_TEST_PREFIX" /var/tmp/prefix && chown -R jigtest /var/tmp/prefix
	cp "$JIG_DEV_KEY" /var/tmp/devkey && chown jigtest /var/tmp/devkey
}
case_provider_scope_is_the_plan() {
	JIG=/var/tmp/prefix/bin/jig
	snapshot_with . "$JIG_PROBE" jig-acp-worker
	agents answer
	project
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[0].agents[0].provider_scope' >"$T/scope.json"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 >"$T/inside.json"
	scope_is_plan "$T/scope.json" "$T/inside.json" || fail "the provider's scope is not its Plan's"
	[ "$(ev 0 .scope_policy_sha256)" = "$(jq -r .policy_sha256 "$T/scope.json")" ] || fail "the launch's policy digest is not the Plan's"
}

# echo_peers PORT...: loopback services that answer "PORT:what they got"
# and log each contact to $T/contacts.
echo_peers() {
	/usr/bin/python3 "$JIG_SOURCE/tests/sandbox/echo_peers.py" "$T/contacts" "$@" &
	PEERS="$PEERS $!"
	i=0; until grep -q listening "$T/contacts" 2>/dev/null; do i=$((i + 1)); [ $i -lt 200 ] || fail "echo peers"; sleep 0.05; done
}
case_egress_exact() {
	# Issue 34, R-P11: the operator's "egress" holds the provider's client to
	# exactly its endpoint, through jig's CONNECT relay in a private network
	# namespace instead of the host network; shown in the Plan, part of the
	# provider's identity.
	echo_peers 18443 18444
	agents egress 127.0.0.1:18443,127.0.0.1:18444 '.providers.fake.egress = ["127.0.0.1:18443"]'
	project
	grep -q "proxy 127.0.0.1:3128: HTTP CONNECT to exactly these HOST:PORT" "$T/review.out" || fail "the Plan does not show the relay: $(cat "$T/review.out")"
	grep -q "connect 127.0.0.1:18443" "$T/review.out" || fail "the Plan does not show the destination"
	(cd "$T/p" && "$JIG" review --json) >"$T/plan.json"
	jq -e '.plan.flows[0].agents[0] | .identity.egress == ["127.0.0.1:18443"]
		and .provider_scope.permission_plan.network == {"loopback": [], "connect": ["127.0.0.1:18443"], "proxy": "127.0.0.1:3128"}
		and .provider_scope.permission_plan.env.HTTPS_PROXY == "http://127.0.0.1:3128"' "$T/plan.json" >/dev/null ||
		fail "plan json: $(jq -c '.plan.flows[0].agents[0] | {identity, n: .provider_scope.permission_plan.network}' "$T/plan.json")"
	steps "[$ask]"
	succeeded
	expect_ok 0
	answer 0 >"$T/egress.json"
	cat "$T/egress.json"
	jq -e '.proxy == "http://127.0.0.1:3128"
		and .via_proxy["127.0.0.1:18443"] == {"status": "HTTP/1.1 200 Connection established", "reply": "18443:ping"}
		and .via_proxy["127.0.0.1:18444"].status == "HTTP/1.1 403 Forbidden"
		and .direct["127.0.0.1:18443"] == "Connection refused" and .direct["127.0.0.1:18444"] == "Connection refused"' \
		"$T/egress.json" >/dev/null || fail "the client's network is not exactly its egress"
	[ "$(grep -c '^contact 18444$' "$T/contacts" || true)" = 0 ] || fail "an ungranted endpoint was reached"
	[ "$(grep -c '^contact 18443$' "$T/contacts" || true)" = 1 ] || fail "the granted endpoint was not reached once"
	no_client_left
	# Another egress than reviewed: refused before launch.
	agents egress 127.0.0.1:18443,127.0.0.1:18444 '.providers.fake.egress = ["127.0.0.1:18444"]'
	steps "[$ask]"
	[ "$rc" -ne 0 ] && grep -q "its egress differs from the reviewed one" "$T/err" || fail "an egress change was not refused"
	# Without egress: the host network, as before.
	agents egress 127.0.0.1:18443
	project
	steps "[$ask]"
	succeeded
	answer 0 | jq -e '.direct["127.0.0.1:18443"] == "connected" and .proxy == null' >/dev/null || fail "without egress: $(answer 0)"
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
