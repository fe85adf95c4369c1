#!/bin/sh
# jig init, the Flow API's types and the JSON Schemas (issue 35, must-show
# items 1 and 2; plain lane). Each case_* is one ctest (init.<case>); jig
# runs as the unprivileged user. The type checks use the pinned TypeScript
# of tests/typecheck (npm, test-only, JIG_TYPECHECK_TOOLS); the schema
# checks Debian's python3-jsonschema (tests/typecheck/validate.py).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-init.XXXXXX)
chmod 755 "$T"
chown "$USER_NAME" "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
SNAP=$JIG_TEST_PREFIX/lib/jig/current/libexec
SCHEMAS=$JIG_SOURCE/runtime/schemas
validate() { /usr/bin/python3 "$JIG_SOURCE/tests/typecheck/validate.py" "$@"; }
# listing DIR: every path below DIR with its size and digest (what "nothing
# written" compares).
listing() { (cd "$1" && find . -printf '%p %y %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }
# refused PATTERN CMD...: exit 2, one line matching PATTERN.
refused() {
	pat=$1; shift
	set +e; "$@" >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2: $*"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $*"
	grep -q -- "$pat" "$T/err" || fail "error does not match /$pat/: $*"
}

case_new_project_reviews() {
	# Issue 35 item 1: jig init in an absent directory writes jig.json, one Flow, the
	# Flow API's declaration and the schemas, all from the snapshot; the
	# project reviews as is.
	jig init "$T/p" >"$T/out"
	cat "$T/out"
	for f in jig.json jig.d.ts jig.schema.json flow.schema.json tsconfig.json hello/flow.json hello/main.ts hello/sample.txt; do
		[ -f "$T/p/$f" ] || fail "no $f"
	done
	[ "$(find "$T/p" -type f | wc -l)" -eq 8 ] || fail "other files: $(find "$T/p")"
	cmp -s "$T/p/jig.d.ts" "$SNAP/runtime/jig.d.ts" && cmp -s "$T/p/hello/main.ts" "$SNAP/init/main.ts" &&
		cmp -s "$T/p/flow.schema.json" "$SNAP/schemas/flow.schema.json" || fail "not the snapshot's files"
	jq -e '."$schema" == "./jig.schema.json" and .format == "jig-project/1" and .flows == {hello: "hello"}' "$T/p/jig.json" >/dev/null ||
		fail "jig.json: $(cat "$T/p/jig.json")"
	jq -e '."$schema" == "../flow.schema.json" and .name == "hello" and .inputs == ["text"]' "$T/p/hello/flow.json" >/dev/null ||
		fail "flow.json"
	grep -q 'jig run hello --input text=hello/sample.txt --output hello-out' "$T/out" || fail "no next step"
	(cd "$T/p" && jig review --yes) | grep -q "^admitted Plan" || fail "the new project does not review"
	jig init "$T/q" --flow first-flow --json | jq -e '.format == "jig-init/1" and .flow == "first-flow" and .added == false
		and (.written | index("jig.json")) and (.written | index("first-flow/main.ts"))' >/dev/null || fail "--json"
	(cd "$T/q" && jig review --yes --json) | jq -e '.plan.flows[0].name == "first-flow"' >/dev/null || fail "not reviewed"
}
case_refuses_non_empty() {
	# Issue 35 item 1: a non-empty directory (or one that holds a project, without
	# --flow) is refused with one line, and nothing is written.
	mkdir "$T/p"; echo notes >"$T/p/notes.txt"; chown -R "$USER_NAME" "$T/p"
	before=$(listing "$T/p")
	refused "is not empty" jig init "$T/p"
	[ "$(listing "$T/p")" = "$before" ] || fail "something was written"
	(cd "$T/p" && refused "is not empty" jig init)
	(cd "$T/p" && refused "is not empty" jig init . --json)
	grep -q '"jig-error/1"' "$T/out" || fail "no jig-error/1 with --json"
	[ "$(listing "$T/p")" = "$before" ] || fail "something was written"
	rm "$T/p/notes.txt"; jig init "$T/p" >/dev/null
	before=$(listing "$T/p")
	refused "already holds a jig project" jig init "$T/p"
	refused 'Flow name "Bad"' jig init "$T/p" --flow Bad
	refused "unknown argument" jig init "$T/p" --force
	ln -s "$T/p" "$T/link"
	refused "symbolic link" jig init "$T/link" --flow other
	[ "$(listing "$T/p")" = "$before" ] || fail "something was written"
	refused "cannot create" jig init "$T/absent/p"
	[ ! -e "$T/absent" ] || fail "a parent was created"
}
case_flow_adds_to_project() {
	# Issue 35 item 1: --flow NAME adds a Flow and its jig.json entry, keeps the
	# project's own files, and refuses a name or directory that exists.
	jig init "$T/p" >/dev/null
	echo "// mine" >>"$T/p/jig.d.ts"
	(cd "$T/p" && jig init --flow second) >"$T/out"
	cat "$T/out"
	jq -e '.flows == {hello: "hello", second: "second"} and ."$schema" == "./jig.schema.json"' "$T/p/jig.json" >/dev/null ||
		fail "jig.json: $(cat "$T/p/jig.json")"
	tail -1 "$T/p/jig.d.ts" | grep -q "// mine" || fail "the project's jig.d.ts was replaced"
	jq -e '.name == "second"' "$T/p/second/flow.json" >/dev/null || fail "second/flow.json"
	# Issue 46: an added Flow is a skeleton of its own, not the first
	# Flow's word count again: no input, no sample, one output, named.
	jq -e '.inputs == [] and .outputs == ["result.md"]' "$T/p/second/flow.json" >/dev/null || fail "second/flow.json: $(cat "$T/p/second/flow.json")"
	[ ! -e "$T/p/second/sample.txt" ] || fail "the skeleton got the template's sample"
	head -1 "$T/p/second/main.ts" | grep -qxF '// Flow second, added by `jig init --flow second`. flow.json says what it may read' || fail "second/main.ts: $(head -3 "$T/p/second/main.ts")"
	! grep -q "word" "$T/p/second/main.ts" || fail "the added Flow is the word-count template"
	grep -qxF "  jig run second --output second-out" "$T/out" || fail "next steps: $(cat "$T/out")"
	grep -q "second/main.ts" "$T/out" && ! grep -q "jig.d.ts" "$T/out" || fail "written list"
	(cd "$T/p" && jig review --yes --json) | jq -e '[.plan.flows[].name] == ["hello", "second"]' >/dev/null || fail "not reviewed"
	before=$(listing "$T/p")
	refused "Flow second is already in the project" jig init "$T/p" --flow second
	mkdir "$T/p/third"; chown "$USER_NAME" "$T/p/third"; before=$(listing "$T/p")
	refused "third exists; jig init replaces nothing" jig init "$T/p" --flow third
	[ "$(listing "$T/p")" = "$before" ] || fail "something was written"
	jq '.flows = ([range(32)] | map({key: "f\(.)", value: "f\(.)"}) | from_entries)' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"
	before=$(listing "$T/p")
	refused "the project has 32 Flows, the most it may" jig init "$T/p" --flow fourth
	[ "$(listing "$T/p")" = "$before" ] || fail "something was written"
	# A hand-written project without jig.d.ts gets one.
	mkdir "$T/q"; cp -r "$JIG_SOURCE/examples/csv-report" "$T/q/"; rm -f "$T/q/jig.d.ts"
	printf '{"format": "jig-project/1", "flows": {"csv-report": "csv-report"}}\n' >"$T/q/jig.json"; chown -R "$USER_NAME" "$T/q"
	jig init "$T/q" --flow extra >/dev/null
	[ -f "$T/q/jig.d.ts" ] && [ -f "$T/q/extra/main.ts" ] || fail "no jig.d.ts or Flow"
	jq -e '.flows == {"csv-report": "csv-report", extra: "extra"}' "$T/q/jig.json" >/dev/null || fail "jig.json"
}

# typecheck DIR [TSC-OPTIONS...]: tsc over every .ts below DIR with jig
# init's tsconfig.json (strict, ES2022, no DOM, no @types): one program, as
# each tsc start costs seconds.
TSC="${JIG_TYPECHECK_TOOLS:-}/node_modules/typescript/bin/tsc"
typecheck() {
	d=$1; shift
	jq '. + {include: ["**/*.ts"]}' "$SNAP/init/tsconfig.json" >"$d/tsconfig.check.json"
	node "$TSC" -p "$d/tsconfig.check.json" "$@"
}
case_examples_and_template_typecheck() {
	# Issue 35 item 2: every example Flow and jig init's template
	# type-check against the shipped declaration (the examples' jig.d.ts
	# are its copies).
	[ -x "$TSC" ] || fail "no TypeScript at $TSC (build target typecheck-tools)"
	for d in "$JIG_SOURCE/examples" "$JIG_SOURCE/examples/agents" "$JIG_SOURCE/examples/npm-csv"; do
		cmp -s "$d/jig.d.ts" "$SNAP/runtime/jig.d.ts" || fail "$d/jig.d.ts is not the shipped declaration"
	done
	! grep -rn "type Jig\b" "$JIG_SOURCE/examples" --include='*.ts' || fail "an example declares its own Jig type"
	cp -r "$JIG_SOURCE/examples" "$T/ex"
	ln -s "$JIG_TYPECHECK_TOOLS/node_modules" "$T/ex/npm-csv/csv-columns/node_modules"
	typecheck "$T/ex" --listFiles >"$T/files" || fail "the examples do not type-check"
	n=$(grep -c "^$T/ex/.*/main\.ts\$" "$T/files")
	[ "$n" -eq "$(find "$JIG_SOURCE/examples" -name '*.ts' ! -name '*.d.ts' | wc -l)" ] || fail "only $n Flows were checked"
	jig init "$T/p" >/dev/null; jig init "$T/p" --flow two >/dev/null
	# The template and the declaration itself (no skipLibCheck).
	node "$TSC" -p "$T/p/tsconfig.json" --skipLibCheck false --listFiles >"$T/files" || fail "the template does not type-check"
	grep -q "$T/p/hello/main.ts" "$T/files" && grep -q "$T/p/two/main.ts" "$T/files" && grep -q "$T/p/jig.d.ts" "$T/files" ||
		fail "the template was not checked: $(cat "$T/files")"
}
case_wrong_call_fails_typecheck() {
	# Issue 35 item 2: a wrong call (jig.read(42), an http request's unknown
	# option, a command without files, a result used as another type) fails
	# the check against the declaration: each in a Flow of its own, checked
	# together, each file with its error.
	[ -x "$TSC" ] || fail "no TypeScript at $TSC"
	jig init "$T/p" >/dev/null
	i=0
	for wrong in 'jig.read(42);' 'jig.http("r", {headers: {}});' 'jig.command("c", {entry: "a.js"});' 'const n: number = jig.inputs();'; do
		i=$((i + 1))
		sed "s|^  jig.log(|  $wrong\n  jig.log(|" "$SNAP/init/main.ts" >"$T/p/hello/wrong$i.ts"
		grep -qF "$wrong" "$T/p/hello/wrong$i.ts" || fail "not edited"
	done
	set +e; node "$TSC" -p "$T/p/tsconfig.json" >"$T/out" 2>&1; rc=$?; set -e
	cat "$T/out"
	[ "$rc" -ne 0 ] || fail "the wrong calls passed the type check"
	grep -q "hello/wrong1.ts.*error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'" "$T/out" ||
		fail "jig.read(42) passed"
	for k in 2 3 4; do grep -q "hello/wrong$k.ts.*error TS" "$T/out" || fail "wrong$k.ts passed"; done
	! grep -q "hello/main.ts" "$T/out" || fail "the template itself failed"
}
case_child_outputs_typecheck() {
	# Issue 46 item 3 (decision 272): a root Flow reads what its child wrote
	# through jig.call's typed result (CallResult.read), and the project
	# type-checks against the shipped declaration; a wrong use of it
	# (a number for the path, the bytes as a string, writing to outputs)
	# fails the check, each with its error.
	[ -x "$TSC" ] || fail "no TypeScript at $TSC"
	cp -r "$JIG_SOURCE/tests/flow/children" "$T/c"
	cp "$SNAP/runtime/jig.d.ts" "$T/c/jig.d.ts"
	cp "$SNAP/init/tsconfig.json" "$T/c/tsconfig.json"
	node "$TSC" -p "$T/c/tsconfig.json" --listFiles >"$T/files" || { cat "$T/files"; fail "the child-output Flows do not type-check"; }
	grep -qx "$T/c/digest/main.ts" "$T/files" && grep -qx "$T/c/count/main.ts" "$T/files" || fail "not checked: $(grep main.ts "$T/files")"
	grep -q 'r\.read("counts\.json")' "$T/c/digest/main.ts" && ! grep -q 'from "node:fs"' "$T/c/digest/main.ts" || fail "the root does not use the typed API"
	printf '%s\n' 'import type { CallResult } from "../jig";' 'export function wrong(r: CallResult) {' \
		'  r.read(1);' '  const s: string = r.read("a");' '  r.outputs.push("b");' '  return s;' '}' >"$T/c/digest/wrong.ts"
	set +e; node "$TSC" -p "$T/c/tsconfig.json" >"$T/out" 2>&1; rc=$?; set -e
	cat "$T/out"
	[ "$rc" -ne 0 ] || fail "the wrong uses passed the type check"
	grep -q "wrong.ts(3,.*error TS2345" "$T/out" && grep -q "wrong.ts(4,.*error TS2322" "$T/out" && grep -q "wrong.ts(5,.*error TS2339" "$T/out" ||
		fail "a wrong use passed"
}
case_npm_types_recipe() {
	# Issue 46 item 3 (decision 273): docs/dependencies.md's command,
	# "Types for your editor and tsc", against the suite's loopback
	# registry: a Flow importing a typed npm package fails the check
	# without it (no module), passes with it, and a wrong call of the
	# package fails (its types are used); bun.lock is unchanged.
	[ -x "$TSC" ] || fail "no TypeScript at $TSC"
	cmd=$(grep -- '--frozen-lockfile --ignore-scripts$' "$JIG_SOURCE/docs/dependencies.md" | sed 's/^    //')
	[ -n "$cmd" ] || fail "docs/dependencies.md has no types recipe"
	jig init "$T/n" --flow greeter >/dev/null
	python3 "$JIG_SOURCE/tests/flow/registry.py" make "$T/reg" "$T/n/greeter" '{"name": "greeter", "dependencies": {"greet": "1.0.0"},
		"packages": [{"name": "greet", "version": "1.0.0", "files": {"index.js": "exports.greet = (n) => \"hello \" + n;\n",
		"index.d.ts": "export declare function greet(name: string): string;\n"}}]}'
	printf '%s\n' 'import { greet } from "greet";' 'import type { Jig } from "../jig";' \
		'export default function (jig: Jig) {' '  jig.write("summary.md", greet(jig.read("text").toString("utf8")));' '}' >"$T/n/greeter/main.ts"
	mkdir "$T/home"
	chown -R "$USER_NAME" "$T/n" "$T/reg" "$T/home"
	lock=$(sha256sum <"$T/n/greeter/bun.lock")
	set +e; node "$TSC" -p "$T/n/tsconfig.json" >"$T/out" 2>&1; rc=$?; set -e
	[ "$rc" -ne 0 ] && grep -q "greeter/main.ts.*error TS2307: Cannot find module 'greet'" "$T/out" || fail "checked without the recipe: $(cat "$T/out")"
	SERVER=""
	. "$JIG_SOURCE/tests/flow/registry.sh"
	mkdir "$T/config"
	registry_serve "$T/config"
	trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$T"' EXIT
	cmd=$(printf '%s' "$cmd" | sed "s|^cd csv-columns |cd $T/n/greeter |; s|https://registry.npmjs.org/|http://127.0.0.1:$PORT/|; s|/opt/jig/|$JIG_TEST_PREFIX/|")
	echo "recipe: $cmd"
	runuser -u "$USER_NAME" -- env HOME="$T/home" sh -c "$cmd" || fail "the recipe failed"
	cat "$T/log"
	grep -q "^GET /greet/-/greet-1.0.0.tgz$" "$T/log" || fail "not installed from the operator's registry"
	[ "$(sha256sum <"$T/n/greeter/bun.lock")" = "$lock" ] || fail "the recipe changed bun.lock"
	node "$TSC" -p "$T/n/tsconfig.json" --listFiles >"$T/files" || { cat "$T/files"; fail "the Flow does not type-check after the recipe"; }
	grep -qx "$T/n/greeter/node_modules/greet/index.d.ts" "$T/files" || fail "the package's types were not used"
	sed -i 's/greet(jig.read("text").toString("utf8"))/greet(42)/' "$T/n/greeter/main.ts"
	set +e; node "$TSC" -p "$T/n/tsconfig.json" >"$T/out" 2>&1; rc=$?; set -e
	cat "$T/out"
	[ "$rc" -ne 0 ] && grep -q "greeter/main.ts.*error TS2345" "$T/out" || fail "a wrong call of the package passed"
}
case_schemas_validate_examples() {
	# Issue 35 item 2: every example's (and the test fixtures') jig.json and flow.json,
	# and the operator files the tests write, validate against the shipped
	# schemas; a wrong key or value fails.
	for s in jig flow agents npm; do cmp -s "$SCHEMAS/$s.schema.json" "$SNAP/schemas/$s.schema.json" || fail "$s schema not shipped"; done
	validate "$SCHEMAS/flow.schema.json" $(find "$JIG_SOURCE/examples" "$JIG_SOURCE/tests/flow" -name flow.json) || fail "a flow.json"
	validate "$SCHEMAS/jig.schema.json" $(find "$JIG_SOURCE/examples" "$JIG_SOURCE/tests/flow" -name jig.json) || fail "a jig.json"
	jig init "$T/p" >/dev/null
	validate "$SNAP/schemas/jig.schema.json" "$T/p/jig.json" && validate "$SNAP/schemas/flow.schema.json" "$T/p/hello/flow.json" ||
		fail "init's files"
	jq -n '{format: "jig-agents/1", providers: {fake: {client: "acp", command: ["/usr/bin/true", "--flag"], trees: ["/usr/bin/true"],
		version: "1.0.0", model_env: "FAKE_MODEL", env: {FAKE_BASE_URL: "http://127.0.0.1:9/"},
		credential: {env: "FAKE_KEY", value: "x"}, egress: ["models.example.com:443"]}}}' >"$T/agents.json"
	printf '{"$schema": "npm.schema.json", "format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$T/npm.json"
	validate "$SCHEMAS/agents.schema.json" "$T/agents.json" && validate "$SCHEMAS/npm.schema.json" "$T/npm.json" || fail "operator files"
	# wrong SCHEMA FILE JQ: the edit makes FILE invalid (checked together below).
	n=0
	wrong() { n=$((n + 1)); mkdir -p "$T/wrong/$1"; jq "$3" "$2" >"$T/wrong/$1/$n.json"; }
	f=$JIG_SOURCE/examples/csv-report/flow.json
	wrong flow "$f" '.extra = 1'
	wrong flow "$f" '.entry = "../x.ts"'
	wrong flow "$f" '.name = "Report"'
	wrong flow "$f" 'del(.outputs)'
	wrong flow "$JIG_SOURCE/examples/service-check/flow.json" '.http.health.timeout_ms = 60001'
	wrong flow "$JIG_SOURCE/examples/agents/classify/flow.json" '.agents.classifier.api = "openai-chat"'
	wrong jig "$JIG_SOURCE/examples/jig.json" '.flows.x = ".jig/x"'
	wrong jig "$JIG_SOURCE/examples/jig.json" '.extra = 1'
	wrong agents "$T/agents.json" '.providers.fake.token = "x"'
	wrong agents "$T/agents.json" '.providers.fake.client = "other"'
	wrong npm "$T/npm.json" '.registry = "http://example.com/"'
	wrong npm "$T/npm.json" '.token = "x"'
	for s in flow jig agents npm; do
		validate --invalid "$SCHEMAS/$s.schema.json" "$T/wrong/$s"/*.json || fail "a wrong $s file validated"
	done
	[ "$(ls "$T/wrong"/*/*.json | wc -l)" -eq 12 ] || fail "not every wrong file was made"
}
case_schema_key_accepted() {
	# Issue 35 item 2 (decision 158): jig's strict parsers accept "$schema" (a string)
	# in jig.json, flow.json, agents.json and npm.json, and nothing else new.
	jig init "$T/p" >/dev/null
	(cd "$T/p" && jig review --yes) | grep -q "^admitted Plan" || fail "\$schema refused"
	jq '."$schema" = 5' "$T/p/hello/flow.json" >"$T/j" && cp "$T/j" "$T/p/hello/flow.json"
	(cd "$T/p" && refused 'hello/flow.json: "\$schema" must be a string' jig review --yes)
	jq '."$schema" = "../flow.schema.json" | ."$id" = "x"' "$T/p/hello/flow.json" >"$T/j" && cp "$T/j" "$T/p/hello/flow.json"
	(cd "$T/p" && refused 'unknown key "\$id"' jig review --yes)
	jq '."$schema" = ("x" * 1025)' "$T/p/jig.json" >"$T/j" && cp "$T/j" "$T/p/jig.json"
	(cd "$T/p" && refused 'jig.json: "\$schema" must be a string of at most 1024 bytes' jig review --yes)
	# agents.json: the review of an Agent route reads it.
	rm -rf "$T/a"; cp -r "$JIG_SOURCE/tests/flow/agent" "$T/a"; mkdir -p "$T/config/jig"
	jq -n '{"$schema": "/usr/lib/jig/current/libexec/schemas/agents.schema.json", format: "jig-agents/1",
		providers: {fake: {client: "acp", command: ["/usr/bin/true"], trees: ["/usr/bin/true"], version: "1.0.0"}}}' >"$T/config/jig/agents.json"
	chown -R "$USER_NAME" "$T/a" "$T/config"; chmod 600 "$T/config/jig/agents.json"
	(cd "$T/a" && runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" "$JIG_TEST_PREFIX/bin/jig" review --yes) >"$T/out" ||
		fail "agents.json with \$schema refused"
	jq '."$schema" = true' "$T/config/jig/agents.json" >"$T/j" && cp "$T/j" "$T/config/jig/agents.json"
	(cd "$T/a" && refused 'agents.json: "\$schema" must be a string' runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" "$JIG_TEST_PREFIX/bin/jig" review --yes)
	# npm.json: read before a Flow's dependencies are prepared (refused
	# here for the host or the closed registry, never for "$schema").
	rm -rf "$T/d"; cp -r "$JIG_SOURCE/tests/flow/deps" "$T/d"; chown -R "$USER_NAME" "$T/d"
	printf '{"$schema": "npm.schema.json", "format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$T/config/jig/npm.json"
	chown "$USER_NAME" "$T/config/jig/npm.json"
	set +e; (cd "$T/d" && runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" "$JIG_TEST_PREFIX/bin/jig" review --yes) >"$T/out" 2>"$T/err"; set -e
	cat "$T/err"
	grep -q "preparing its dependencies" "$T/err" && ! grep -q 'schema' "$T/err" || fail "npm.json with \$schema refused"
	printf '{"$schema": 1, "format": "jig-npm/1", "registry": "http://127.0.0.1:9/"}\n' >"$T/config/jig/npm.json"
	(cd "$T/d" && refused 'npm.json: "\$schema" must be a string' runuser -u "$USER_NAME" -- env XDG_CONFIG_HOME="$T/config" "$JIG_TEST_PREFIX/bin/jig" review --yes)
}

"case_$1"
