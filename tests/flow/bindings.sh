#!/bin/sh
# Bindings end to end (issue 17): child Flows under the fixed root budget.
# Every Flow of the generated test project is tests/flow/binding/node.ts,
# steered by its "plan" input. Each case_* is one ctest (binding.<case>) in
# the supported-host lane, run as the unprivileged user.
# Requirements: R-B01, R-B02, R-B03, R-B04, R-B05, R-L02, R-S02, R-S08 (see docs/requirements.md).
set -eu
. "${JIG_SOURCE:?}/tests/lib/store.sh"
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
MK="$JIG_SOURCE/tests/flow/binding/mkproject.sh"
. "$JIG_SOURCE/tests/flow/scope_plan.sh"

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
	# shellcheck disable=SC2086 # EXTRA: more --input arguments
	(cd "$T/p" && "$JIG" run root --output "$T/pkt" --input plan="$T/plan" ${EXTRA:-} --timeout "${2:-120s}") >"$T/out" 2>"$T/err" </dev/null
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
	run '{"root":{"calls":[["x"]],"write":{"out.txt":"root"}},"a":{"calls":[["x"]],"write":{"out.txt":"from a"}},"b":{"command":{"probe":true,"unreviewed":"nope"},"write":{"out.txt":"from b"}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	[ "$(res '.calls[0].ok')" = true ] || fail "root's call"
	[ "$(cat "$T/pkt/files/from-x.txt")" = "from a" ] || fail "a's out.txt did not reach root's from-x.txt"
	jq -e '.name == "a" and .calls[0].ok and .calls[0].outputs == ["from-x.json"]' "$T/pkt/files/from-x.json" >/dev/null || fail "a's result"
	check '.children | length == 1'
	check '.children[0] | .binding == "x" and .flow == "a" and .level == 1 and .status == "succeeded" and .cleanup_confirmed and .reservation_released'
	# R-K01: the Project Command at the end of the reviewed branch ran in
	# its own keyless, offline scope (exit 0: its environment is exactly
	# HOME, LANG, NO_COLOR, TMPDIR; no /flow, /input, /output or /stage),
	# and a route b's review does not have was refused, with one line.
	check '.children[0].children[0] | .flow == "b" and .level == 2 and .status == "succeeded" and .cleanup_confirmed and (.effects | length) == 2 and .effects[0].effect == "command"'
	b=$(cd "$T/p" && "$JIG" review --json | jq -r '.plan.flows[] | select(.name == "b") | .commands[] | select(.route == "run") | .command_scope.policy_sha256')
	check ".children[0].children[0].effects[0] | .route == \"run\" and .outcome == \"exited\" and .exit_code == 0 and .scope_policy_sha256 == \"$b\" and .cleanup_confirmed" "b's command"
	check '.children[0].children[0].effects[1] | .route == "nope" and .outcome == "refused" and (.error // .reason // "" | test("flow b has no reviewed command route \"nope\""))' "the unreviewed route"
	check '.children[0].reservation == {memory_bytes: 805306368, tasks: 256, cpu_quota_us: 150000}' reservation
	check '.root_budget.peak_reserved == {memory_bytes: 1073741824, tasks: 320, cpu_quota_us: 200000} and .root_budget.reserved_at_end.memory_bytes == 268435456' ledger
	pol=$(cd "$T/p" && "$JIG" review --json | jq -r '.plan.flows[] | select(.name == "a") | .scope.policy_sha256')
	check ".children[0].scope_policy_sha256 == \"$pol\"" "policy digest"
	check '.children[0].termination | .outcome == "exited" and .exit_status == 0 and .wall_ms > 0'
	(cd "$T/p" && "$JIG" inspect "$T/pkt") >"$T/inspect" || { cat "$T/inspect"; fail "inspect"; }
	cat "$T/inspect"
	grep -q '^  `-- child x -> flow a: succeeded$' "$T/inspect" && grep -q '^      `-- child x -> flow b: succeeded$' "$T/inspect" || fail "inspect shows no tree"
	# Issue 35: each child's effects under it (the root made none of its
	# own), when each scope started, its CPU and its limits (the timeline's facts).
	grep -q '^          command run exited exit 0' "$T/inspect" && grep -q '^  effects: 0 of its own, 2 made by child Flows' "$T/inspect" ||
		fail "inspect does not show the child's effects under it"
	grep -q '^      started .* UTC ([0-9]* ms since the epoch), .* into the Run$' "$T/inspect" || fail "inspect does not say when the child started"
	check '.started_ms as $r | [.children[0], .children[0].children[0]] | all(.started_ms >= $r and .limits.memory_bytes > 0 and .limits.cpu_quota_us > 0 and .limits.wall_ms > 0 and .termination.cpu_usec > 0)' "the timeline's facts"
	check '.children[0].children[0].started_ms >= .children[0].started_ms' "b started after a"
	nothing_left
}

# sampler: every 100 ms until $T/stop, one block per sample: a line per live
# scope cgroup (name memory.max pids.max cpu-quota), then "--".
sampler() {
	while [ ! -e "$T/stop" ]; do
		for m in /sys/fs/cgroup/*/jig-[0-9]*/*/memory.max /sys/fs/cgroup/*/*/jig-[0-9]*/*/memory.max \
			/sys/fs/cgroup/*/*/*/jig-[0-9]*/*/memory.max /sys/fs/cgroup/*/*/*/*/jig-[0-9]*/*/memory.max; do
			d=${m%/memory.max}
			[ -e "$m" ] || continue
			# A scope that ends while it is read is left out of this sample.
			m=$(cat "$d/memory.max" 2>/dev/null) && t=$(cat "$d/pids.max" 2>/dev/null) &&
				c=$(cut -d' ' -f1 "$d/cpu.max" 2>/dev/null) && [ -n "$c" ] && printf '%s %s %s %s\n' "${d##*/}" "$m" "$t" "$c" || true
		done
		echo --
		sleep 0.1
	done >"$T/samples"
}

TWO='{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}},"y":{"flow":"b","write":{"result.json":"from-y.json"}}}},
	"a":{"bindings":{"x":{"flow":"a2","write":{"result.json":"from-x.json"}}}},"b":{"bindings":{"x":{"flow":"b2","write":{"result.json":"from-y.json"}}}},
	"a2":{"commands":true},"b2":{"commands":true}}'

