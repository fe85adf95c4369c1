#!/bin/sh
# Bindings end to end (issue 17): child Flows under the fixed root budget.
# Every Flow of the generated test project is tests/flow/binding/node.ts,
# steered by its "plan" input. Each case_* is one ctest (binding.<case>) in
# the supported-host lane, run as the unprivileged user.
# Requirements: R-B01, R-B02, R-B03, R-B04, R-B05 (see docs/requirements.md).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
MK="$JIG_SOURCE/tests/flow/binding/mkproject.sh"

T=$(mktemp -d /tmp/jig-binding.XXXXXX)
BG=""
trap 'for p in $BG; do kill "$p" 2>/dev/null || true; done; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# project SPEC: a fresh project (mkproject.sh), reviewed and admitted.
project() {
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	sh "$MK" "$T/p" "$1"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
}
# run PLAN [TIMEOUT]: jig run root with that plan; $rc, $T/out, $T/err, $T/pkt.
run() {
	printf '%s\n' "$1" >"$T/plan"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	(cd "$T/p" && "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout "${2:-120s}") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	echo "--- jig run root (exit $rc)"
	cat "$T/out" "$T/err"
	[ ! -f "$T/pkt/record.json" ] || jq -c '{status, why, children: [.children[]? | {binding, flow, status, why, cleanup_confirmed, reservation_released}], root_budget}' "$T/pkt/record.json"
	[ ! -f "$T/pkt/files/result.json" ] || cat "$T/pkt/files/result.json"
	echo
}
rec() { jq -r "$1" "$T/pkt/record.json"; }
res() { jq -r "$1" "$T/pkt/files/result.json"; }
check() { jq -e "$1" "$T/pkt/record.json" >/dev/null || fail "${2:-record}: $1"; }
# No process, cgroup or directory of the Run is left.
nothing_left() {
	! ls -d /tmp/jig-run-* 2>/dev/null | grep -q . || fail "a run directory is left: $(ls -d /tmp/jig-run-*)"
	! find /sys/fs/cgroup -name 'jig-[0-9]*' -type d 2>/dev/null | grep -q . || fail "a cgroup is left: $(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d)"
	! pgrep -u "$(id -u)" -f '/.jig/bun' >/dev/null || fail "a Flow process is left"
}

CHAIN='{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json","out.txt":"from-x.txt"}}}},
	"a":{"bindings":{"x":{"flow":"b","write":{"result.json":"from-x.json"}}}},
	"b":{"commands":true}}'

case_three_level_chain() {
	# R-B01, R-B05: root -> a -> b (b with a Project Command) completes and
	# publishes; each write map brings the child's result into its caller;
	# the record is the tree; jig inspect shows it.
	project "$CHAIN"
	run '{"root":{"calls":[["x"]],"write":{"out.txt":"root"}},"a":{"calls":[["x"]],"write":{"out.txt":"from a"}},"b":{"command":true,"write":{"out.txt":"from b"}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	[ "$(res '.calls[0].ok')" = true ] || fail "root's call"
	[ "$(cat "$T/pkt/files/from-x.txt")" = "from a" ] || fail "a's out.txt did not reach root's from-x.txt"
	jq -e '.name == "a" and .calls[0].ok and .calls[0].outputs == ["from-x.json"]' "$T/pkt/files/from-x.json" >/dev/null || fail "a's result"
	check '.children | length == 1'
	check '.children[0] | .binding == "x" and .flow == "a" and .level == 1 and .status == "succeeded" and .cleanup_confirmed and .reservation_released'
	check '.children[0].children[0] | .flow == "b" and .level == 2 and .status == "succeeded" and .cleanup_confirmed and (.effects | length) == 1 and .effects[0].effect == "command"'
	check '.children[0].reservation == {memory_bytes: 805306368, tasks: 256, cpu_quota_us: 150000}' reservation
	check '.root_budget.peak_reserved == {memory_bytes: 1073741824, tasks: 320, cpu_quota_us: 200000} and .root_budget.reserved_at_end.memory_bytes == 268435456' ledger
	pol=$(cd "$T/p" && "$JIG" review --json | jq -r '.plan.flows[] | select(.name == "a") | .scope.policy_sha256')
	check ".children[0].scope_policy_sha256 == \"$pol\"" "policy digest"
	check '.children[0].termination | .outcome == "exited" and .exit_status == 0 and .wall_ms > 0'
	(cd "$T/p" && "$JIG" inspect "$T/pkt") >"$T/inspect" || { cat "$T/inspect"; fail "inspect"; }
	cat "$T/inspect"
	grep -q "child x -> flow a: succeeded" "$T/inspect" && grep -q "  child x -> flow b: succeeded" "$T/inspect" || fail "inspect shows no tree"
	nothing_left
}

"case_$1"
echo "PASS: $1"
