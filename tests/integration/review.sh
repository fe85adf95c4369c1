#!/bin/sh
# jig review without a supported host (plain lane): formats, capture
# refusals, the Plan's identity, admission and the Package/0 store cap.
# Each case_* is one ctest (review.<case>); jig runs as the unprivileged user.
# Requirements: R-P01, R-P03, R-P08, R-P12, R-V08 (see docs/requirements.md).
set -eu
. "${JIG_SOURCE:?}/tests/lib/store.sh"
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-review.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
review() { (cd "$T/p" && jig review "$@"); }
# bad PATTERN: review exits 2 with one line matching PATTERN and admits nothing.
bad() {
	set +e; review --yes >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$1" "$T/err" || fail "error does not match /$1/"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}

case_plan_and_admission() {
	fresh
	set +e; review >"$T/out" </dev/null; rc=$?; set -e
	cat "$T/out"
	# Issue 35: not admitted (no terminal to ask, no --yes) has its own exit status, 5.
	[ "$rc" -eq 5 ] || fail "not admitted exited $rc, expected 5"
	grep -q "^Plan [0-9a-f]\{64\}" "$T/out" && grep -q "flow csv-report" "$T/out" && grep -q "not admitted: no terminal to ask and no --yes" "$T/out" || fail "plan text"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "admitted without yes"
	review --yes | grep -q "^admitted Plan" || fail "not admitted with --yes"
	[ "$(stat -c %a "$T/p/.jig")" = 700 ] || fail ".jig is not 0700"
	a=$(review --json | jq -r .plan_sha256); b=$(review --json | jq -r .plan_sha256)
	[ "$a" = "$b" ] || fail "an unchanged project has two Plan identities"
	review --json | jq -e '.plan.format == "jig-plan/1" and (.plan.flows | length) == 3 and (.plan.snapshot.launch_identity | test("^[0-9a-f]{64}$"))' >/dev/null || fail "plan json"
	! grep -rqi "token\|secret\|password" "$T/p/.jig/admitted" || fail "a Plan holds something secret-looking"
}
case_interactive_yes() {
	# A terminal answer of "yes" admits; anything else does not.
	fresh
	set +e; printf 'no\n' | script -qec "cd $T/p && runuser -u $USER_NAME -- $JIG_TEST_PREFIX/bin/jig review" /dev/null >"$T/out" 2>&1; rc=$?; set -e
	grep -q "Admit this Plan" "$T/out" || fail "no prompt on a terminal: $(cat "$T/out")"
	[ "$rc" -eq 5 ] && grep -q "not admitted (answer yes, or pass --yes)" "$T/out" || fail "declined: exit $rc, expected 5: $(cat "$T/out")"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "admitted after no"
	printf 'yes\n' | script -qec "cd $T/p && runuser -u $USER_NAME -- $JIG_TEST_PREFIX/bin/jig review" /dev/null >"$T/out" 2>&1
	grep -q "admitted Plan" "$T/out" || fail "not admitted after yes: $(cat "$T/out")"
	[ -e "$T/p/.jig/admission.json" ] || fail "no admission record"
}
case_identity_follows_bytes() {
	fresh
	a=$(review --json | jq -r .plan_sha256)
	printf ' ' >>"$T/p/csv-report/main.ts"
	b=$(review --json | jq -r .plan_sha256)
	[ "$a" != "$b" ] || fail "a changed byte kept the Plan identity"
}
case_refuse_symlink_in_package() { fresh; ln -s /etc/passwd "$T/p/csv-report/link"; bad "is a symbolic link"; }
case_refuse_fifo_in_package() { fresh; mkfifo "$T/p/csv-report/fifo"; bad "special file"; }
case_refuse_hardlink_in_package() { fresh; ln "$T/p/csv-report/main.ts" "$T/p/csv-report/again.ts"; bad "hard links"; }
case_refuse_package_symlink_dir() { fresh; mv "$T/p/csv-report" "$T/p/real"; ln -s real "$T/p/csv-report"; bad "symbolic link"; }
case_refuse_bind_mount_in_package() {
	# R-S03 (audit #154): a bind mount of the same file system inside a
	# package has the package's st_dev; its mount id differs: refused. The
	# mount is made in a mount namespace of its own, review runs in it.
	fresh; mkdir "$T/p/csv-report/inner" "$T/other"; echo x >"$T/other/f"; chown -R "$USER_NAME" "$T/other"
	set +e
	unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1/other" "$1/p/csv-report/inner" &&
		[ "$(stat -c %d "$1/other")" = "$(stat -c %d "$1/p/csv-report")" ] && cd "$1/p" &&
		runuser -u "$2" -- "$3/bin/jig" review --yes' sh "$T" "$USER_NAME" "$JIG_TEST_PREFIX" >"$T/out" 2>"$T/err"
	rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc, expected 2 and one line"
	grep -q "flow csv-report: inner: is another mount" "$T/err" || fail "not refused as another mount"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
case_refuse_unknown_key() { fresh; jq '.extra = 1' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"; bad 'unknown key "extra"'; }
case_refuse_duplicate_key() { fresh; printf '{"format":"jig-project/1","flows":{"a":"csv-report","a":"x"}}' >"$T/p/jig.json"; bad "duplicate"; }
case_refuse_flow_format() { fresh; jq '.format = "jig-flow/2"' "$T/p/csv-report/flow.json" >"$T/j" && cp "$T/j" "$T/p/csv-report/flow.json"; bad "jig-flow/1"; }
case_refuse_flow_name_mismatch() { fresh; jq '.name = "other"' "$T/p/csv-report/flow.json" >"$T/j" && cp "$T/j" "$T/p/csv-report/flow.json"; bad "differs"; }
case_refuse_entry_outside() { fresh; jq '.entry = "../x.ts"' "$T/p/csv-report/flow.json" >"$T/j" && cp "$T/j" "$T/p/csv-report/flow.json"; bad "entry"; }
case_refuse_missing_entry() { fresh; rm "$T/p/csv-report/main.ts"; bad "is not a file of the package"; }
case_refuse_package_is_state() { fresh; printf '{"format":"jig-project/1","flows":{"a":".jig"}}' >"$T/p/jig.json"; bad "not .jig"; }
# A directory named .jig inside a package (issue 47's mutant capture.state_dir_taken).
case_refuse_state_in_package() {
	fresh; mkdir "$T/p/csv-report/.jig"; echo '{}' >"$T/p/csv-report/.jig/admission.json"; chown -R "$USER_NAME" "$T/p/csv-report/.jig"
	bad "flow csv-report: .jig: the protected .jig state is never part of a package"
}
case_refuse_state_mode() { fresh; mkdir -m 755 "$T/p/.jig"; chown "$USER_NAME" "$T/p/.jig"; bad "mode 0700"; }
# Run Checkpoint (issue 18, R-O01): reviewed, in the Plan, needs outputs.
ckpt() { jq "$1" "$T/p/csv-report/flow.json" >"$T/j" && cp "$T/j" "$T/p/csv-report/flow.json"; }
case_refuse_checkpoint_without_outputs() { fresh; ckpt '.checkpoint = true | .outputs = []'; bad "checkpoint needs declared outputs (a writable output mapping)"; }
case_refuse_checkpoint_not_boolean() { fresh; ckpt '.checkpoint = "yes"'; bad "checkpoint must be true or false"; }
case_checkpoint_in_plan() {
	fresh
	a=$(review --json | jq -r .plan_sha256)
	! review | grep -q "checkpoint:" || fail "a Plan without checkpoints shows one"
	ckpt '.checkpoint = true'
	review | grep -q "checkpoint: up to 16 saves (one at a time) of <= 2097152 bytes of JSON with <= 64 text files" || fail "plan text"
	review --json | jq -e '.plan.flows[] | select(.name == "csv-report") | .checkpoint == {"max_bytes": 2097152, "max_files": 64, "max_text_bytes": 1048576, "max_saves": 16, "in_flight": 1}' >/dev/null || fail "plan json"
	[ "$(review --json | jq '[.plan.flows[] | select(has("checkpoint"))] | length')" = 1 ] || fail "other Flows changed"
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "the grant is not part of the Plan's identity"
}
case_refuse_package_over_64mib() {
	fresh; head -c 67108865 /dev/zero >"$T/p/csv-report/blob"; chown "$USER_NAME" "$T/p/csv-report/blob"
	bad "larger than 64 MiB"
}
# R-S01/R-S03 (issue 47's mutants capture.files_off_by_one and
# capture.depth_off_by_one): the capture bounds at and one over.
case_refuse_package_over_4096_files() {
	fresh
	n=$(find "$T/p/csv-report" -type f | wc -l)
	mkdir "$T/p/csv-report/many"
	i=$n; while [ "$i" -lt 4096 ]; do : >"$T/p/csv-report/many/f$i"; i=$((i + 1)); done
	chown -R "$USER_NAME" "$T/p/csv-report/many"
	review --yes >/dev/null || fail "4096 files were refused"
	rm -rf "$T/p/.jig"
	: >"$T/p/csv-report/many/f4096"; chown "$USER_NAME" "$T/p/csv-report/many/f4096"
	bad "flow csv-report: more than 4096 files"
}
case_refuse_package_nested_33_deep() {
	fresh
	d="$T/p/csv-report"; i=0
	while [ "$i" -lt 32 ]; do d="$d/d"; i=$((i + 1)); done
	mkdir -p "$d"; : >"$d/f"; chown -R "$USER_NAME" "$T/p/csv-report/d"
	review --yes >/dev/null || fail "32 nested directories were refused"
	rm -rf "$T/p/.jig"
	mkdir "$d/d"; : >"$d/d/f"; chown -R "$USER_NAME" "$d/d"
	bad "nested deeper than 32 directories"
}
case_store_cap() {
	# 16 packages of 62 MiB fill the 1 GiB store; one more new artifact fails
	# closed while re-reviewing the unchanged project still succeeds.
	rm -rf "$T/p"; mkdir -p "$T/p"
	i=0; flows=""
	while [ $i -lt 16 ]; do
		mkdir -p "$T/p/f$i"
		printf '{"format":"jig-flow/1","name":"f%s","entry":"main.js","inputs":[],"outputs":[]}' $i >"$T/p/f$i/flow.json"
		echo "export default () => {}" >"$T/p/f$i/main.js"
		head -c 65011712 /dev/urandom >"$T/p/f$i/blob"
		flows="$flows${flows:+,}\"f$i\":\"f$i\""
		i=$((i+1))
	done
	printf '{"format":"jig-project/1","flows":{%s}}' "$flows" >"$T/p/jig.json"
	chown -R "$USER_NAME" "$T/p"
	review --yes >/dev/null || fail "the first review failed"
	review --yes >/dev/null || fail "an unchanged re-review failed at the cap"
	cp "$T/p/f0/blob" "$T/blob0"
	head -c 65011712 /dev/urandom >"$T/p/f0/blob"
	rm -f "$T/p/.jig/admission.json"
	bad "Package/0 store is full.*jig gc --project \. frees what the admitted Plan and retained Run records do not reference"
	cp "$T/blob0" "$T/p/f0/blob"
	review --yes >/dev/null || fail "the unchanged project no longer reviews"
	# R-S04: Binding resource trees are retained under the same cap: five
	# bindings, each with a new 8,000,000-byte tree, do not fit beside the
	# full store (the first that does not is named).
	for i in 0 2 4 6 8; do
		mkdir -p "$T/p/res$i"
		head -c 8000000 /dev/urandom >"$T/p/res$i/data"
		jq --arg t "f$((i + 1))" --arg r "res$i" '.bindings = {x: {flow: $t, timeout_ms: 60000, resources: {docs: $r}}}' "$T/p/f$i/flow.json" >"$T/j"
		cp "$T/j" "$T/p/f$i/flow.json"
		jq '.inputs = ["docs"]' "$T/p/f$((i + 1))/flow.json" >"$T/j"
		cp "$T/j" "$T/p/f$((i + 1))/flow.json"
	done
	chown -R "$USER_NAME" "$T/p"
	rm -f "$T/p/.jig/admission.json"
	bad "f[0-9] binding x resource docs: the Package/0 store is full"
}

case_http_grants_in_plan() {
	# R-H06: the Plan pins every HTTP grant (route, method, URL, caps,
	# deadline, Schema/0) and names no credential.
	rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/http" "$T/p"; chown -R "$USER_NAME" "$T/p"
	review --yes >"$T/out"
	grep -q "http post: POST http://127.0.0.1:18080/ok" "$T/out" && grep -q "request body <= 256 bytes matching its Schema/0" "$T/out" || fail "plan text: $(cat "$T/out")"
	# A GET takes no body: its line says so and shows no body cap (issue 46).
	[ "$(grep -A1 "^    http ok: GET http://127.0.0.1:18080/ok$" "$T/out" | tail -n 1)" = "      no request body, response <= 1048576 bytes, deadline 10000 ms;" ] ||
		fail "the GET route's line: $(grep -A1 "http ok: GET" "$T/out")"
	! grep -A1 "^    http [a-z]*: GET " "$T/out" | grep -q "request body <=" || fail "a GET route printed with a request body"
	review --json | jq -e '.plan.flows[0].scope.permission_plan.network == "none" and (.plan.flows[0].http | length) == 12
		and (.plan.flows[0].http[] | select(.route == "post") | .body_schema.required == ["n"] and .max_request_bytes == 256 and .timeout_ms == 10000)' >/dev/null || fail "plan json"
	a=$(review --json | jq -r .plan_sha256)
	jq '.http.ok.url = "http://127.0.0.1:18080/ok2"' "$T/p/caller/flow.json" >"$T/j" && cp "$T/j" "$T/p/caller/flow.json"
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "a changed grant kept the Plan identity"
}
case_refuse_http_grant_url() {
	# Review refuses a grant URL that is not https or numeric-loopback http
	# in libcurl's normal form, naming the route.
	for u in "http://localhost:18080/ok" "http://127.1/ok" "HTTP://127.0.0.1/ok" "http://127.0.0.1:80/ok" "ftp://127.0.0.1/ok" \
		"http://10.0.0.1/ok" "https://u:p@example.com/" "https://example.com/#frag" "example.com/ok"; do
		rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/http" "$T/p"
		jq --arg u "$u" '.http.ok.url = $u' "$JIG_SOURCE/tests/flow/http/caller/flow.json" >"$T/p/caller/flow.json"
		chown -R "$USER_NAME" "$T/p"
		bad 'http route "ok": URL'
	done
}
case_refuse_http_grant_fields() {
	for change in '.http.ok.method = "CONNECT"' '.http.ok.max_response_bytes = 4194305' '.http.ok.timeout_ms = 60001' \
		'.http.ok.extra = 1' '.http.ok.body_schema = {"type":"object"}' '.http.post.body_schema = {"type":"object","pattern":"x"}' \
		'.http["Bad Name"] = .http.ok'; do
		rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/http" "$T/p"
		jq "$change" "$JIG_SOURCE/tests/flow/http/caller/flow.json" >"$T/p/caller/flow.json"
		chown -R "$USER_NAME" "$T/p"
		bad 'http'
	done
}

# Issue 15: Agent routes at review. The provider is the operator's
# (agents.json); /usr/bin/true stands in for a client (its digest is pinned).
agent_project() {
	rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/agent" "$T/p"
	[ -z "${1:-}" ] || { jq "$1" "$JIG_SOURCE/tests/flow/agent/caller/flow.json" >"$T/p/caller/flow.json"; }
	chown -R "$USER_NAME" "$T/p"
}
# agents_json [JQ]: the operator's agents.json (0600, jigtest's) with
# provider "fake", edited by JQ.
agents_json() {
	export XDG_CONFIG_HOME="$T/config"
	mkdir -p "$XDG_CONFIG_HOME/jig"
	jq -n '{format: "jig-agents/1", providers: {fake: {client: "acp", command: ["/usr/bin/true", "--flag"], trees: ["/usr/bin/true"],
		version: "1.0.0", model_env: "FAKE_MODEL", env: {FAKE_BASE_URL: "http://127.0.0.1:9/"},
		credential: {env: "FAKE_KEY", value: "inline-credential-canary"}}}}' | jq "${1:-.}" >"$XDG_CONFIG_HOME/jig/agents.json"
	chown -R "$USER_NAME" "$T/config"
	chmod 600 "$XDG_CONFIG_HOME/jig/agents.json"
}
case_agent_route_in_plan() {
	# R-A02, R-A09: the Plan pins the route, the provider identity (client,
	# command, the executable's digest, version, environment, model, the
	# credential's variable name) and the provider scope; never the credential.
	agent_project; agents_json
	review --yes >"$T/out"
	cat "$T/out"
	sum=$(sha256sum /usr/bin/true | cut -d' ' -f1)
	grep -q "agent ask: provider fake (client acp, version 1.0.0), model fake-model-1" "$T/out" &&
		grep -q "file sha256 $sum /usr/bin/true" "$T/out" && grep -q "client environment FAKE_BASE_URL=http://127.0.0.1:9/" "$T/out" &&
		grep -q "client environment FAKE_MODEL=<the model>" "$T/out" || fail "plan text"
	review --json | jq -e '.plan.flows[0].agents[0] | .route == "ask" and .identity.version == "1.0.0" and .identity.credential_env == "FAKE_KEY"
		and .max_prompt_bytes == 4096 and .timeout_ms == 20000 and .provider_scope.permission_plan.network == "host"
		and (.provider_scope.policy_sha256 | test("^[0-9a-f]{64}$"))' >/dev/null || fail "plan json"
	! grep -rq "inline-credential-canary" "$T/p/.jig" "$T/out" || fail "the credential is in the Plan"
	a=$(review --json | jq -r .plan_sha256)
	agents_json '.providers.fake.version = "1.0.1"'
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "another client version kept the Plan identity"
	agents_json '.providers.fake.credential.value = "another"'
	[ "$(review --json | jq -r .plan_sha256)" = "$a" ] || fail "the credential is part of the Plan identity"
}
case_refuse_agent_unknown_provider() {
	# R-A02: a provider that is not configured is refused at review.
	agent_project; export XDG_CONFIG_HOME="$T/none"
	bad 'agent provider "fake": no operator configuration .*/none/jig/agents.json; agent providers are configured there'
	agents_json '.providers = {other: .providers.fake}'
	bad 'agent provider "fake" is not configured in'
}
case_refuse_agent_config_unsafe() {
	# R-A02, R-A03: agents.json must be the operator's, 0600, not a link.
	agent_project; agents_json
	chmod 644 "$T/config/jig/agents.json"; bad "must be yours and mode 0600"
	# Another owner's file: unreadable here (0600), refused either way.
	agents_json; chown root "$T/config/jig/agents.json"; bad "agents.json"
	agents_json; chown root "$T/config/jig/agents.json"; chmod 644 "$T/config/jig/agents.json"; bad "must be yours and mode 0600"
	agents_json; mv "$T/config/jig/agents.json" "$T/config/jig/real.json"; ln -s real.json "$T/config/jig/agents.json"
	bad "agents.json"
}
case_refuse_agent_config_unreadable() {
	# Issue 44: agents.json the operator cannot read (EACCES on the
	# configuration directory or its parent, ENOTDIR) is a refusal naming
	# the file and the error, not "no operator configuration".
	agent_project; agents_json
	chmod 000 "$T/config/jig"
	bad "^jig: $T/config/jig/agents.json: Permission denied: cannot read the operator configuration; fix its permissions or remove it\$"
	chmod 700 "$T/config/jig"; chmod 000 "$T/config"
	bad "agents.json: Permission denied: cannot read the operator configuration"
	chmod 755 "$T/config"; rm -rf "$T/config/jig"; touch "$T/config/jig"
	bad "agents.json: Not a directory: cannot read the operator configuration"
	rm "$T/config/jig"
	bad 'agent provider "fake": no operator configuration .*agents.json; agent providers are configured there'
}
case_refuse_agent_config_fields() {
	agent_project
	for change in '.providers.fake.client = "gemini"' '.providers.fake.env = {OPENAI_API_KEY: "x"}' \
		'.providers.fake.trees = ["/usr/lib"]' '.providers.fake.command = ["true"]' '.providers.fake.env = {HOME: "/"}' \
		'.providers.fake.credential = {env: "FAKE_KEY"}' '.providers.fake.extra = 1' '.format = "jig-agents/2"' \
		'.providers.fake.trees = ["/"]' '.providers.fake.trees = ["/usr/bin/true", "/etc"]' '.providers.fake.version = ""' \
		'.providers.fake.trees += [$ENV.XDG_CONFIG_HOME]' '.providers.fake.trees += [($ENV.XDG_CONFIG_HOME | sub("/config$"; ""))]' \
		'.providers.fake.credential = {env: "FAKE_KEY", file: "/usr/bin/true"}' '.providers.fake.command = ["/usr/bin/../bin/true"]'; do
		agents_json "$change"
		bad 'agents.json\|provider\|scope agent-ask'
	done
}
case_agent_egress_in_plan() {
	# Issue 34, R-P11: the operator's egress puts the provider scope in a
	# private network namespace with jig's CONNECT relay to exactly those
	# HOST:PORT; shown in the Plan and part of its identity.
	agent_project; agents_json '.providers.fake.egress = ["Models.Example.com:443"]'
	review --yes >"$T/out"
	cat "$T/out"
	grep -q "proxy 127.0.0.1:3128: HTTP CONNECT to exactly these HOST:PORT (a name-and-port rule, not an IP firewall)" "$T/out" &&
		grep -q "connect models.example.com:443" "$T/out" && grep -q "HTTPS_PROXY=http://127.0.0.1:3128" "$T/out" || fail "plan text"
	review --json | jq -e '.plan.flows[0].agents[0] | .identity.egress == ["Models.Example.com:443"]
		and .provider_scope.permission_plan.network == {"loopback": [], "connect": ["models.example.com:443"], "proxy": "127.0.0.1:3128"}
		and .provider_scope.permission_plan.env.https_proxy == "http://127.0.0.1:3128"' >/dev/null || fail "plan json"
	a=$(review --json | jq -r .plan_sha256)
	agents_json '.providers.fake.egress = ["models.example.com:8443"]'
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "another egress kept the Plan identity"
	agents_json
	review --json | jq -e '.plan.flows[0].agents[0] | (.identity | has("egress") | not) and .provider_scope.permission_plan.network == "host"' >/dev/null ||
		fail "without egress the provider scope is not the host network's"
}
case_refuse_agent_egress_fields() {
	agent_project
	for c in '"x"@@egress must be an array of 1-16' '[]@@egress must be an array of 1-16' \
		'["a.example"]@@egress\[0\] "a.example": not HOST:PORT' '["a.example:0"]@@egress\[0\] "a.example:0": not HOST:PORT' \
		'["http://a.example:443"]@@not HOST:PORT' '["a.example:443", "A.example:443"]@@egress\[1\] "A.example:443" is listed twice' \
		'[range(17) | "h\(.).example:443"]@@egress must be an array of 1-16'; do
		agents_json ".providers.fake.egress = ${c%%@@*}"
		bad "${c#*@@}"
	done
	agents_json '.providers.fake.egress = ["a.example:443"] | .providers.fake.env.HTTPS_PROXY = "http://evil:1"'
	bad 'env "HTTPS_PROXY" is set by jig for egress'
}
# pi_agents_json [JQ]: provider "fake" as client pi (JQ edits it); /usr/bin/true and
# /usr/bin/false stand in for pi-acp and Pi, $T/pi holds its models.json.
pi_agents_json() {
	mkdir -p "$T/pi"; echo '{"providers": {}}' >"$T/pi/models.json"; chown -R "$USER_NAME" "$T/pi"
	agents_json '.providers.fake = {client: "pi", command: ["/usr/bin/true"], trees: ["/usr/bin/true", "/usr/bin/false", "'"$T/pi"'"],
		version: "0.0.34", pi_command: ["/usr/bin/false", "'"$T/pi/models.json"'"], pi_models: "'"$T/pi/models.json"'",
		credential: {env: "STUB_API_KEY", value: "inline-credential-canary"}} | .providers.fake |= ('"${1:-.}"')'
}
case_r_a08_codex_profile_restrictions() {
	# R-A08 (audit #50, the Codex part): jig's codex profile, as composed
	# into the Plan and the provider identity: its arguments turn off
	# Codex's bundled Skills and Skills instructions, plugins, apps and
	# hooks (besides the read-only sandbox, approvals on request and no web
	# search), appended after the operator's own arguments; the managed
	# requirements file is bound where Codex reads it. agent.codex runs the
	# real codex-acp with this profile (the model request carries no Skill).
	agent_project
	agents_json '.providers.fake = {client: "codex", command: ["/usr/bin/true", "-c", "features.plugins=true"], trees: ["/usr/bin/true"],
		version: "0.16.0", credential: {env: "OPENAI_API_KEY", value: "inline-credential-canary"}}'
	review --yes >"$T/out"
	cat "$T/out"
	grep -q "jig's codex profile: arguments -c sandbox_mode=\"read-only\" -c approval_policy=\"on-request\" -c web_search=\"disabled\" -c skills.bundled.enabled=false -c skills.include_instructions=false -c features.plugins=false -c features.apps=false -c features.hooks=false -c model=\"@model\"" "$T/out" ||
		fail "the Plan does not show the profile's restrictions"
	grep -q "/etc/codex/requirements.toml" "$T/out" || fail "the managed requirements are not bound"
	review --json | jq -e '.plan.flows[0].agents[0].identity.profile.args as $a
		| ($a | index("skills.bundled.enabled=false")) and ($a | index("skills.include_instructions=false"))
		and ($a | index("features.plugins=false")) and ($a | index("features.apps=false")) and ($a | index("features.hooks=false"))
		and $a[-1] == "model=\"@model\""' >/dev/null || fail "plan json: $(review --json | jq -c '.plan.flows[0].agents[0].identity.profile')"
	# The operator's command is pinned as given; the profile's arguments
	# are jig's, appended to it at launch (docs/agents.md).
	review --json | jq -e '.plan.flows[0].agents[0].identity.command == ["/usr/bin/true", "-c", "features.plugins=true"]' >/dev/null ||
		fail "the command: $(review --json | jq -c '.plan.flows[0].agents[0].identity.command')"
}
case_agent_pi_profile_in_plan() {
	# Issue 15: jig's pi profile in the Plan: pi-acp starts jig's launcher,
	# which starts the reviewed Pi command with tools, extensions, MCP,
	# Skills, prompt templates, context files and the session file off and
	# the route's model; Pi's command and models.json are pinned by digest.
	agent_project; pi_agents_json
	review --yes >"$T/out"
	cat "$T/out"
	grep -q "agent ask: provider fake (client pi, version 0.0.34), model fake-model-1" "$T/out" &&
		grep -q "^      Pi command: /usr/bin/false $T/pi/models.json$" "$T/out" &&
		grep -q "^      Pi models.json: $T/pi/models.json$" "$T/out" &&
		grep -q "file sha256 $(sha256sum /usr/bin/false | cut -d' ' -f1) /usr/bin/false" "$T/out" &&
		grep -q "file sha256 $(sha256sum "$T/pi/models.json" | cut -d' ' -f1) $T/pi/models.json" "$T/out" &&
		grep -q "jig's pi profile: Pi started by jig's launcher with its command and --no-tools --no-extensions --no-mcp --no-skills --no-prompt-templates --no-context-files --no-approve --no-session --offline --model @model (@model: the model)" "$T/out" &&
		grep -q "client environment PI_ACP_PI_COMMAND=/.jig/pi-launcher (the profile's)" "$T/out" &&
		grep -q "client environment PI_OFFLINE=1 (the profile's)" "$T/out" || fail "plan text"
	grep -q "/.jig/pi-launcher" "$T/out" || fail "the provider scope does not bind the launcher"
	# R-A07 (managed restrictions): the provider scope binds jig's managed
	# settings and requirements where Claude Code and Codex read them.
	grep -q "/etc/claude-code/managed-settings.json" "$T/out" && grep -q "/etc/codex/requirements.toml" "$T/out" ||
		fail "the provider scope does not bind the managed restrictions"
	review --json | jq -e '.plan.flows[0].agents[0].identity | .client == "pi" and .pi_command == ["/usr/bin/false", "'"$T/pi/models.json"'"]
		and .pi_models == "'"$T/pi/models.json"'" and (.profile.pi_args | index("--no-tools")) and .profile.select_model == false' >/dev/null || fail "plan json"
	! grep -rq "inline-credential-canary" "$T/p/.jig" "$T/out" || fail "the credential is in the Plan"
	a=$(review --json | jq -r .plan_sha256)
	echo '{"providers": {"x": {}}}' >"$T/pi/models.json"
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "another models.json kept the Plan identity"
}
case_refuse_agent_pi_config() {
	# Issue 15: the pi client's own keys, validated strictly; each refusal
	# is one line at review.
	agent_project
	for c in 'del(.pi_command)@@needs pi_command' 'del(.pi_models)@@needs pi_models' '.pi_command = []@@needs pi_command' \
		'.pi_command = ["/usr/bin/false", "--tools", "bash"]@@pi_command\[1\] must be a normalised absolute path' \
		'.pi_command = ["/usr/bin/false", "-e", "/x"]@@pi_command\[1\] must be' '.pi_command = ["false"]@@pi_command\[0\] must be' \
		'.pi_command = ["/usr/bin/env"]@@pi_command\[0\] /usr/bin/env is in none of its trees' \
		'.pi_command = ["/usr/bin/false", "/usr/bin/false", "/usr/bin/false", "/usr/bin/false", "/usr/bin/false"]@@needs pi_command: 1-4' \
		'.pi_models = "/etc/passwd"@@pi_models /etc/passwd is in none of its trees' '.pi_models = "relative.json"@@needs pi_models' \
		'.pi_models = .trees[2]@@not a regular file' '.pi_command = ["/usr/bin/false", "/usr/bin/../bin/false"]@@pi_command\[1\] must be' \
		'.env = {JIG_PI_ARGV: "[]"}@@JIG_PI_ARGV is set by jig.s pi launcher' \
		'.env = {PI_CODING_AGENT_DIR: "/tmp"}@@PI_CODING_AGENT_DIR is set by jig.s pi launcher' \
		'.model_env = "JIG_PI_MODELS"@@JIG_PI_MODELS is set by jig.s pi launcher' \
		'.env = {PI_OFFLINE: "0"}@@env "PI_OFFLINE" is set by the pi profile' \
		'.client = "acp"@@pi_command and pi_models are for client "pi" only'; do
		pi_agents_json "${c%%@@*}"
		bad "${c#*@@}"
	done
}
case_refuse_agent_pi_option_model() {
	# Pi gets the route's model as its own argument: one starting with '-'
	# would be read as an option, refused at review for a pi provider.
	agent_project '.agents.ask.model = "-e"'; pi_agents_json
	bad "flow caller: agent route ask: model \"-e\" starts with '-'; Pi would read it as an option"
	agent_project '.agents.ask.model = "--tools"'; pi_agents_json
	bad "starts with '-'"
}
case_agent_config_error_hides_credential() {
	# A syntax error in agents.json names the line and column, never the
	# bytes there (a credential may be among them).
	agent_project; agents_json
	sed -i 's/"inline-credential-canary"/"inline-credential-canary\\q"/' "$T/config/jig/agents.json"
	grep -q 'canary\\q' "$T/config/jig/agents.json" || fail "no broken escape"
	bad "not valid JSON (line [0-9]*, column [0-9]*)"
	! grep -q "canary" "$T/err" || fail "the error quotes the credential: $(cat "$T/err")"
}
case_retain_sessions_reviewed() {
	# R-A10: retain_sessions is a reviewed grant of a native client whose
	# history jig knows (codex): printed in the Plan and part of its
	# identity; elsewhere refused at review.
	agents_json '.providers.fake.client = "codex"'
	agent_project
	a=$(review --json | jq -r .plan_sha256)
	agent_project '.agents.ask.retain_sessions = true'
	review --yes >"$T/out"
	grep -q "retained sessions: after a clean turn the client's session history (.codex/sessions) is kept in the" "$T/out" ||
		fail "plan text: $(cat "$T/out")"
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "retain_sessions is not part of the Plan identity"
	agents_json
	agent_project '.agents.ask.retain_sessions = true'
	bad "agent route ask: retain_sessions needs a client whose session history jig knows (codex); provider fake is acp"
	agents_json '.providers.fake.client = "codex"'
	for change in '.agents.ask.retain_sessions = "yes"' '.agents.chat.retain_sessions = true' '.agents.ask.retain_sessions = 1'; do
		agent_project "$change"
		bad "retain_sessions is true or false, and only for a native client"
	done
}
case_refuse_agent_grant_fields() {
	agents_json
	for change in '.agents.ask.model = "a b"' '.agents.ask.model = ""' '.agents.ask.timeout_ms = 600001' '.agents.ask.extra = 1' \
		'.agents.ask.max_prompt_bytes = 49153' '.agents["Bad"] = .agents.ask' 'del(.agents.ask.model)' \
		'.http.ask = {method: "GET", url: "http://127.0.0.1:9/"}' '.agents.chat.http = "nope"' '.agents.chat.timeout_ms = 1000' \
		'.agents.chat.api = "other"' '.agents.chat.provider = "fake"' '.http.llm.method = "GET"' 'del(.agents.chat.http)'; do
		agent_project "$change"
		bad 'agent\|http'
	done
}