case_two_branches_budget() {
	# R-B01, R-B02: two simultaneous two-level branches, each with its own
	# effect (the contract's example: exactly the root budget) complete;
	# sampled every 100 ms while they run, the sum of memory.max, pids.max
	# and cpu.max over every live scope never exceeds 1,792 MiB, 576 tasks
	# and 3.5 CPU, and each scope's limits are the table's.
	project "$TWO"
	rm -f "$T/stop"
	sampler &
	BG="$BG $!"
	run '{"root":{"calls":[["x","y"]]},"a":{"calls":[["x"]]},"b":{"calls":[["x"]]},"a2":{"command":{"sleep":10000}},"b2":{"command":{"sleep":10000}}}'
	touch "$T/stop"
	wait
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	res '.calls | map(.ok) == [true, true]' | grep -q true || fail "the branches"
	jq -e '.calls[0].ok and .command == null' "$T/pkt/files/from-x.json" >/dev/null || fail "branch x's result"
	jq -e '.name == "a2" and .command == "cmd-42"' "$T/pkt/files/from-x.json" >/dev/null 2>&1 || \
		jq -e '.name == "a" and .calls[0].outputs == ["from-x.json"]' "$T/pkt/files/from-x.json" >/dev/null || fail "a's result"
	check '[.children[] | .status] == ["succeeded", "succeeded"] and ([.children[].children[0].effects[0].outcome] == ["exited", "exited"])'
	check '.root_budget.peak_reserved == {memory_bytes: 1879048192, tasks: 576, cpu_quota_us: 350000}' "peak reservation"
	awk '
		$1 == "--" { if (n > most) most = n; if (m > mm) mm = m; if (t > mt) mt = t; if (c > mc) mc = c; n = m = t = c = 0; next }
		{ n++; m += $2; t += $3; c += $4
		  if (!(($2 == 268435456 && $3 == 64 && $4 == 50000) || ($2 == 268435456 && $3 == 128 && $4 == 50000))) bad = bad " " $0 }
		END { printf "samples: at most %d live scopes; sums at most %d bytes, %d tasks, %d us\n", most, mm, mt, mc
		      if (bad != "") { print "limits not the table'"'"'s:" bad; exit 1 }
		      if (mm > 1879048192 || mt > 576 || mc > 350000) { print "over the root budget"; exit 1 }
		      if (most < 5) { print "never saw both branches with an effect at once"; exit 1 } }' "$T/samples" || fail "sampled limits"
	nothing_left
}

# Issue 47, R-S08 (#180): the six output backings. A chain of the root
# and five child levels (the longest admitted branch), each Flow filling
# its own /output with 16 MiB less 256 KiB before it calls the next, the
# deepest holding its fill for 10 s (a sample reads six memory.stat files
# one after another, and under TCG at load 14 it can take seconds: with a
# 3 s hold, two runs of 2026-12-07 never sampled the six full at once):
# sampled every 100 ms, the tmpfs pages
# (memory.stat shmem) of every live scope sum to at most 96 MiB and reach
# at least 90 MiB with six scopes live at once (each volume is its
# Flow's 16 MiB tmpfs, charged to its scope). One byte over 16 MiB in the
# deepest Flow is refused by its volume (No space left on device): the
# sum cannot pass 96 MiB.
SIX='{"root":{"outputs":["result.json","big.bin"],"bindings":{"x":{"flow":"f1"}}},
	"f1":{"outputs":["result.json","big.bin"],"bindings":{"x":{"flow":"f2"}}},
	"f2":{"outputs":["result.json","big.bin"],"bindings":{"x":{"flow":"f3"}}},
	"f3":{"outputs":["result.json","big.bin"],"bindings":{"x":{"flow":"f4"}}},
	"f4":{"outputs":["result.json","big.bin"],"bindings":{"x":{"flow":"f5"}}},
	"f5":{"outputs":["result.json","big.bin"]}}'
shmem_sampler() {
	while [ ! -e "$T/stop" ]; do
		find /sys/fs/cgroup -path '*/jig-[0-9]*/flow-*' -name memory.stat 2>/dev/null | while read -r m; do
			sed -n 's/^shmem \([0-9]*\)$/\1/p' "$m" 2>/dev/null || true
		done | awk '{ n++; s += $1 } END { print n + 0, s + 0 }'
		sleep 0.1
	done >"$T/shmem"
}
case_s08_six_output_backings() {
	project "$SIX"
	fill=$((16 * 1048576 - 262144))
	plan=$(jq -cn --argjson f "$fill" '{root: {fill: {"big.bin": $f}, calls: [["x"]]}, f1: {fill: {"big.bin": $f}, calls: [["x"]]},
		f2: {fill: {"big.bin": $f}, calls: [["x"]]}, f3: {fill: {"big.bin": $f}, calls: [["x"]]},
		f4: {fill: {"big.bin": $f}, calls: [["x"]]}, f5: {fill: {"big.bin": $f}, sleep: 10000}}')
	rm -f "$T/stop"
	shmem_sampler &
	BG="$BG $!"
	run "$plan" 300s
	touch "$T/stop"
	wait
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the six did not run"
	check '.children[0].children[0].children[0].children[0].children[0] | .flow == "f5" and .level == 5 and .status == "succeeded"' "the fifth level"
	awk -v cap=$((96 * 1048576)) -v least=$((90 * 1048576)) '
		{ if ($2 > most) { most = $2; live = $1 } }
		END { printf "the tmpfs pages of every live scope: at most %.1f MiB, then with %d scopes live\n", most / 1048576, live
		      if (most > cap) { print "over 96 MiB"; exit 1 }
		      if (most < least || live < 6) { print "never saw the six volumes full at once"; exit 1 } }' "$T/shmem" || fail "the six backings"
	# One byte over 16 MiB in the deepest Flow: refused by its volume.
	plan=$(printf '%s' "$plan" | jq -c '.f5.fill["big.bin"] = 16777217')
	run "$plan" 300s
	check '.children[0].children[0].children[0].children[0].children[0] | .flow == "f5" and .status == "failed" and (.why | test("No space left on device|ENOSPC"))' "the byte over"
	nothing_left
}

# Two branches of three levels each: review admits them (3 x 256 MiB per
# branch, 1792 MiB with the root's), so six child edges could be live.
SEVEN='{"root":{"bindings":{"x":{"flow":"a","timeout_ms":200000,"write":{"result.json":"from-x.json"}},"y":{"flow":"b","timeout_ms":200000,"write":{"result.json":"from-y.json"}}}},
	"a":{"bindings":{"x":{"flow":"a2","timeout_ms":200000,"write":{"result.json":"from-x.json"}}}},"b":{"bindings":{"x":{"flow":"b2","timeout_ms":200000,"write":{"result.json":"from-y.json"}}}},
	"a2":{"bindings":{"x":{"flow":"a3","timeout_ms":200000,"write":{"result.json":"from-x.json"}}}},"b2":{"bindings":{"x":{"flow":"b3","timeout_ms":200000,"write":{"result.json":"from-x.json"}}}},
	"a3":{},"b3":{}}'

case_s08_sixth_live_stage_refused() {
	# R-S08 #181 (decision 330): at most five live child import stages.
	# Five children live at once, each with a write map (so each a stage
	# slot): a -> a2 -> a3 (a3 sleeps) and b -> b2; b2 then calls b3, the
	# sixth child edge, and is refused before dispatch with one line naming
	# the bound; the five import and publish.
	project "$SEVEN"
	run '{"root":{"calls":[["x","y"]]},"a":{"calls":[["x"]]},"a2":{"calls":[["x"]]},"a3":{"sleep":60000,"write":{"out.txt":"a3"}},
		"b":{"calls":[["x"]]},"b2":{"delay":25000,"calls":[["x"]]},"b3":{"write":{"out.txt":"b3"}}}' 280s
	jq -c '[.. | objects | select(has("binding")) | {flow, status, why}]' "$T/pkt/record.json"
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the root did not succeed"
	check '.children | length == 2 and all(.status == "succeeded")' "the two branches"
	check '[.. | objects | select(has("binding") and .status == "succeeded")] | length == 5' "five children succeeded"
	check '[.. | objects | select(.flow == "a3")][0].status == "succeeded"' "a3 (live while b3 was asked for)"
	b3=$(jq -c '[.. | objects | select(.flow == "b3")]' "$T/pkt/record.json")
	echo "b3: $b3"
	printf '%s' "$b3" | jq -e 'length == 1 and .[0].status == "refused"' >/dev/null || fail "the sixth child edge was not refused: $b3"
	why=$(printf '%s' "$b3" | jq -r '.[0].why')
	[ "$(printf '%s\n' "$why" | wc -l)" -eq 1 ] || fail "not one line: $why"
	printf '%s' "$why" | grep -q '^binding x: the Run has 5 child Flows live; at most 5 live child Flows and import stages, one per child edge' ||
		fail "the refusal does not name the bound: $why"
	# The five stages imported: each caller holds its child's result.
	[ "$(res .calls[0].outcome)" = succeeded ] && [ "$(res .calls[1].outcome)" = succeeded ] || fail "the root's calls"
	[ -f "$T/pkt/files/from-x.json" ] && [ -f "$T/pkt/files/from-y.json" ] || fail "the branches' results were not imported"
	nothing_left
}

