#!/bin/sh
# Bindings at review (issue 17, plain lane): flow.json "bindings", the read
# and write maps, the contract's shape rules and the root budget, each
# refusal one line naming its rule. Projects come from
# tests/flow/binding/mkproject.sh. Each case_* is one ctest (bindings.<case>).
# Requirements: R-B01, R-B02, R-B04, R-K01 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-bindings.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
project() { rm -rf "$T/p"; sh "$JIG_SOURCE/tests/flow/binding/mkproject.sh" "$T/p" "$1"; chown -R "$USER_NAME" "$T/p"; }
edit() { jq "$2" "$T/p/$1/flow.json" >"$T/j" && cp "$T/j" "$T/p/$1/flow.json"; }
review() { (cd "$T/p" && jig review "$@"); }
ok() { review --yes >"$T/out" 2>&1 || { cat "$T/out"; fail "review refused"; }; }
# bad PATTERN: review exits 2 with one line matching PATTERN and admits nothing.
bad() {
	set +e; review --yes >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "$1" "$T/err" || fail "error does not match /$1/"
	[ ! -e "$T/p/.jig/admission.json" ] || fail "something was admitted"
}
# chain N [LAST]: root -> c1 -> ... -> cN; cN gets LAST's fields (e.g. commands).
chain() {
	spec='{"root":{"bindings":{"x":{"flow":"c1"}}}'
	i=1
	while [ "$i" -lt "$1" ]; do spec="$spec,\"c$i\":{\"bindings\":{\"x\":{\"flow\":\"c$((i + 1))\"}}}"; i=$((i + 1)); done
	printf '%s,"c%s":{%s}}' "$spec" "$1" "${2:-}"
}
MIB=1048576

