#!/bin/sh
# Checks before work (issue 35) that need no supported host (plain lane):
# a grant that cannot work as reviewed is refused at review, with the
# numbers that disagree and the change that fixes it. (--output's parent,
# checked when a Run is admitted, is tested by unit.tree and, on a 9p
# directory, by flow.output_parent_no_noreplace.)
# Each case_* is one ctest (checks.<case>); jig runs as the unprivileged user.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-checks.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }

# api_agent PROMPT REQUEST: csv-report gets an API-backed Agent route whose
# prompt cap is PROMPT, over an http route whose request cap is REQUEST.
api_agent() {
	f="$T/p/csv-report/flow.json"
	jq --argjson p "$1" --argjson r "$2" '.http = {llm: {method: "POST", url: "https://models.example.com/v1/chat/completions", max_request_bytes: $r}}
		| .agents = {summarise: {api: "openai-chat", http: "llm", model: "some-model", max_prompt_bytes: $p}}' "$f" >"$T/flow.json"
	cp "$T/flow.json" "$f" && chown "$USER_NAME" "$f"
}

case_agent_prompt_over_request() {
	# An API-backed Agent whose max_prompt_bytes exceeds its http route's
	# max_request_bytes: refused at review (exit 2, one line with both
	# numbers, the route and the fix), nothing admitted; --json says the
	# same as jig-error/1. Equal caps are not refused for it.
	fresh
	api_agent 32768 16384
	set +e; (cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc, expected 2 and one line"
	grep -qF 'csv-report/flow.json: agent route "summarise": max_prompt_bytes 32768 is larger than max_request_bytes 16384 of its http route "llm", which carries the prompt; a prompt the Agent accepts could not be sent: lower max_prompt_bytes or raise max_request_bytes (at most 61440)' "$T/err" ||
		fail "the refusal does not give both numbers and the fix"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
	set +e; (cd "$T/p" && jig review --yes --json) >"$T/out" 2>/dev/null; rc=$?; set -e
	[ "$rc" -eq 2 ] && jq -e '.schema == "jig-error/1" and .exit == 2 and (.error | test("max_prompt_bytes 32768 is larger than max_request_bytes 16384"))' "$T/out" >/dev/null ||
		fail "--json: not jig-error/1 with both numbers: $(cat "$T/out")"
	api_agent 16384 16384
	set +e; (cd "$T/p" && jig review --yes) >"$T/out" 2>"$T/err"; set -e
	! grep -q "max_prompt_bytes .* is larger than" "$T/err" || fail "equal caps were refused"
}

"case_$1"
echo "PASS: $1"