case_child_failures_fenced() {
	# R-B03: a child that hangs (past its binding's deadline), crashes or
	# exceeds its memory is fenced; its record says so, with its cleanup
	# confirmed and only then its reservation released; the parent sees a
	# clear outcome and goes on. Every child's deadline is capped by the
	# root's.
	project '{"root":{"bindings":{"x":{"flow":"a","timeout_ms":3000},"y":{"flow":"b"}}},"a":{},"b":{}}'
	run '{"root":{"calls":[["x"],["y"]]},"a":{"sleep":600000},"b":{"crash":true}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the root did not go on"
	res '[.calls[] | .outcome]' | jq -e '. == ["timeout", "failed"]' >/dev/null || fail "outcomes the root saw"
	check '.children[0] | .status == "timeout" and .termination.outcome == "timeout" and .termination.fenced and .cleanup_confirmed and .reservation_released and .deadline_ms == 3000'
	check '.children[1] | .status == "failed" and .termination.signal == 11 and (.why | test("signal 11|SIGSEGV")) and .cleanup_confirmed and .reservation_released'
	check '.root_budget.reserved_at_end == {memory_bytes: 268435456, tasks: 64, cpu_quota_us: 50000} and .root_budget.held_after_unconfirmed_cleanup == false'
	run '{"root":{"calls":[["y"]]},"b":{"hog":true}}'
	check '.children[0] | .status == "failed" and .termination.outcome == "oom" and .termination.oom_kills > 0 and .cleanup_confirmed and .reservation_released'
	# jig why (issue 35): the child's memory kill, where and what allows it.
	(cd "$T/p" && "$JIG" why "$T/pkt") >"$T/why"; cat "$T/why"
	grep -q "^- memory: child Flow b (binding y) ran out of memory" "$T/why" && grep -q "the contract forbids more: " "$T/why" || fail "jig why of the child's OOM"
	# The root's deadline caps the child's: 15 s of root, a 60 s binding.
	run '{"root":{"calls":[["y"]]},"b":{"sleep":600000}}' 15s
	[ "$(rec .status)" = timeout ] || fail "the root did not time out"
	check '.children[0] | .deadline_ms < 15000 and (.status == "timeout" or .status == "cancelled") and .cleanup_confirmed'
	nothing_left
}

case_child_bwrap_killed() {
	# Issue 31: the child's bwrap SIGKILLed while the child's Flow runs:
	# outcome "killed", started true, never "ended before its payload
	# started"; the root goes on and its reservation is released.
	project '{"root":{"bindings":{"x":{"flow":"a"}}},"a":{}}'
	printf '%s\n' '{"root":{"calls":[["x"]]},"a":{"sleep":600000}}' >"$T/plan"
	chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt"
	(cd "$T/p" && exec "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	BG="$BG $outer"
	i=0; until [ "$(pgrep -u "$(id -u)" -c -f '^/\.jig/bun /\.jig/runtime/boot\.js')" -ge 2 ]; do
		i=$((i + 1)); [ "$i" -lt 600 ] || fail "the child never ran"; sleep 0.1; done
	coord=$(pgrep -P "$outer" -x jig)
	b=$(pgrep -n -P "$coord" -x bwrap) || fail "no bwrap under the coordinator"
	kill -KILL "$b"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/out" "$T/err"; cat "$T/pkt/files/result.json"; echo
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the root did not go on"
	res '.calls[0] | .outcome == "killed" and .ok == false and .started == true and (.error | test("killed while its Flow ran: the scope was killed while its payload ran \\(bwrap killed by signal 9\\)"))' |
		grep -qx true || fail "the root saw: $(res '.calls[0]')"
	check '.children[0] | .status == "killed" and .termination.outcome == "failed" and .termination.payload_started == true and .cleanup_confirmed and .reservation_released'
	! grep -q "before its payload started" "$T/pkt/record.json" || fail "recorded as never started"
	nothing_left
}

case_coordinator_killed_mid_branch() {
	# R-B03, R-L06: the coordinator killed (SIGKILL) while both branches
	# run: the outer command fences every scope and removes the run
	# directory with its ledger; nothing is published.
	project "$TWO"
	printf '%s\n' '{"root":{"calls":[["x","y"]]},"a":{"calls":[["x"]]},"b":{"calls":[["x"]]},"a2":{"sleep":600000},"b2":{"sleep":600000}}' >"$T/plan"
	(cd "$T/p" && exec "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 300s) >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	BG="$BG $outer"
	i=0
	until [ "$(find /sys/fs/cgroup -path '*/jig-[0-9]*/flow-*' -name memory.max 2>/dev/null | wc -l)" -ge 5 ]; do
		i=$((i + 1)); [ "$i" -lt 600 ] || fail "the branches never all ran"; sleep 0.1
	done
	ledger=$(ls /tmp/jig-run-*/reservations.json)
	jq -e '(.live | length) == 3 and .reserved.memory_bytes == 1879048192' "$ledger" >/dev/null || fail "the durable ledger: $(cat "$ledger")"
	coord=$(pgrep -P "$outer" | head -1)
	kill -KILL "$coord"
	set +e; wait "$outer"; orc=$?; set -e
	cat "$T/out" "$T/err"
	[ "$orc" -ne 0 ] && grep -q "was killed by signal 9" "$T/err" || fail "the outer command did not report the lost coordinator"
	[ ! -e "$T/pkt" ] || fail "something was published"
	nothing_left
}

case_isolation() {
	# R-B04: a child sees only its read map's whole inputs: not the
	# caller's other inputs, output, scratch, stages or run directory, nor
	# its sibling's output or scratch; it cannot write /input or /stage;
	# what it writes reaches the caller only through the write map.
	project '{"root":{"inputs":["plan","secret"],"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}},"y":{"flow":"b"}}},"a":{},"b":{}}'
	printf 'SECRET-INPUT' >"$T/secret"
	EXTRA="--input secret=$T/secret" run '{"root":{"write":{"out.txt":"PARENT-OUTPUT"},"calls":[["x","y"]]},
		"a":{"write":{"out.txt":"FROM-A"},"delay":1500,"probe":["/input/secret","/output/from-x.json","/stage/1","/scratch/sibling","/tmp/sibling",
			"/run0","write:/input/x","write:/stage/x","write:/flow/x","/proc/1/root/output/out.txt"]},
		"b":{"write":{"out.txt":"SIBLING-OUTPUT"},"sleep":4000}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	jq -e '.inputs == ["plan"] and ([.probes[]] | all(. == "denied"))' "$T/pkt/files/from-x.json" >/dev/null || fail "the child saw more: $(cat "$T/pkt/files/from-x.json")"
	[ "$(cat "$T/pkt/files/out.txt")" = PARENT-OUTPUT ] || fail "the caller's output changed"
	[ ! -e "$T/pkt/files/from-x.txt" ] && ! grep -rq "FROM-A\|SIBLING-OUTPUT" "$T/pkt/files" || fail "an unmapped child output reached the caller"
	check '.children[] | select(.binding == "x") | .staged == {"from-x.json": "/output/from-x.json"}'
	nothing_left
}

case_refused_before_dispatch() {
	# R-L02, R-L03: at run time, a second call of the big branch while it
	# runs would bring the ledger over the root budget, and a third call in
	# flight at the root is a third sibling: both refused before dispatch
	# (the call rejects, the record says why, nothing ran for them), while
	# the admitted calls complete.
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"b"}}},"a":{"bindings":{"x":{"flow":"a2"}}},
		"a2":{"bindings":{"x":{"flow":"a3"}}},"a3":{"commands":true},"b":{}}'
	run '{"root":{"calls":[["x","x"],["y","y","y"]]},"b":{"sleep":2000}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	res '[.calls[] | .outcome]' | jq -e '. == ["succeeded", "rejected", "succeeded", "succeeded", "rejected"]' >/dev/null || fail "outcomes"
	res '.calls[1].error' | grep -q "reservations over the root budget (1792 MiB, 576 tasks, 3.5 CPU) are refused before dispatch" || fail "budget refusal"
	res '.calls[4].error' | grep -q "the root permits two sibling Flows (shape rule); refused before dispatch" || fail "sibling refusal"
	check '[.children[] | select(.status == "refused") | has("termination")] == [false, false]' "refused calls ran"
	check '.root_budget.peak_reserved.memory_bytes <= 1879048192 and .root_budget.reserved_at_end.memory_bytes == 268435456'
	nothing_left
}