case_plan_pins_bindings() {
	# R-B01, R-B02: the Plan pins each binding (flow, deadline, maps, its
	# branch's reservation) and the fixed reservation policy; Flows in a
	# binding relation are composed as flow-bound (the table's 0.5 CPU);
	# changing a binding changes the Plan's identity.
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{"commands":true},"lone":{}}'
	ok
	review --json >"$T/plan.json"
	jq -e --argjson m $MIB '.plan.root_budget == {format: "jig-root-budget/1", memory_bytes: (1792 * $m), tasks: 576, cpu_quota_us: 350000,
		cpu_period_us: 100000, root_siblings: 2, child_flows: 1, child_levels: 5, borrowing: false}' "$T/plan.json" >/dev/null || fail "root_budget"
	jq -e --argjson m $MIB '.plan.flows[] | select(.name == "root") | .bindings == [{name: "x", flow: "a", timeout_ms: 60000,
		read: {plan: "plan"}, write: {"result.json": "from-x.json"}, reserves: {memory_bytes: (512 * $m), tasks: 192, cpu_quota_us: 100000}}]
		and .root_reservation == {memory_bytes: (768 * $m), tasks: 256, cpu_quota_us: 150000}' "$T/plan.json" >/dev/null || fail "the root's bindings"
	jq -e '[.plan.flows[] | select(.name == "a" or .name == "root") | .scope.permission_plan.limits]
		== [range(2) | {memory_bytes: 268435456, tasks: 64, cpu_quota_us: 50000, wall_ms: 86400000}]' "$T/plan.json" >/dev/null \
		|| fail "bound Flows are not the table's envelope: $(jq -c '[.plan.flows[].scope.permission_plan.limits]' "$T/plan.json")"
	jq -e '.plan.flows[] | select(.name == "lone") | (has("bindings") | not) and .scope.permission_plan.limits.cpu_quota_us == 100000
		and ([.scope.permission_plan.binds[] | select(.target == "/stage")] | length) == 0' "$T/plan.json" >/dev/null \
		|| fail "a Flow outside any binding changed"
	# Issue 33, decision 115: no /stage; a caller's stages are hidden on
	# its own 16 MiB /output tmpfs.
	jq -e '.plan.flows[] | select(.name == "root") | ([.scope.permission_plan.binds[] | select(.target == "/stage")] | length == 0)
		and ([.scope.permission_plan.writable[] | select(.at == "/output")] == [{at: "/output", size_bytes: 16777216}])' "$T/plan.json" >/dev/null \
		|| fail "a caller's scope: $(jq -c '.plan.flows[] | select(.name == "root") | .scope.permission_plan' "$T/plan.json")"
	a=$(jq -r .plan_sha256 "$T/plan.json")
	edit root '.bindings.x.timeout_ms = 30000'
	b=$(review --json | jq -r .plan_sha256)
	[ "$a" != "$b" ] || fail "a changed binding kept the Plan identity"
	review --full >"$T/text" </dev/null || [ $? -eq 5 ] # not admitted without --yes (exit 5)
	grep -q "binding x -> flow a: deadline 30000 ms" "$T/text" && grep -q "its branch reserves 512 MiB, 192 tasks, 1.0 CPU" "$T/text" || fail "the Plan's text does not show the binding"
}
case_contract_shapes_admitted() {
	# R-B01: the contract's example shapes fit: five child levels with one
	# effect (root, five Flows, one effect), and two simultaneous two-level
	# branches each with its own effect (exactly the root budget).
	project "$(chain 5 '"commands":true')"
	ok
	review --json | jq -e '.plan.flows[] | select(.name == "root") | .root_reservation == {memory_bytes: 1879048192, tasks: 512, cpu_quota_us: 350000}' >/dev/null || fail "chain of five"
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"b"}}},"a":{"bindings":{"x":{"flow":"a2"}}},"b":{"bindings":{"x":{"flow":"b2"}}},
		"a2":{"commands":true},"b2":{"commands":true}}'
	ok
	review --json | jq -e '.plan.flows[] | select(.name == "root") | .root_reservation == {memory_bytes: 1879048192, tasks: 576, cpu_quota_us: 350000}' >/dev/null || fail "two branches"
}
case_refuse_sixth_level() { project "$(chain 6)"; bad "flow root: flow c6 would be child level 6; the longest branch is at most 5 child Flow levels (shape rule)"; }
case_refuse_cycle() { project '{"root":{"bindings":{"x":{"flow":"root"}}}}'; bad "child level 6; the longest branch is at most 5"; }
case_refuse_checkpoint() {
	# Run Checkpoint is root-only and not beside bindings (decision 71).
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	edit a '.checkpoint = true'
	bad "flow root binding x: Run Checkpoint is root-only and not beside bindings: a grants it"
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	edit root '.checkpoint = true'
	bad "flow root binding x: Run Checkpoint is root-only and not beside bindings: root grants it"
}
case_refuse_third_sibling() {
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"a"},"z":{"flow":"a"}}},"a":{}}'
	bad "flow root: 3 bindings; the root permits two sibling Flows (shape rule)"
}
case_refuse_flow_beside_effect() {
	project '{"root":{"bindings":{"x":{"flow":"a"}},"commands":true},"a":{}}'
	bad "flow root: a binding beside effect routes; the root permits two sibling Flows or one exclusive effect, not a Flow beside an exclusive effect (shape rule)"
}
case_refuse_child_two_flows() {
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{"bindings":{"x":{"flow":"b"},"y":{"flow":"b"}}},"b":{}}'
	bad "flow a: 2 bindings; the root permits two sibling Flows\|child flow a has 2 bindings; each child permits one Flow or effect (shape rule)"
}
case_refuse_child_flow_and_effect() {
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{"bindings":{"x":{"flow":"b"}},"commands":true},"b":{}}'
	bad "binding beside effect routes"
}
case_refuse_over_root_budget() {
	# R-B02: a three-level branch with an effect beside a two-level one
	# with an effect reserves 2,048 MiB: over the budget, refused.
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"b"}}},"a":{"bindings":{"x":{"flow":"a2"}}},"a2":{"bindings":{"x":{"flow":"a3"}}},
		"a3":{"commands":true},"b":{"bindings":{"x":{"flow":"b2"}}},"b2":{"commands":true}}'
	bad "flow root: its branches reserve 2048 MiB, 640 tasks, 4.0 CPU with the root; reservations over the root budget of 1792 MiB, 576 tasks, 3.5 CPU"
}
case_refuse_unreviewed_command_invocation() {
	# R-K01 (decision 83): a Project Command is reached through a binding
	# only as the reviewed child Flow's own command route. A binding that
	# names a command route instead of a Flow, or asks for a route, a Flow
	# with a command route beside a binding, and a child with both, are
	# refused at review with one line.
	project '{"root":{"bindings":{"x":{"flow":"run"}}},"b":{"commands":true}}'
	bad 'binding x: the project has no Flow "run"'
	project '{"root":{"bindings":{"x":{"flow":"b"}}},"b":{"commands":true}}'
	edit root '.bindings.x.command = "run"'
	bad 'binding "x": unknown key "command"'
	project '{"root":{"bindings":{"run":{"flow":"b"}},"commands":true},"b":{}}'
	bad 'binding run: is also a route.s name; a name means one grant\|not a Flow beside an exclusive effect'
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{"bindings":{"x":{"flow":"b"}},"commands":true},"b":{"commands":true}}'
	bad "flow a: a binding beside effect routes\\|child flow a has a binding beside its effect routes"
	# Admitted: the child's own route, pinned in the Plan with the scope the
	# branch reserves.
	project '{"root":{"bindings":{"x":{"flow":"b"}}},"b":{"commands":true}}'
	ok
	review --json | jq -e '.plan.flows[] | select(.name == "b") | .commands[0] | .route == "run" and .command_scope.permission_plan.network == "none"' >/dev/null ||
		fail "b's route is not pinned"
}
case_refuse_bad_bindings() {
	# Each malformed binding or map: one line naming it.
	project '{"root":{"bindings":{"x":{"flow":"nosuch"}}}}'
	bad 'binding x: the project has no Flow "nosuch"; its Flows: root$'
	project '{"root":{"bindings":{"x":{"flow":"a","read":{"plan":"secret"}}}},"a":{}}'
	bad 'read map: "secret" is not one of this Flow.s declared inputs; a child borrows only its caller.s whole inputs'
	project '{"root":{"bindings":{"x":{"flow":"a","read":{"plan":"plan","more":"plan"}}}},"a":{}}'
	bad 'read map: flow a declares no input "more"'
	project '{"root":{"bindings":{"x":{"flow":"a","read":{}}}},"a":{}}'
	bad "read map: flow a's input \"plan\" is not mapped"
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"elsewhere.json"}}}},"a":{}}'
	bad 'write map: "elsewhere.json" is not one of this Flow.s declared outputs'
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"secret.txt":"out.txt"}}}},"a":{}}'
	bad 'write map: flow a declares no output "secret.txt"'
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"out.txt","out.txt":"out.txt"}}}},"a":{}}'
	bad 'write map: output "out.txt" is written twice'
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	edit root 'del(.bindings.x.timeout_ms)'
	bad 'binding "x": needs "timeout_ms"'
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	edit root '.bindings.x.extra = 1'
	bad 'unknown key "extra"'
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"a"},"z":{"flow":"a"},"w":{"flow":"a"},"v":{"flow":"a"}}},"a":{}}'
	bad "bindings: must be an object of at most 4 bindings"
}