# Issue 17: Project Command routes at review.
command_project() {
	rm -rf "$T/p"; cp -r "$JIG_SOURCE/tests/flow/command" "$T/p"
	[ -z "${1:-}" ] || { jq "$1" "$JIG_SOURCE/tests/flow/command/caller/flow.json" >"$T/p/caller/flow.json"; }
	chown -R "$USER_NAME" "$T/p"
}
case_command_routes_in_plan() {
	# R-K01: the Plan pins each command route (its deadline, attachment,
	# caps) and its own scope: Bun, the supplied files read-only at
	# /command, only the route's attachment, no network, the effect envelope.
	command_project
	review --yes >"$T/out"
	cat "$T/out"
	grep -q "command run: program text the Flow supplies per call (<= 262144 bytes in <= 64 files, never kept)" "$T/out" &&
		grep -q "command tests: .*" "$T/out" && grep -q "attachment data read-only at /input/data" "$T/out" &&
		grep -q "no Flow package, credentials or network; its output and exit do not prove what it ran" "$T/out" || fail "plan text"
	review --json >"$T/plan.json"
	jq -e '.plan.flows[0].commands | length == 4 and (.[0] | .route == "run" and .timeout_ms == 30000 and (has("input") | not)
		and .caps == {files: 64, text_bytes: 262144, args: 32, stdin_bytes: 16384, retained_bytes_per_pipe: 65536, calls_per_run: 16}
		and .command_scope.permission_plan.network == "none" and .command_scope.argv == ["/.jig/bun"])
		and (.[1] | .input == "data") and .[0].command_scope.policy_sha256 != .[1].command_scope.policy_sha256
		and .[0].command_scope.policy_sha256 != .[2].command_scope.policy_sha256 and ([.[0,1,2] | has("capture")] == [false, false, false])' "$T/plan.json" >/dev/null ||
		fail "plan json: $(jq -c '.plan.flows[0].commands' "$T/plan.json")"
	jq -c '.plan.flows[0].commands[1].command_scope.permission_plan' "$T/plan.json"
	jq -e '.plan.flows[0].commands[1].command_scope.permission_plan | tostring | test("/input/data") and (test("\"/flow\"") | not)' "$T/plan.json" >/dev/null ||
		fail "the tests route does not see its attachment, or sees the Flow package"
	jq -e '.plan.flows[0].commands[0].command_scope.permission_plan | tostring | test("/input") | not' "$T/plan.json" >/dev/null ||
		fail "a route without an input sees /input"
	a=$(jq -r .plan_sha256 "$T/plan.json")
	command_project '.commands.run.timeout_ms = 30001'
	[ "$(review --json | jq -r .plan_sha256)" != "$a" ] || fail "a changed deadline kept the Plan identity"
	# A Flow without command routes has none in its Plan.
	fresh
	review --json | jq -e '[.plan.flows[] | has("commands")] | any | not' >/dev/null || fail "commands in a Plan without routes"
}
case_command_capture_in_plan() {
	# R-K03: a route's "capture": true is pinned in the Plan (its caps and
	# its own scope: a held /capture tmpfs), shown in its text, and changes
	# the Plan's identity; other routes keep theirs.
	command_project
	review --yes >"$T/out"
	grep -q "command capt: .*" "$T/out" && grep -q "its files under /capture (a held tmpfs) read by jig after the scope is fenced, <= 262144 bytes in <= 64" "$T/out" &&
		grep -q "returned to the Flow as data (never run or imported)" "$T/out" || fail "plan text"
	review --json >"$T/plan.json"
	jq -e '.plan.flows[0].commands[3] | .route == "capt" and .capture == {path: "/capture", files: 64, bytes: 262144}
		and (.command_scope.permission_plan | tostring | test("/capture"))' "$T/plan.json" >/dev/null ||
		fail "plan json: $(jq -c '.plan.flows[0].commands[3]' "$T/plan.json")"
	jq -e '[.plan.flows[0].commands[0,1,2].command_scope.permission_plan | tostring | test("/capture")] == [false, false, false]' "$T/plan.json" >/dev/null ||
		fail "a route without capture has /capture"
	a=$(jq -r .plan_sha256 "$T/plan.json") pol=$(jq -r '.plan.flows[0].commands[3].command_scope.policy_sha256' "$T/plan.json")
	command_project '.commands.capt.capture = false'
	review --json >"$T/plan2.json"
	[ "$(jq -r .plan_sha256 "$T/plan2.json")" != "$a" ] && [ "$(jq -r '.plan.flows[0].commands[3].command_scope.policy_sha256' "$T/plan2.json")" != "$pol" ] ||
		fail "dropping the capture kept the Plan identity or the scope"
}
case_refuse_command_grant_fields() {
	for change in '.commands = []' '.commands.run.timeout_ms = 600001' '.commands.run.timeout_ms = 999' 'del(.commands.run.timeout_ms)' \
		'.commands.run.extra = 1' '.commands["Bad Name"] = {timeout_ms: 1000}' '.commands.run.input = "nope"' \
		'.commands.run.input = 1' '.commands.run = "x"' '.commands = ([range(9) | {key: "r\(.)", value: {timeout_ms: 1000}}] | from_entries)' \
		'.http = {run: {method: "GET", url: "https://example.com/", timeout_ms: 1000}}' '.commands.capt.capture = "yes"' \
		'.commands.capt.capture = 1'; do
		command_project "$change"
		bad 'command'
	done
}