# held_cgroups: while $T/stop is absent, a cgroup of the harness's own is
# made inside every scope of Flow a or b: the fence empties it, but the
# scope's cgroup cannot be removed, so its cleanup is not confirmed.
held_cgroups() {
	while [ ! -e "$T/stop" ]; do
		for d in $(find /sys/fs/cgroup -type d \( -path '*/jig-[0-9]*/flow-a' -o -path '*/jig-[0-9]*/flow-b' \) 2>/dev/null); do
			[ -d "$d/held" ] || mkdir "$d/held" 2>/dev/null || true
		done
		sleep 0.1
	done
}

case_unconfirmed_cleanup_held() {
	# R-L02 (#138, #175): a level-1 child whose cleanup is not confirmed
	# keeps its reservation and its destination for the rest of the Run.
	# x (a long branch, no write map) and y twice (a write map each) run
	# with their scopes' cleanup made unconfirmed (held_cgroups): all three
	# reservations stay in the durable ledger (held) and the two stage
	# slots stay taken, so the next x is refused over the root budget and
	# the next y for the stage slots (not for the budget, which it would
	# otherwise meet first: the slots are checked first only when taken).
	project '{"root":{"bindings":{"x":{"flow":"a"},"y":{"flow":"b","write":{"result.json":"from-y.json"}}}},
		"a":{"bindings":{"x":{"flow":"a2"}}},"a2":{"bindings":{"x":{"flow":"a3"}}},"a3":{"commands":true},"b":{}}'
	rm -f "$T/stop"
	held_cgroups &
	BG="$BG $!"
	printf '%s\n' '{"root":{"calls":[["x","y"],["y"],["x"],["y"]],"sleep":5000},"a":{"sleep":3000},"b":{"sleep":3000}}' >"$T/plan"
	chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt"
	(cd "$T/p" && exec "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	BG="$BG $outer"
	# While the root sleeps after its calls: the durable ledger holds them.
	i=0; until [ "$(jq -r .held /tmp/jig-run-*/reservations.json 2>/dev/null)" = true ] &&
		[ "$(jq '.live | length' /tmp/jig-run-*/reservations.json)" = 4 ]; do
		i=$((i + 1)); [ "$i" -lt 900 ] || fail "the ledger never held the three: $(cat /tmp/jig-run-*/reservations.json)"; sleep 0.1; done
	jq -e '.held and ([.live[].id] == ["root", "child-1", "child-2", "child-3"]) and .reserved == {memory_bytes: 1879048192, tasks: 512, cpu_quota_us: 350000}' \
		/tmp/jig-run-*/reservations.json >/dev/null || fail "the durable ledger: $(cat /tmp/jig-run-*/reservations.json)"
	set +e; wait "$outer"; rc=$?; set -e
	touch "$T/stop"
	wait
	cat "$T/out" "$T/err"; cat "$T/pkt/files/result.json"; echo
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the root did not go on"
	res '[.calls[] | .outcome]' | jq -e '. == ["failed", "failed", "failed", "rejected", "rejected"]' >/dev/null || fail "outcomes"
	res '.calls[0:3] | map(.error | test("cleanup not confirmed")) | all' | grep -qx true || fail "the failures do not say why"
	res '.calls[3].error' | grep -q "binding x: its branch would bring the reserved sum to 2816 MiB.*reservations over the root budget (1792 MiB, 576 tasks, 3.5 CPU) are refused before dispatch" ||
		fail "x was not refused over the budget"
	res '.calls[4].error' | grep -q "binding y: root has 2 import stages not yet imported; at most 2 belong to one caller; refused before dispatch" ||
		fail "y was not refused for its held destinations"
	check '[.children[] | select(.status == "failed") | .cleanup_confirmed == false and .reservation_released == false] == [true, true, true]'
	check '[.children[] | select(.status == "refused") | has("termination")] == [false, false]' "refused calls ran"
	check '.root_budget.held_after_unconfirmed_cleanup and .root_budget.reserved_at_end == {memory_bytes: 1879048192, tasks: 512, cpu_quota_us: 350000}'
	"$JIG" inspect "$T/pkt" | grep -c "HELD: cleanup not confirmed" | grep -qx 3 || fail "jig inspect does not show the three held"
	# The harness's cgroups go, then the scopes' own.
	for d in $(find /sys/fs/cgroup -type d -name held -path '*/jig-[0-9]*/flow-*'); do rmdir "$d" "${d%/held}" "${d%/*/held}"; done
	nothing_left
}