case_budget_policy_pinned() {
	# R-L04, R-B02: the fixed reservation policy is part of what an
	# admission admits. The Plan holds root_budget, and a jig with another
	# policy (the test build's fault point "another reservation policy":
	# one task less) derives another Plan from the same project, so a Run
	# of the admission made under this one is refused "review again" and
	# nothing runs; its own review admits, and the first jig is refused
	# in turn (issue 47: the old case only edited the Plan's JSON).
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	ok
	review --json >"$T/plan.json"
	jq -e '.plan.root_budget.format == "jig-root-budget/1" and .plan.root_budget.tasks == 576' "$T/plan.json" >/dev/null || fail "no root_budget"
	echo '{}' >"$T/in.json"
	mkdir -p "$T/o" && chown "$USER_NAME" "$T/o"
	other() { (cd "$T/p" && runuser -u "$USER_NAME" -- env JIG_FAULT_FAIL="another reservation policy" "$JIG_TEST_PREFIX/bin/jig" "$@"); }
	set +e; other run root --input plan="$T/in.json" --output "$T/o/pkt" >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 4 ] && grep -q "review again" "$T/err" || fail "a jig with another reservation policy ran the old admission (exit $rc)"
	[ ! -e "$T/o/pkt" ] || fail "something was published"
	other review --json >"$T/other.json" 2>/dev/null || true
	jq -e '.plan.root_budget.tasks == 575' "$T/other.json" >/dev/null || fail "the fault point did not change the policy"
	[ "$(jq -r .plan_sha256 "$T/other.json")" != "$(jq -r .plan_sha256 "$T/plan.json")" ] || fail "another policy, the same Plan"
	other review --yes >/dev/null 2>&1 || fail "the other jig's own review"
	set +e; (cd "$T/p" && jig run root --input plan="$T/in.json" --output "$T/o/pkt" >"$T/out" 2>"$T/err"); rc=$?; set -e
	[ "$rc" -eq 4 ] && grep -q "review again" "$T/err" || fail "this jig ran the other policy's admission (exit $rc): $(cat "$T/err")"
}