# Issue 44: every new grant is on screen before it is admitted; what
# scopes share is printed once; an unchanged project is already admitted.
ten_flows() { rm -rf "$T/p"; "$JIG_SOURCE/tests/fixtures/ten-flows/make.sh" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
# flowjq FLOW JQ: edit FLOW's flow.json.
flowjq() { jq "$2" "$T/p/$1/flow.json" >"$T/j" && cp "$T/j" "$T/p/$1/flow.json"; }
# newflow NAME JSON: a Flow added to the project.
newflow() {
	mkdir -p "$T/p/$1"; echo "export default async () => {};" >"$T/p/$1/main.ts"
	printf '%s' "$2" | jq --arg n "$1" '{format: "jig-flow/1", name: $n, entry: "main.ts", inputs: [], outputs: ["out.txt"]} + .' >"$T/p/$1/flow.json"
	jq --arg n "$1" '.flows[$n] = $n' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"
	chown -R "$USER_NAME" "$T/p"
}
# shown LINE: the review's text ($T/out) has LINE, as a whole line.
shown() { grep -qxF -- "$1" "$T/out" || fail "not shown: $1"; }
case_rereview_shows_new_grants() {
	# Must-show 2: after adding a Flow with an HTTP route and a command, a
	# Flow with a binding, and widening grants of existing Flows (a URL, a
	# command's deadline, a binding's read map), the re-review prints each
	# of them in full, their scopes too; unchanged Flows one line each.
	ten_flows
	review --yes >/dev/null
	review --json >"$T/was.json"
	newflow sneak '{"inputs": ["data"], "http": {"exfil": {"method": "POST", "url": "https://evil.example.com/upload"}},
		"commands": {"shell": {"input": "data", "timeout_ms": 5000}}}'
	newflow relay '{"inputs": ["plan", "notes"], "bindings": {"kid": {"flow": "child", "timeout_ms": 45000, "read": {"plan": "plan", "notes": "notes"}}}}'
	flowjq post '.http.get.url = "http://127.0.0.1:18080/ok2"'
	flowjq fetch '.http.all = {method: "GET", url: "https://status.example.com/v2/all"}'
	flowjq tools '.commands.lint.timeout_ms = 20000'
	flowjq caller '.inputs += ["notes"] | .bindings.child.read.notes = "notes"'
	flowjq child '.inputs += ["notes"]'
	set +e; review >"$T/out" </dev/null; rc=$?; set -e
	cat "$T/out"
	[ "$rc" -eq 5 ] || fail "exit $rc, expected 5 (not admitted)"
	# The new Flows, each grant's line in full.
	shown "  flow sneak (new: not in the admitted Plan)"
	shown "    attachments (read-only at /input): data"
	shown "    http exfil: POST https://evil.example.com/upload"
	shown "      request body <= 16384 bytes matching its Schema/0, response <= 1048576 bytes, deadline 10000 ms;"
	grep -q "^    command shell: program text the Flow supplies per call" "$T/out" &&
		grep -q "at most 16 calls per Run, deadline 5000 ms" "$T/out" && grep -q "; attachment data read-only at /input/data;" "$T/out" ||
		fail "the command route is not shown in full"
	shown "      scope command-shell: what every Project Command scope has (above), and:"
	shown "          /input/data                  <- @run/input/data"
	shown "  flow relay (new: not in the admitted Plan)"
	shown "    binding kid -> flow child: deadline 45000 ms (capped by the root's); reads plan <- plan, notes <- notes; writes nothing"
	# A Flow in a binding relation says why its CPU is 0.5, alone too (issue 46).
	grep -A40 "^  flow relay " "$T/out" | grep -qxF "    in a binding relation (it calls, or is called by, another Flow): its limits above are the" &&
		shown "      binding envelope's (0.5 CPUs), also when it runs alone" || fail "the bound Flow's envelope is not said"
	! grep -A30 "^  flow sneak " "$T/out" | sed '/^  flow relay /,$d' | grep -q "in a binding relation" || fail "an unbound Flow is said to be bound"
	# The widened grants of existing Flows.
	shown "  flow post (changed: what is not as admitted is shown in full)"
	shown "    http get: GET http://127.0.0.1:18080/ok2"
	shown "    http all: GET https://status.example.com/v2/all"
	shown "    as admitted (not shown again): attachments, outputs, scope, 1 route"
	! grep -q "http put" "$T/out" || fail "the unchanged route is printed again"
	grep -q "^    command lint: .*" "$T/out" && grep -q "at most 16 calls per Run, deadline 20000 ms" "$T/out" || fail "the raised deadline is not shown"
	shown "    binding child -> flow child: deadline 60000 ms (capped by the root's); reads plan <- plan, notes <- notes; writes nothing"
	shown "  the other 5 Flows as admitted, not shown again (jig review --full prints the whole Plan)"
	! grep -q "plain-a" "$T/out" || fail "an unchanged Flow is printed again"
	# Whatever is not exactly in the admitted Plan is on screen: every
	# route, command and binding that differs from the admitted one of its
	# name by its first line, every scope whose policy the admitted Plan
	# does not have by its policy line.
	review --json >"$T/now.json"
	jq -r --slurpfile was "$T/was.json" '($was[0].plan.flows | map({key: .name, value: .}) | from_entries) as $w
		| .plan.flows[] | .name as $f | ($w[$f] // {}) as $o
		| ((.http // [])[] | . as $h | select([($o.http // [])[] | select(. == $h)] | length == 0) | "    http \(.route): \(.method) \(.url)"),
		  ((.commands // [])[] | . as $c | select([($o.commands // [])[] | select(. == $c)] | length == 0) | "    command \(.route): program text the Flow supplies per call (<= \(.caps.text_bytes) bytes in <= \(.caps.files) files, never kept),"),
		  ((.bindings // [])[] | . as $b | select([($o.bindings // [])[] | select(. == $b)] | length == 0) | "    binding \(.name) -> flow \(.flow): *")' "$T/now.json" >"$T/expect"
	[ "$(wc -l <"$T/expect")" -ge 6 ] || fail "the test expects too little: $(cat "$T/expect")"
	while IFS= read -r line; do
		case "$line" in
		*'*') grep -q "^${line%\*}" "$T/out" || fail "not shown: $line" ;;
		*) shown "$line" ;;
		esac
	done <"$T/expect"
	jq -r '.. | objects | .policy_sha256? // empty' "$T/was.json" | sort -u >"$T/was.pol"
	jq -r '.. | objects | .policy_sha256? // empty' "$T/now.json" | sort -u | comm -13 "$T/was.pol" - >"$T/new.pol"
	[ "$(wc -l <"$T/new.pol")" -ge 5 ] || fail "expected new scopes"
	while read -r pol; do grep -q "^ *policy sha256 $pol" "$T/out" || fail "scope policy $pol is not shown"; done <"$T/new.pol"
	# Admitted, the next review has nothing new.
	review --yes >/dev/null
	[ "$(review </dev/null)" = "Plan $(jq -r .plan_sha256 "$T/now.json") is already admitted; nothing changed" ] || fail "not already admitted"
}
case_unchanged_rereview_is_admitted() {
	# Must-show 2: an unchanged re-review says so in one line and exits 0,
	# with or without --yes, without a terminal; --full still prints the
	# whole Plan; --json says admitted.
	fresh
	review --yes >/dev/null
	sha=$(review --json | jq -r .plan_sha256)
	for args in "" "--yes"; do
		set +e; review $args >"$T/out" </dev/null; rc=$?; set -e
		[ "$rc" -eq 0 ] || fail "review $args: exit $rc"
		[ "$(cat "$T/out")" = "Plan $sha is already admitted; nothing changed" ] || fail "review $args: $(cat "$T/out")"
	done
	set +e; review --full >"$T/out" </dev/null; rc=$?; set -e
	[ "$rc" -eq 0 ] && grep -q "^  flow csv-report$" "$T/out" && grep -q "^      files (read-only binds" "$T/out" &&
		[ "$(tail -n 1 "$T/out")" = "Plan $sha is already admitted; nothing changed" ] || fail "--full: exit $rc: $(cat "$T/out")"
	review --json | jq -e '.admitted == true and .changes == null' >/dev/null || fail "--json does not say admitted"
	# A changed project is not.
	printf ' ' >>"$T/p/csv-report/main.ts"
	set +e; review >"$T/out" </dev/null; rc=$?; set -e
	[ "$rc" -eq 5 ] && ! grep -q "already admitted" "$T/out" || fail "a changed project: exit $rc"
}
case_ten_flows_half_the_lines() {
	# Must-show 2: a first review of the ten-Flow project prints under half
	# the lines it printed before issue 44 (663 lines: jig at 9b4986c,
	# `jig review </dev/null | wc -l` on tests/fixtures/ten-flows), and
	# under half of what --full prints (every scope in full, as then).
	ten_flows
	set +e; review >"$T/out" </dev/null; review --full >"$T/full" </dev/null; set -e
	n=$(wc -l <"$T/out") full=$(wc -l <"$T/full")
	echo "review: $n lines; --full: $full lines"
	[ $((n * 2)) -lt 663 ] || fail "$n lines, not under half of 663"
	[ $((n * 2)) -lt "$full" ] || fail "$n lines, not under half of --full's $full"
	# The common part is printed once a kind, every scope still named
	# with its policy; the Plan is the same.
	[ "$(grep -c "^  every Flow scope of this Plan has these" "$T/out")" = 1 ] || fail "the Flows' common part is not printed once"
	grep -q "^  every HTTP worker scope of this Plan has these" "$T/out" && grep -q "^  every Project Command scope of this Plan has these" "$T/out" ||
		fail "a kind's common part is missing"
	review --json >"$T/plan.json"
	for pol in $(jq -r '.. | objects | .policy_sha256? // empty' "$T/plan.json" | sort -u); do
		grep -q "^ *policy sha256 $pol" "$T/out" || fail "scope policy $pol is not shown"
	done
	[ "$(grep -c "^ *policy sha256" "$T/out")" = "$(grep -c "^ *policy sha256" "$T/full")" ] || fail "not every scope is shown"
	# What every Flow scope has is each Flow scope's: its binds, environment
	# and descriptors, and what is denied.
	sed -n '/^  every Flow scope/,/^  every HTTP/p' "$T/out" >"$T/common"
	for l in "/flow                        <- @run/package" "HOME=/scratch" "3 <- @run0" "network none (private namespace; no route out, not even to host loopback)"; do
		grep -qF -- "$l" "$T/common" || fail "not in the Flows' common part: $l"
	done
	[ "$(jq -r .plan_sha256 "$T/plan.json")" = "$(sed -n 's/^Plan //p' "$T/out")" ] || fail "another Plan"
}
case_launch_set_is_not_the_snapshot() {
	# Issue 44: a new Flow's HTTP route adds the http module and worker to
	# the launch identity; the difference names that, never "the installed
	# snapshot changed" (nothing was reinstalled). jig run's stale-Plan
	# refusal and jig why say what review said.
	rm -rf "$T/p"; mkdir -p "$T/p"; echo '{"format": "jig-project/1", "flows": {}}' >"$T/p/jig.json"
	newflow plain '{}'
	review --yes >/dev/null
	newflow web '{"http": {"get": {"method": "GET", "url": "https://example.com/"}}}'
	set +e; review >"$T/out" </dev/null; set -e
	cat "$T/out"
	grep -q "^  the launch set changed: the HTTP module and worker added (flow web has an HTTP route); launch identity [0-9a-f]\{12\} -> [0-9a-f]\{12\}, the installed snapshot is the same$" "$T/out" ||
		fail "the launch set's change is not named by its cause"
	! grep -q "installed snapshot changed" "$T/out" || fail "a phantom snapshot change"
	review --json | jq -e '[.changes[].change] | index("launch-set") and (index("snapshot") | not)' >/dev/null || fail "changes json"
	set +e; (cd "$T/p" && jig run plain --output "$T/pkt") >"$T/run.out" 2>"$T/run.err"; rc=$?; set -e
	cat "$T/run.err"
	[ "$rc" -eq 4 ] && grep -q "flow web added since review" "$T/run.err" || fail "run: exit $rc"
	! grep -q "snapshot" "$T/run.err" || fail "run names a phantom snapshot change"
	(cd "$T/p" && jig why plain) >"$T/why" || true
	cat "$T/why"
	grep -q "the HTTP module and worker added" "$T/why" && ! grep -q "installed snapshot changed" "$T/why" || fail "jig why names a phantom snapshot change"
}

# Issue 13: with --json every failure prints jig-error/1 on stdout (and the
# line on stderr), usage errors included, for every command.
# Store bytes: blobs and package manifests (what jig gc counts).
# store_bytes DIR [NAME-PATTERN]: the bytes of DIR's files (packs: the
# blobs' bytes are the *.pack files', each index a few lines a blob).
store_bytes() { find "$T/p/.jig/store/$1" -maxdepth 1 -type f ! -name '.*' -name "${2:-*}" -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
case_store_two_reviews_one_new_package() {
	# Issue 36: two reviews of one new package at once. Review A found the
	# package's manifest absent and is stopped just before writing it
	# (the test build's JIG_FAULT_STOP, host/util/fault.h); review B
	# writes it and admits; A goes on and admits too (the manifest and
	# the admitted Plan are written under a name of their own and
	# renamed, never created in place, which failed A with "File
	# exists"). Nothing temporary is left and every stored manifest and
	# blob is the content its name says.
	fresh; review --yes >/dev/null
	printf ' ' >>"$T/p/csv-report/main.ts"
	mkdir -m 777 "$T/log"
	(cd "$T/p" && runuser -u "$USER_NAME" -- env JIG_FAULT_STOP="store manifest" JIG_FAULT_LOG="$T/log/a" \
		"$JIG_TEST_PREFIX/bin/jig" review --yes) >"$T/out.a" 2>"$T/err.a" &
	a=$!
	i=0; until grep -q "^store manifest " "$T/log/a" 2>/dev/null; do
		i=$((i+1)); [ $i -lt 1500 ] || fail "review A did not reach the manifest"; sleep 0.02; done
	pid=$(sed -n 's/^store manifest //p' "$T/log/a")
	i=0; until [ "$(ps -o stat= -p "$pid" | cut -c1)" = T ]; do i=$((i+1)); [ $i -lt 500 ] || fail "A not stopped"; sleep 0.01; done
	parent=$(ps -o ppid= -p "$pid" | tr -d ' ') # runuser stopped itself with it
	review --yes >"$T/out.b" 2>"$T/err.b" || fail "review B: $(cat "$T/err.b")"
	kill -CONT "$pid" "$parent"
	set +e; wait "$a"; rc=$?; set -e
	# B admitted the very Plan A built: A finds it already admitted (issue 44).
	[ "$rc" -eq 0 ] && grep -q "^Plan [0-9a-f]* is already admitted; nothing changed$" "$T/out.a" || fail "review A: exit $rc: $(cat "$T/out.a" "$T/err.a")"
	[ "$(sed -n 's/^Plan \([0-9a-f]*\) is already admitted.*/\1/p' "$T/out.a")" = "$(sed -n 's/^admitted Plan //p' "$T/out.b")" ] || fail "two Plans"
	[ -z "$(find "$T/p/.jig" -name '.tmp*' -o -name '*.tmp')" ] || fail "left behind: $(find "$T/p/.jig" -name '*tmp*')"
	for f in "$T/p/.jig/store/packages/"*.json; do
		[ "$(sha256sum <"$f" | cut -c1-64).json" = "$(basename "$f")" ] || fail "manifest $f is not its name's content"
	done
	for f in "$T/p/.jig/store/packs/"*; do
		[ "$(sha256sum <"$f" | cut -c1-64).${f##*.}" = "$(basename "$f")" ] || fail "pack file $f is not its name's content"
	done
	for b in $(blobs_all "$T/p/.jig/store"); do
		blob_cat "$T/p/.jig/store" "$b" | sha256sum | grep -q "^$b " || fail "blob $b is not its name's content"
	done
}
case_store_growth_is_the_changed_bytes() {
	# Issue 36: over 20 reviews, each with one file of a 64-file package
	# changed (4,096 new bytes), the store's blobs grow by exactly the
	# changed bytes (content-addressed per file: the 63 unchanged files are
	# not stored again; issue 50: one pack of 4,096 bytes and its index of
	# one blob a step) and its package manifests by exactly one
	# manifest a step (the metadata: the whole package's file list, about
	# 130 bytes a file, here under 10 KiB); an unchanged re-review adds
	# nothing at all.
	rm -rf "$T/p"; mkdir -p "$T/p/g"
	printf '{"format":"jig-project/1","flows":{"g":"g"}}' >"$T/p/jig.json"
	printf '{"format":"jig-flow/1","name":"g","entry":"main.js","inputs":[],"outputs":[]}' >"$T/p/g/flow.json"
	echo "export default () => {}" >"$T/p/g/main.js"
	i=0; while [ $i -lt 62 ]; do head -c 4096 /dev/urandom >"$T/p/g/f$i"; i=$((i+1)); done
	chown -R "$USER_NAME" "$T/p"
	review --yes >/dev/null
	b0=$(store_bytes packs '*.pack'); i0=$(store_bytes packs '*.idx'); m0=$(store_bytes packages); n0=$(ls "$T/p/.jig/store/packages" | wc -l)
	review --yes >/dev/null
	[ "$(store_bytes packs)" = "$((b0 + i0))" ] && [ "$(store_bytes packages)" = "$m0" ] || fail "an unchanged re-review stored something"
	step=0
	while [ $step -lt 20 ]; do
		b=$(store_bytes packs '*.pack'); i=$(store_bytes packs '*.idx'); m=$(store_bytes packages)
		head -c 4096 /dev/urandom >"$T/p/g/f$((step % 62))"
		review --yes >/dev/null
		[ $(( $(store_bytes packs '*.pack') - b )) -eq 4096 ] || fail "step $step: the packs grew by $(( $(store_bytes packs '*.pack') - b )) bytes, not 4096"
		grow=$(( $(store_bytes packs '*.idx') - i ))
		[ "$grow" -gt 0 ] && [ "$grow" -le 256 ] || fail "step $step: the pack indexes grew by $grow bytes (one index of one blob is under 256)"
		grow=$(( $(store_bytes packages) - m ))
		[ "$grow" -gt 0 ] && [ "$grow" -le 10240 ] || fail "step $step: the manifests grew by $grow bytes"
		step=$((step+1))
	done
	[ $(( $(ls "$T/p/.jig/store/packages" | wc -l) - n0 )) -eq 20 ] || fail "not one manifest a step"
	echo "packs +$(( $(store_bytes packs '*.pack') - b0 )) bytes for 81,920 changed, indexes +$(( $(store_bytes packs '*.idx') - i0 )) bytes; manifests +$(( $(store_bytes packages) - m0 )) bytes"
}
# edit_same_size K: main.ts's last line "// vN" becomes "// vK", written in
# place (the same inode and size), its mtime restored from $T/ref: only
# the bytes (and the ctime) differ.
edit_same_size() {
	printf '%s' "$1" | dd of="$T/p/csv-report/main.ts" bs=1 seek=$(($(stat -c %s "$T/p/csv-report/main.ts") - 2)) conv=notrunc status=none
	tail -n 1 "$T/p/csv-report/main.ts" | grep -qx "// v$1" || fail "v$1: not edited"
	touch -r "$T/ref" "$T/p/csv-report/main.ts"
	[ "$(stat -c '%s %y' "$T/p/csv-report/main.ts")" = "$(stat -c '%s %y' "$T/ref")" ] || fail "v$1: not the same size and mtime"
}
case_same_size_edit_seen() {
	# Issue 44 must-show 4 (decision 196): a capture reads and hashes every
	# byte of every package file, every time, in every verification mode;
	# nothing is remembered by inode. A same-size edit with the mtime
	# restored is seen by review (the Plan changes and the file is named)
	# and refused as stale by jig run, in each mode, by flag and by
	# JIG_VERIFICATION. What an older jig kept (the capture cache, decision
	# 185; the admission memo, decision 179) is never read nor written:
	# here both are planted, wrong, and stay as they were.
	fresh
	echo "// v0" >>"$T/p/csv-report/main.ts"
	touch -d '2 hours ago' "$T/p/csv-report/main.ts"
	cp -p "$T/p/csv-report/main.ts" "$T/ref"
	review --yes >/dev/null
	a=$(review --json | jq -r .plan_sha256)
	mkdir "$T/p/.jig/capture"
	printf 'jig-capture-cache/1\n%064d\tx/main.ts\t0\n' 0 >"$T/p/.jig/capture/$(printf csv-report | sha256sum | cut -c1-64)"
	printf '{"format":"jig-admission-memo/1","plan_sha256":"%s"}' "$a" >"$T/p/.jig/admission-memo.json"
	chown -R "$USER_NAME" "$T/p/.jig" && chmod 700 "$T/p/.jig/capture" && chmod 600 "$T/p/.jig/capture/"* "$T/p/.jig/admission-memo.json"
	old=$(cat "$T/p/.jig/capture/"* "$T/p/.jig/admission-memo.json" | sha256sum)
	(cd "$T/p" && jig list >/dev/null)
	[ "$(review --json | jq -r .plan_sha256)" = "$a" ] || fail "an unchanged project has two Plan identities"
	k=0
	for mode in "--verification cached" "--verification strict" "--verification fast" "env:strict" "env:fast" "env:cached"; do
		k=$((k + 1))
		case $mode in
		env:*) env="JIG_VERIFICATION=${mode#env:}" flag= ;;
		*) env="JIG_VERIFICATION=" flag=$mode ;;
		esac
		edit_same_size "$k"
		# shellcheck disable=SC2086
		b=$(cd "$T/p" && runuser -u "$USER_NAME" -- env $env "$JIG_TEST_PREFIX/bin/jig" review --json $flag | tee "$T/review.json" | jq -r .plan_sha256)
		[ "$a" != "$b" ] || fail "$mode: a same-size edit with its mtime restored kept the Plan identity"
		jq -e '.changes | map(select(.change == "file-changed" and .flow == "csv-report" and .subject == "main.ts")) | length == 1' "$T/review.json" >/dev/null ||
			fail "$mode: the change is not named: $(jq -c .changes "$T/review.json")"
		set +e
		# shellcheck disable=SC2086
		(cd "$T/p" && runuser -u "$USER_NAME" -- env $env "$JIG_TEST_PREFIX/bin/jig" run csv-report $flag --input data=csv-report/sample.csv --output "$T/o$k") >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		[ "$rc" -eq 4 ] && grep -q "main.ts changed since review" "$T/err" || fail "$mode: jig run was not refused as stale (exit $rc): $(cat "$T/err")"
		[ ! -e "$T/o$k" ] || fail "$mode: something was published"
		# shellcheck disable=SC2086
		(cd "$T/p" && runuser -u "$USER_NAME" -- env $env "$JIG_TEST_PREFIX/bin/jig" review --yes $flag >/dev/null)
		a=$b
	done
	[ "$(ls -A "$T/p/.jig/capture")" = "$(printf csv-report | sha256sum | cut -c1-64)" ] &&
		[ "$(cat "$T/p/.jig/capture/"* "$T/p/.jig/admission-memo.json" | sha256sum)" = "$old" ] || fail "an old cache's files were touched"
}
case_json_failures_are_jig_error() {
	fresh
	for args in "review --bogus --json" "run --json" "run f --output x --input bad --json" "inspect --json" \
		"inspect --bogus --json" "scope plan --json" "scope run /nonexistent --json" "modules list --yaml --json" \
		"host check --bogus --json" "run f --output $T/o --project $T/nope --json" "bogus --json" "modules --json" \
		"modules bogus --json" "host --json" "scope --json"; do
		set +e
		# shellcheck disable=SC2086
		(cd "$T/p" && jig $args) >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		[ "$rc" -ne 0 ] || fail "jig $args succeeded"
		jq -e --argjson rc "$rc" '.schema == "jig-error/1" and .exit == $rc and (.error | length) > 0' "$T/out" >/dev/null ||
			fail "jig $args: not one jig-error/1: $(cat "$T/out")"
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "jig $args: not one line on stderr"
	done
}

"case_$1"
echo "PASS: $1"