case_storage_nothing_retained() {
	# R-S08 (#185, #187, #191): per-invocation bytes (the Run's attachment,
	# the per-call input a child borrows, a Project Command's invocation
	# file, each carrying a fresh mark) never enter the project's Package/0
	# store or state, nor the installation; the root's packet depends on no
	# child storage: when the coordinator reaches publication (stopped at
	# the "output copy" fault point) no child directory is left in the run
	# directory, and the packet it then publishes is whole.
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{"commands":true}}'
	# (but for jig why's last-Run entry of the root, .jig/runs/root.json,
	# decision 163: jig's own words, no log; the mark below is in none of it)
	store() { (cd "$T/p/.jig" && find . -type f ! -path ./runs/root.json | sort | while read -r f; do sha256sum "$f"; done); }
	store >"$T/store.before"
	[ "$(grep -c ' ./store/' "$T/store.before")" -gt 0 ] || fail "no store to compare"
	mark="per-invocation-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	printf '%s\n' "{\"root\":{\"calls\":[[\"x\"]],\"log\":\"$mark-root\"},\"a\":{\"command\":{\"mark\":\"$mark-command\"}}}" >"$T/plan"
	touch "$T/stamp"
	chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt" "$T/fault.log"
	(cd "$T/p" && exec env JIG_FAULT_STOP="output copy" JIG_FAULT_LOG="$T/fault.log" "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) \
		>"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	BG="$BG $outer"
	i=0; until grep -q "^output copy " "$T/fault.log" 2>/dev/null; do
		i=$((i + 1)); [ "$i" -lt 1200 ] || { cat "$T/err"; fail "publication was not reached"; }; sleep 0.1; done
	stopped=$(sed -n 's/^output copy //p' "$T/fault.log")
	i=0; until [ "$(ps -o stat= -p "$stopped" | cut -c1)" = T ]; do i=$((i + 1)); [ "$i" -lt 500 ] || fail "not stopped"; sleep 0.01; done
	ls -la /tmp/jig-run-*/
	! ls -d /tmp/jig-run-*/child-* 2>/dev/null | grep -q . || fail "child storage is left at publication: $(ls -d /tmp/jig-run-*/child-*)"
	kill -CONT "$stopped"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	jq -e '.name == "a" and .command == "cmd-42"' "$T/pkt/files/from-x.json" >/dev/null || fail "the child's result: $(cat "$T/pkt/files/from-x.json")"
	"$JIG" inspect "$T/pkt" >/dev/null || fail "the packet does not verify"
	store >"$T/store.after"
	diff "$T/store.before" "$T/store.after" || fail "the project's state changed in the Run"
	! grep -rl "$mark" "$T/p" || fail "per-invocation bytes in the project"
	[ -z "$(find "$JIG_TEST_PREFIX" -newer "$T/stamp" 2>/dev/null | head -3)" ] || fail "the installation changed: $(find "$JIG_TEST_PREFIX" -newer "$T/stamp" | head -3)"
	grep -q "$mark-root" "$T/pkt/record.json" || fail "the root's log (terminal evidence) is missing"
	nothing_left
}

case_call_inputs_and_resources() {
	# R-S04: per-call inputs: jig.call(x, {inputs}) gives the child
	# exactly the named pairs of the reviewed read map (here plan, not
	# extra); an unreviewed name, a path, the caller's output file or
	# scratch is refused before dispatch with one line (in the record too).
	# The binding's resource tree (captured at review) is the child's
	# input "docs", readable and not writable.
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	sh "$MK" "$T/p" '{"root":{"inputs":["plan","extra","secret"],"bindings":{"x":{"flow":"a","read":{"plan":"plan","extra":"extra"},
		"resources":{"docs":"shared/docs"},"write":{"result.json":"from-x.json"}}}},"a":{"inputs":["plan","extra","docs"]}}'
	mkdir -p "$T/p/shared/docs/sub"
	printf 'guide' >"$T/p/shared/docs/guide.txt"
	printf 'deep' >"$T/p/shared/docs/sub/deep.txt"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
	printf 'EXTRA' >"$T/extra"
	printf 'SECRET' >"$T/secret"
	EXTRA="--input extra=$T/extra --input secret=$T/secret" run '{"root":{"write":{"out.txt":"root"},
		"calls":[[["x",{"plan":"plan"}]],[["x",{"plan":"secret"}]],[["x",{"plan":"../secret"}]],[["x",{"plan":"out.txt"}]],
			[["x",{"plan":"/scratch/x"}]],[["x",{"docs":"plan"}]]]},
		"a":{"probe":["/input/docs/guide.txt","/input/docs/sub/deep.txt","/input/extra","/input/secret","write:/input/docs/guide.txt",
			"write:/input/docs/new","write:/input/docs/sub/new"]}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	jq -e '.inputs == ["docs", "plan"] and .probes == {"/input/docs/guide.txt": "read", "/input/docs/sub/deep.txt": "read",
		"/input/extra": "denied", "/input/secret": "denied", "write:/input/docs/guide.txt": "denied", "write:/input/docs/new": "denied",
		"write:/input/docs/sub/new": "denied"}' "$T/pkt/files/from-x.json" >/dev/null || fail "the child saw: $(cat "$T/pkt/files/from-x.json")"
	res '[.calls[] | .outcome]' | jq -e '. == ["succeeded", "rejected", "rejected", "rejected", "rejected", "rejected"]' >/dev/null || fail "outcomes"
	res '.calls[1].error' | grep -q 'binding x: inputs: "plan" <- "secret" is not in its reviewed read map; a child gets only what review allowed; refused before dispatch' || fail "unreviewed"
	res '.calls[2].error' | grep -q '"plan" <- "../secret" is a path; a child borrows only whole inputs of its caller, by name' || fail "path"
	res '.calls[3].error' | grep -q '"plan" <- "out.txt" is not in its reviewed read map' || fail "the caller's output"
	res '.calls[4].error' | grep -q '"plan" <- "/scratch/x" is a path' || fail "scratch"
	res '.calls[5].error' | grep -q '"docs" <- "plan" is not in its reviewed read map' || fail "a resource by a read name"
	check '[.children[] | .status] == ["succeeded", "refused", "refused", "refused", "refused", "refused"]'
	check '.children[0].inputs | map(.input) == ["plan", "docs"] and .[0].from == "plan" and .[1].resource == "shared/docs"' "the record's inputs"
	(cd "$T/p" && "$JIG" inspect "$T/pkt") >"$T/inspect" || { cat "$T/inspect"; fail "inspect"; }
	grep -q "given plan <- plan, docs <- resource tree shared/docs" "$T/inspect" || { cat "$T/inspect"; fail "inspect does not show what the child was given"; }
	check '[.children[] | select(.status == "refused") | has("termination")] | all(. == false)' "refused calls ran"
	nothing_left
	# R-S04: the retained bytes are checked again as they are copied out
	# of the store: a tampered blob of the tree (the live directory is
	# unchanged, so the Plan still matches) makes the child fail before it
	# runs, with a line naming the altered blob; the caller goes on.
	blob=$(printf 'guide' | sha256sum | cut -d' ' -f1)
	blob_write "$T/p/.jig/store" "$blob" 0 GUIDE || fail "no blob $blob in the store"
	EXTRA="--input extra=$T/extra --input secret=$T/secret" run '{"root":{"write":{"out.txt":"root"},"calls":[["x"]]},"a":{"write":{"out.txt":"ran"}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	[ "$(res '.calls[0].ok')" = false ] && [ "$(res '.calls[0].outcome')" = failed ] || fail "the call: $(res '.calls[0]')"
	res '.calls[0].error' | grep -q "resource tree docs (shared/docs): store: blob $blob was altered" || fail "the call's error: $(res '.calls[0].error')"
	check ".children[0] | .status == \"failed\" and (.why | test(\"blob $blob was altered\")) and (has(\"termination\") | not) and .cleanup_confirmed"
	[ ! -e "$T/pkt/files/from-x.json" ] || fail "the child's result was imported"
	nothing_left
}