# res_project: root -> a, a's input "docs" from the resource tree shared/docs.
res_project() {
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{"inputs":["plan","docs"]}}'
	edit root '.bindings.x.resources = {"docs": "shared/docs"}'
	mkdir -p "$T/p/shared/docs/sub"
	printf 'guide' >"$T/p/shared/docs/guide.txt"
	printf 'deep' >"$T/p/shared/docs/sub/deep.txt"
	chown -R "$USER_NAME" "$T/p"
}
case_resource_trees() {
	# R-S04: a binding's read-only resource tree is captured at review into
	# Package/0 (also when the review is declined), pinned in the Plan
	# (path, digest, files, bytes) and shown in its text; a change of the
	# tree changes the Plan's identity, so it needs a new review.
	res_project
	ok
	review --json >"$T/plan.json"
	jq -e '.plan.flows[] | select(.name == "root") | .bindings[0].resources.docs | .path == "shared/docs" and .files == 2 and .bytes == 9
		and (.sha256 | test("^[0-9a-f]{64}$"))' "$T/plan.json" >/dev/null || fail "the Plan does not pin the tree: $(jq -c '.plan.flows[0].bindings' "$T/plan.json")"
	sha=$(jq -r '.plan.flows[] | select(.name == "root") | .bindings[0].resources.docs.sha256' "$T/plan.json")
	[ -f "$T/p/.jig/store/packages/$sha.json" ] || fail "the tree is not in Package/0"
	jq -e '[.files[].path] == ["guide.txt", "sub/deep.txt"]' "$T/p/.jig/store/packages/$sha.json" >/dev/null || fail "manifest"
	review --full >"$T/text" </dev/null || true
	grep -q "resource tree docs <- shared/docs (read-only, captured: 2 files, 9 bytes" "$T/text" || { cat "$T/text"; fail "the Plan's text does not show the tree"; }
	a=$(jq -r .plan_sha256 "$T/plan.json")
	printf 'changed' >"$T/p/shared/docs/guide.txt"
	echo no | review >"$T/text" 2>&1 || true
	grep -q "not admitted" "$T/text" || { cat "$T/text"; fail "the review was not declined"; }
	review --json >"$T/plan2.json"
	[ "$(jq -r .plan_sha256 "$T/plan2.json")" != "$a" ] || fail "a changed tree kept the Plan identity"
	sha2=$(jq -r '.plan.flows[] | select(.name == "root") | .bindings[0].resources.docs.sha256' "$T/plan2.json")
	[ -f "$T/p/.jig/store/packages/$sha2.json" ] || fail "a declined review did not retain the tree"
	(cd "$T/p" && jig run root --input plan="$T/p/jig.json" --output "$T/pkt") >"$T/out" 2>&1 && fail "a Run of the changed tree ran"
	grep -q "changed since review" "$T/out" || { cat "$T/out"; fail "the Run was not refused for the change"; }
}
case_refuse_bad_resources() {
	# R-S04: traversal, absolute paths, the .jig state, symlinks (as the
	# tree, on the way, or inside it), special files, the 64-file / 8 MiB
	# cap, an undeclared or doubly mapped child input: each refused at
	# review with one line.
	res_project; edit root '.bindings.x.resources.docs = "../outside"'
	bad 'resources: "docs": "../outside" is not a normalised project-relative path'
	res_project; edit root '.bindings.x.resources.docs = "/etc"'
	bad 'resources: "docs": "/etc" is not a normalised project-relative path'
	res_project; edit root '.bindings.x.resources.docs = "shared/.jig"'
	bad 'resources: "docs": the protected .jig state is never a resource'
	res_project; ln -s /etc "$T/p/shared/link"; edit root '.bindings.x.resources.docs = "shared/link"'
	bad 'resources: "docs": shared/link: is not a directory of the project, or passes through a symbolic link; refused'
	res_project; ln -s docs "$T/p/shared/link"; edit root '.bindings.x.resources.docs = "shared/link/sub"'
	bad 'resources: "docs": shared/link/sub: is not a directory of the project, or passes through a symbolic link'
	res_project; ln -s /etc/passwd "$T/p/shared/docs/evil"
	bad 'root binding x resource docs: evil: is a symbolic link'
	res_project; mkfifo "$T/p/shared/docs/fifo"
	bad 'fifo: is a special file'
	res_project; i=0; while [ $i -lt 63 ]; do : >"$T/p/shared/docs/f$i"; i=$((i + 1)); done
	bad 'shared/docs has 65 files and 9 bytes; a child.s inputs and resource trees are at most 64 files and 8388608 bytes together'
	res_project; head -c 8388600 /dev/zero >"$T/p/shared/docs/big"
	bad 'a child.s inputs and resource trees are at most 64 files and 8388608 bytes together'
	res_project; edit root '.bindings.x.resources = {"nosuch": "shared/docs"}'
	bad 'flow root binding x: resources: flow a declares no input "nosuch"'
	res_project; edit root '.bindings.x.resources = {"docs": "shared/docs", "plan": "shared/docs"}'
	bad "flow a's input \"plan\" is both in the read map and a resource tree"
	res_project; edit root '.bindings.x.resources = {"docs": "shared/missing"}'
	bad 'resources: "docs": shared/missing: No such file or directory'
	res_project; edit root '.bindings.x.resources = {}'
	bad "flow a's input \"docs\" is not mapped (read map or resources)"
}

"case_$1"
echo "PASS: $1"