case_resources_and_inputs_share_cap() {
	# R-S02, R-S04 (audit #158): a binding's resource trees and the inputs
	# a call borrows share one 64-file / 8 MiB cap. The same binding runs
	# when its call borrows only "plan" (40 + 1 files; 5 MiB + a few bytes)
	# and is refused before its child starts, with one line, when the call
	# borrows the whole read map (40 + 1 + 30 files; 5 MiB + 4 MiB).
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	sh "$MK" "$T/p" '{"root":{"inputs":["plan","many","big"],"bindings":{
		"x":{"flow":"a","read":{"plan":"plan","many":"many"},"resources":{"docs":"shared/docs"}},
		"y":{"flow":"b","read":{"plan":"plan","big":"big"},"resources":{"blob":"shared/blob"}}}},
		"a":{"inputs":["plan","many","docs"]},"b":{"inputs":["plan","big","blob"]}}'
	mkdir -p "$T/p/shared/docs" "$T/p/shared/blob" "$T/many"
	i=0; while [ $i -lt 40 ]; do echo "doc $i" >"$T/p/shared/docs/d$i"; i=$((i + 1)); done
	i=0; while [ $i -lt 30 ]; do echo "in $i" >"$T/many/m$i"; i=$((i + 1)); done
	head -c 5242880 /dev/zero | tr '\0' b >"$T/p/shared/blob/five"
	head -c 4194304 /dev/zero | tr '\0' a >"$T/big"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
	EXTRA="--input many=$T/many --input big=$T/big" run '{"root":{"write":{"out.txt":"root"},
		"calls":[[["x",{"plan":"plan"}]],["x"],[["y",{"plan":"plan"}]],["y"]]},"a":{"write":{"out.txt":"ran"}},"b":{"write":{"out.txt":"ran"}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	res '[.calls[] | .outcome]' | jq -e '. == ["succeeded", "failed", "succeeded", "failed"]' >/dev/null || fail "outcomes"
	res '.calls[1].error' | grep -q "resource tree docs (shared/docs): with the borrowed inputs, more than 64 files or 8 MiB; refused" ||
		fail "files: $(res '.calls[1].error')"
	res '.calls[3].error' | grep -q "resource tree blob (shared/blob): with the borrowed inputs, more than 64 files or 8 MiB; refused" ||
		fail "bytes: $(res '.calls[3].error')"
	check '[.children[] | .status] == ["succeeded", "failed", "succeeded", "failed"]'
	check '[.children[1, 3] | has("termination")] == [false, false]' "a refused child ran"
	nothing_left
}

case_s177_equal_content_not_shared() {
	# S177 (decision 331): "equal content alone does not authenticate a
	# shared view". A child gets no view shared with another: every read
	# byte is its own copy, counted under the one 64-file / 8 MiB cap by
	# what the read map and the Plan name, never by content. Here a resource
	# tree (Package/0) is byte for byte the caller's input "big" (4.5 MiB
	# each): alone it fits; with "big" borrowed too the two equal views are
	# 9 MiB, not one shared 4.5 MiB view, and the call is refused before
	# the child starts, with one line.
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	sh "$MK" "$T/p" '{"root":{"inputs":["plan","big"],"bindings":{
		"x":{"flow":"a","read":{"plan":"plan","big":"big"},"resources":{"blob":"shared/blob"}}}},
		"a":{"inputs":["plan","big","blob"]}}'
	mkdir -p "$T/p/shared/blob"
	head -c 4718592 /dev/zero | tr '\0' b >"$T/big"
	cp "$T/big" "$T/p/shared/blob/big"
	cmp "$T/big" "$T/p/shared/blob/big" || fail "not equal content"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
	EXTRA="--input big=$T/big" run '{"root":{"write":{"out.txt":"root"},"calls":[[["x",{"plan":"plan"}]],["x"]]},"a":{"write":{"out.txt":"ran"}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	res '[.calls[] | .outcome]' | jq -e '. == ["succeeded", "failed"]' >/dev/null || fail "outcomes: equal content was taken as one shared view"
	[ "$(res '.calls[1].error' | wc -l)" -eq 1 ] && res '.calls[1].error' |
		grep -q "resource tree blob (shared/blob): with the borrowed inputs, more than 64 files or 8 MiB; refused" ||
		fail "the refusal: $(res '.calls[1].error')"
	check '[.children[] | .status] == ["succeeded", "failed"]'
	check '.children[1] | has("termination") | not' "the refused child ran"
	nothing_left
}

case_child_output_xattr_refused() {
	# R-S06 (audit #171, decision 122): a child's final validation refuses
	# excess metadata as a root's does: a POSIX ACL the child set on its
	# output fails the call with one line, nothing of it imported; the
	# caller goes on.
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{}}'
	run '{"root":{"write":{"out.txt":"root"},"calls":[["x"]]},"a":{"write":{"out.txt":"child"},"acl":"out.txt"}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	[ "$(res '.calls[0].ok')" = false ] && [ "$(res '.calls[0].outcome')" = failed ] || fail "the call: $(res '.calls[0]')"
	res '.calls[0].error' | grep -q "child output refused: child output out.txt: has the extended attribute system.posix_acl_access (excess metadata); refused" ||
		fail "the call's error: $(res '.calls[0].error')"
	[ ! -e "$T/pkt/files/from-x.json" ] || fail "the child's result was imported"
	nothing_left
}

# Issue 32, R-P12: a child Flow (jig.call, the flow-bound kind) runs with
# its Plan scope: it reads its argv, environment, mounts and descriptors
# (tests/flow/inside.js) and they are its scope's in the Plan; the record's
# child node names the Plan's policy digest (which covers the limits).
case_child_scope_is_the_plan() {
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{}}'
	(cd "$T/p" && "$JIG" review --json) | jq '.plan.flows[] | select(.name == "a") | .scope' >"$T/scope.json"
	run '{"root":{"calls":[["x"]]},"a":{"inside":true}}'
	[ "$rc" -eq 0 ] || fail "exit $rc"
	jq .inside "$T/pkt/files/from-x.json" >"$T/inside.json"
	[ "$(jq -r .permission_plan.scope "$T/scope.json")" != null ] || fail "no scope of a in the Plan"
	scope_is_plan "$T/scope.json" "$T/inside.json" || fail "the child's scope is not its Plan's"
	[ "$(rec '.children[0].scope_policy_sha256')" = "$(jq -r .policy_sha256 "$T/scope.json")" ] || fail "the child's policy digest is not the Plan's"
}

# Issue 33, R-S05 (audit #164, #165, #172, #173), decision 115: a hostile
# caller cannot read an import stage before its import. The coordinator is
# stopped (fault point "import stage") once the child's accepted file is
# streamed into the caller's hidden stage and before the no-replace rename;
# for 3 s the caller's hunter thread (tests/flow/binding/hunt.js) walks
# /output/.. and the whole tree, the old /stage, /proc/self/mountinfo, and
# every /proc/*/fd, root and cwd, looking for the file's bytes or any
# "stage". It finds nothing, while from outside the stage is seen through
# the coordinator's descriptor of the caller's tmpfs root, and no stage is
# in the run directory. Then the import happens: the file is in the
# caller's output. The caller's mount table has /output as the "/pub"
# subtree of a 16 MiB tmpfs (R-S08: the output tmpfs size as stated), and
# the caller still has no capability, no_new_privs and a seccomp filter.
# No copy of the child's output is in the run directory (R-S08 #180).
case_s05_stage_hidden_from_caller() {
	project '{"root":{"outputs":["result.json","from-x.bin"],"bindings":{"x":{"flow":"a","write":{"big.bin":"from-x.bin"}}}},"a":{"outputs":["result.json","big.bin"]}}'
	marker=FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF
	# (the plan names "F", not the marker: /input/plan is the caller's to read)
	printf '%s\n' '{"root":{"calls":[["x"]],"hunt":"F"},"a":{"fill":{"big.bin":1048576}}}' >"$T/plan"
	rm -f "$T/fault.log"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	(cd "$T/p" && exec env JIG_FAULT_STOP="import stage" JIG_FAULT_LOG="$T/fault.log" "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	BG="$BG $outer"
	i=0
	until grep -q "^import stage " "$T/fault.log" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 1500 ] && kill -0 "$outer" 2>/dev/null || { cat "$T/out" "$T/err"; fail "the import stage was never reached"; }
		sleep 0.1
	done
	stopped=$(sed -n 's/^import stage //p' "$T/fault.log" | head -1)
	i=0; until [ "$(ps -o stat= -p "$stopped" | cut -c1)" = T ]; do i=$((i + 1)); [ "$i" -lt 500 ] || fail "not stopped"; sleep 0.01; done
	# From outside, through the coordinator's descriptor of the caller's
	# output root: the stage with the child's file, beside pub.
	seen=""
	for f in /proc/"$stopped"/fd/*; do
		[ -d "$f/stage/1" ] && [ -d "$f/pub" ] && seen=$(ls "$f/stage/1") &&
			printf '%s' "$marker" | cmp -s -n 64 "$f/stage/1/0" - && break
	done
	echo "the stage from outside: [$seen]"
	[ "$seen" = 0 ] || fail "the hidden stage was not seen through the coordinator's descriptor"
	! ls -d /tmp/jig-run-*/stage 2>/dev/null | grep -q . || fail "a stage is in the run directory"
	# R-S08 #180 (decision 282): the child's output was validated where it
	# is, never copied into the run directory, outside the six output
	# backings' 96 MiB: no file there holds its 1 MiB.
	big=$(find /tmp/jig-run-* -type f -size +512k 2>/dev/null || true)
	[ -z "$big" ] || fail "the child's output was copied into the run directory: $big"
	sleep 3
	kill -CONT "$stopped"
	set +e; wait "$outer"; rc=$?; set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the Run did not succeed"
	res '.hunt | {rounds, found, stages, mounts, status}'
	res '.calls[0].ok' | grep -qx true || fail "the call: $(res '.calls[0]')"
	# (the imported file itself, at its destination, is the caller's once
	# the rename is done: the hunter runs until the call's answer)
	res '[.hunt.found[] | select(test("/output/from-x.bin$") | not)] == [] and .hunt.stages == []' | grep -qx true ||
		fail "the caller reached the stage: $(res .hunt)"
	[ "$(res .hunt.rounds)" -ge 10 ] || fail "the hunter ran only $(res .hunt.rounds) rounds"
	res '.hunt.status | .CapEff == "0000000000000000" and .CapPrm == "0000000000000000" and .CapBnd == "0000000000000000"
		and .CapAmb == "0000000000000000" and .NoNewPrivs == "1" and .Seccomp == "2"' | grep -qx true ||
		fail "the caller's containment: $(res .hunt.status)"
	# The caller's /output: the "/pub" subtree of a 16 MiB tmpfs, on top.
	res '.hunt.mounts | map(select(split(" ")[4] == "/output")) | last' | grep -q ' /pub /output rw,.* - tmpfs [^ ]* rw,.*size=16384k' ||
		fail "the caller's /output is not the 16 MiB tmpfs's /pub: $(res .hunt.mounts)"
	[ "$(wc -c <"$T/pkt/files/from-x.bin")" -eq 1048576 ] || fail "the import did not happen"
	check '.children[0].staged == {"from-x.bin": "/output/from-x.bin"}'
	nothing_left
}

# Issue 33, R-S05, R-S08 (audit #166, #167, #179, #180), decision 115: a
# stage is written on the caller's own 16 MiB output tmpfs, so it counts
# against that volume: with 10 MiB of the caller's own, an accepted 8 MiB
# child output cannot be staged (the call fails with one line, nothing is
# imported, the caller goes on); with 4 MiB of its own it is imported.
case_s05_stage_counts_against_caller_volume() {
	project '{"root":{"outputs":["result.json","own.bin","from-x.bin"],"bindings":{"x":{"flow":"a","write":{"big.bin":"from-x.bin"}}}},"a":{"outputs":["result.json","big.bin"]}}'
	run '{"root":{"fill":{"own.bin":10485760},"calls":[["x"]]},"a":{"fill":{"big.bin":8388608}}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	[ "$(res '.calls[0].ok')" = false ] && [ "$(res '.calls[0].outcome')" = failed ] || fail "the call: $(res '.calls[0]')"
	res '.calls[0].error' | grep -q "import stage 0: write: No space left on device" || fail "the call's error: $(res '.calls[0].error')"
	[ ! -e "$T/pkt/files/from-x.bin" ] || fail "something was imported"
	[ "$(wc -c <"$T/pkt/files/own.bin")" -eq 10485760 ] || fail "the caller's own file changed"
	check '.children[0].status == "failed" and .children[0].cleanup_confirmed and .children[0].staged == {}'
	run '{"root":{"fill":{"own.bin":4194304},"calls":[["x"]]},"a":{"fill":{"big.bin":8388608}}}'
	[ "$rc" -eq 0 ] && [ "$(res '.calls[0].ok')" = true ] || fail "the import that fits: $(res '.calls[0]')"
	[ "$(wc -c <"$T/pkt/files/from-x.bin")" -eq 8388608 ] || fail "the 8 MiB import"
	nothing_left
}

# Issue 33, R-S05 (#173): the import never replaces a file of the caller's:
# a caller that wrote the mapped path itself gets the call failed with one
# line and keeps its own file.
case_s05_import_never_replaces() {
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{}}'
	run '{"root":{"write":{"from-x.json":"MINE"},"calls":[["x"]]},"a":{}}'
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on"
	res '.calls[0].error' | grep -q "import into /output/from-x.json: File exists" || fail "the call: $(res '.calls[0]')"
	[ "$(cat "$T/pkt/files/from-x.json")" = MINE ] || fail "the caller's file was replaced"
	nothing_left
}

# Issue 47, R-S05: an import is all or nothing. The write map brings
# three files; the third rename fails (test fault "third import rename"):
# the two renamed before it are taken back, none of the three is in the
# caller's /output, the call fails saying so, and the caller goes on.
case_s05_import_all_or_nothing() {
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json","out.txt":"from-x.txt","from-y.txt":"from-y.txt"}}}},"a":{}}'
	EXTRA= run '{"root":{"calls":[["x"]]},"a":{"write":{"out.txt":"o","from-y.txt":"y"}}}' &&
		[ "$rc" -eq 0 ] && [ -f "$T/pkt/files/from-x.txt" ] && [ -f "$T/pkt/files/from-y.txt" ] || fail "without the fault, the import: $(ls "$T/pkt/files" 2>&1)"
	printf '%s\n' '{"root":{"calls":[["x"]]},"a":{"write":{"out.txt":"o","from-y.txt":"y"}}}' >"$T/plan"
	chmod -R u+w "$T/pkt" && rm -rf "$T/pkt"
	set +e
	(cd "$T/p" && JIG_FAULT_FAIL="third import rename" "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] && [ "$(rec .status)" = succeeded ] || fail "the caller did not go on (exit $rc)"
	res '.calls[0].error' | grep -q "import into /output/.*; the files imported before it were taken back: nothing was imported" || fail "the call: $(res '.calls[0]')"
	for f in from-x.json from-x.txt from-y.txt; do
		[ ! -e "$T/pkt/files/$f" ] || fail "$f was imported by a failed import"
	done
	nothing_left
}

# Issue 47, R-S05 (#175), decision 281; seed 000: "unconfirmed copy,
# commit or descriptor cleanup ends the caller and never releases its
# destination for retry". The caller's import stage is left in place
# (test fault "stage cleanup": its removal not confirmed): jig ends the
# caller, which is never answered and never resumes (its second call, y,
# is never made); the Run fails with the cleanup named on jig run's first
# line, not blamed on the Flow; nothing is published; the child's node
# keeps its reservation and says its cleanup was not confirmed.
case_s05_stage_cleanup_ends_caller() {
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}},"y":{"flow":"a"}}},"a":{}}'
	printf '%s\n' '{"root":{"calls":[["x"],["y"]],"write":{"out.txt":"root"}}}' >"$T/plan"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	(cd "$T/p" && JIG_FAULT_FAIL="stage cleanup" "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -ne 0 ] || fail "the Run succeeded: the caller went on"
	head -n 1 "$T/err" | grep -q "cleanup was not confirmed.*the import stage of child Flow a (via x) in the caller's output could not be removed; jig ended the caller, which never resumes" ||
		fail "jig run's first line: $(head -n 1 "$T/err")"
	! head -n 1 "$T/err" | grep -q "Run/0" || fail "blamed on the Flow's protocol"
	[ "$(rec .status)" = failed ] || fail "status $(rec .status)"
	check '.children | length == 1' "the caller resumed: its second call was made"
	check '.children[0] | .binding == "x" and .cleanup_confirmed == false and .reservation_released == false' "the child's node"
	[ ! -e "$T/pkt/files" ] || [ -z "$(ls -A "$T/pkt/files")" ] || fail "files were published: $(ls "$T/pkt/files")"
	nothing_left
}

# Issue 33, R-S05, decision 115: when the supervisor cannot mount a
# caller's output (test fault "output mount"), the launcher refuses and
# the caller's Flow never starts: one line, nothing published, nothing
# left.
case_s05_output_not_mounted_refused() {
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{}}'
	printf '%s\n' '{"root":{"calls":[["x"]]}}' >"$T/plan"
	chmod -R u+w "$T/pkt" 2>/dev/null || true
	rm -rf "$T/pkt"
	set +e
	(cd "$T/p" && JIG_FAULT_FAIL="output mount" "$JIG" run root --output "$T/pkt" --input plan="$T/plan" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -ne 0 ] || fail "the Run succeeded"
	grep -q "the scope's launcher refused to start the payload: output: its tmpfs was not mounted" "$T/err" || fail "no line says why"
	[ ! -e "$T/pkt/files/result.json" ] || fail "the Flow ran"
	nothing_left
}

case_progress_terminal() {
	# Issue 35: jig run on a pseudo-terminal (script(1)) shows what it is
	# doing on stderr: the admission check, the package, the launch, each
	# child and each effect (the child's Project Command) as it starts and ends, then
	# the collection; each status erased before the next, the command's own
	# last line on an erased row. With --json on a terminal, nothing of it
	# (a refused second Run: cheap, and refused after progress would start).
	# (stderr not a terminal: progress.review_not_terminal, and every case
	# here that counts the lines of jig run's stderr.)
	project '{"root":{"bindings":{"x":{"flow":"a","write":{"result.json":"from-x.json"}}}},"a":{"commands":true}}'
	printf '%s\n' '{"root":{"calls":[["x"]]},"a":{"command":true}}' >"$T/plan"
	script -qec "cd $T/p && $JIG run root --output $T/pkt --input plan=$T/plan --timeout 120s" /dev/null </dev/null >"$T/tty" 2>&1 || fail "jig run failed: $(cat "$T/tty")"
	tr '\r' '\n' <"$T/tty" | sed 's/\x1b\[K/<K>/g' >"$T/rows"
	cat "$T/rows"
	p='^<K>jig: \[ *[0-9]*\.[0-9]s\] '
	for s in "flow root: checking the project against its admitted Plan" "flow root: admitted; preparing its package and inputs" \
		"flow root: captured its inputs: 1 files, [0-9]* B" "flow root: launching its scope" "flow root: running" \
		"flow a: command run \.\.\." "flow a: command run: exited ([0-9]*\.[0-9]s)" \
		"flow root: child a (binding x) starting" "flow root: child a (binding x): succeeded ([0-9]*\.[0-9]s)" \
		"flow root: ended (exited); collecting and publishing"; do
		grep -q "$p$s\$" "$T/rows" || fail "no progress \"$s\""
	done
	grep -q "^<K>jig: flow root succeeded; packet $T/pkt\$" "$T/rows" || fail "the last line is not on an erased row"
	[ "$(jq -r .status "$T/pkt/record.json")" = succeeded ] || fail "the Run did not succeed"
	# --json on a terminal: refused after the admission check (the packet
	# exists), where a terminal without --json shows its status first.
	script -qec "cd $T/p && $JIG run root --output $T/pkt --input plan=$T/plan --json" /dev/null </dev/null >"$T/tty" 2>&1 && fail "a second Run onto the packet"
	! grep -q "$(printf '\033')\|jig: \[" "$T/tty" || fail "progress with --json: $(cat "$T/tty")"
	tr -d '\r' <"$T/tty" | sed '/^jig: /d' | jq -e '.schema == "jig-error/1" and (.error | test("already exists"))' >/dev/null ||
		fail "--json on a terminal is not jig-error/1: $(cat "$T/tty")"
	nothing_left
}

case_child_outputs_read() {
	# Issue 46 item 3 (decision 272): the root of tests/flow/children reads
	# its child's counts.json through jig.call's result (read), type-checked
	# by init.child_outputs_typecheck; a path the call did not import throws,
	# naming what it did.
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	cp -r "$JIG_SOURCE/tests/flow/children" "$T/p"
	cp "$JIG_TEST_PREFIX/lib/jig/current/libexec/runtime/jig.d.ts" "$T/p/jig.d.ts"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out" 2>&1) || { cat "$T/review.out"; fail "review failed"; }
	printf 'one two three\nfour five\n' >"$T/text"
	set +e
	(cd "$T/p" && "$JIG" run digest --output "$T/pkt" --input text="$T/text" --timeout 120s) >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	set -e
	cat "$T/out" "$T/err"
	[ "$rc" -eq 0 ] || fail "the Run failed: exit $rc"
	cat "$T/pkt/files/summary.md"
	printf 'imported: counts.json\nwords: 5\nlines: 2\nother: jig.call count: "summary.md" is not an output this call imported; it imported counts.json\n' >"$T/want"
	cmp -s "$T/want" "$T/pkt/files/summary.md" || fail "the root did not read its child's output: $(cat "$T/pkt/files/summary.md")"
	nothing_left
}
"case_$1"
echo "PASS: $1"
