#!/bin/sh
# Checkpoints, the recovery-only coordinator and the fault matrix (issue 18;
# docs/reliability.md). Each case_* is one ctest (reliability.<case>) in the
# supported-host lane, run as the unprivileged user. The fault points are
# the test build's (host/util/fault.h): JIG_FAULT_STOP=STAGE stops the
# process that reaches STAGE, this script kills an owner from outside and
# resumes the rest, then checks what is left (nothing) and what was
# published (whole or nothing).
# Requirements: R-L05, R-L06, R-L08, R-C11, R-O01, R-O02, R-V01, R-V05 (see docs/requirements.md).
set -eu
. "${JIG_SOURCE:?}/tests/lib/store.sh"
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
CK="$JIG_SOURCE/tests/flow/checkpoint"
CALLER="$JIG_SOURCE/tests/flow/http"
HOSTILE="$JIG_SOURCE/tests/flow/hostile"
RECALL="$JIG_SOURCE/tests/flow/recall"

T=$(mktemp -d /tmp/jig-rel.XXXXXX)
PEERS=""
trap 'for p in $PEERS; do kill "$p" 2>/dev/null || true; done; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

project() { # project DIR: a private reviewed copy
	chmod -R u+w "$T/p" 2>/dev/null || true
	rm -rf "$T/p"
	cp -r "$1" "$T/p"
	(cd "$T/p" && "$JIG" review --yes >"$T/review.out") || { cat "$T/review.out"; fail "review failed"; }
}
rec() { jq -r ".$1" "$T/pkt/record.json"; }
clear_pkt() { chmod -R u+w "$T/pkt" 2>/dev/null || true; rm -rf "$T/pkt" "$T/fault.log"; }
# start FLOW MODE [ENV...]: jig run in the background; $outer, $coord.
start() {
	flow=$1 mode=$2; shift 2
	clear_pkt
	printf '%s\n' "$mode" >"$T/mode"
	(cd "$T/p" && exec env "$@" JIG_FAULT_LOG="$T/fault.log" "$JIG" run "$flow" --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null &
	outer=$!
	coord=""
}
coordinator() { # $coord once the outer command has forked it
	i=0; until coord=$(pgrep -P "$outer" -x jig); do i=$((i+1)); [ $i -lt 400 ] || fail "no coordinator"; sleep 0.02; done
}
stopped_at() { # stopped_at STAGE: waits for the fault point; $stopped is its pid
	i=0; until grep -q "^$1 " "$T/fault.log" 2>/dev/null; do
		i=$((i+1)); [ $i -lt 1500 ] || { cat "$T/err"; fail "stage $1 was not reached"; }; sleep 0.02; done
	stopped=$(sed -n "s/^$1 //p" "$T/fault.log" | head -1)
	i=0; until [ "$(ps -o stat= -p "$stopped" | cut -c1)" = T ]; do i=$((i+1)); [ $i -lt 500 ] || fail "not stopped"; sleep 0.01; done
}
gone() { # gone PID...: waits until they have all exited
	for p in "$@"; do
		i=0; while kill -0 "$p" 2>/dev/null; do i=$((i+1)); [ $i -lt 3000 ] || fail "pid $p did not end"; sleep 0.02; done
	done
}
finish() { # waits for the outer command (our child) and whatever was left running
	# A process that stops later at the same point (the recovery-only
	# coordinator publishing, say) is resumed: only the first is the fault.
	( while :; do
		for p in $(awk '{print $NF}' "$T/fault.log" 2>/dev/null); do kill -CONT "$p" 2>/dev/null || true; done
		sleep 0.05
	done ) &
	resumer=$!
	set +e; wait "$outer"; rc=$?; set -e
	gone ${coord:-} ${stopped:-}
	kill "$resumer"; wait "$resumer" 2>/dev/null || true
	echo "--- exit $rc"; cat "$T/out" "$T/err"
	[ -f "$T/pkt/record.json" ] && jq -c '{status, error, checkpoint, outputs: [.outputs[].path]}' "$T/pkt/record.json"
	return 0
}
# Nothing of the Run is left: no Flow or worker process, no cgroup, no run
# directory, no stage.
no_leftovers() {
	! pgrep -f /.jig/runtime/boot.js >/dev/null || fail "a Flow process survived"
	! pgrep -f /.jig/http-worker >/dev/null || fail "a worker survived"
	left=$(find /sys/fs/cgroup -name 'jig-[0-9]*' -type d 2>/dev/null)
	[ -z "$left" ] || fail "cgroups left: $left"
	[ -z "$(find /tmp -maxdepth 1 -name 'jig-run-*')" ] || fail "a run directory was left: $(find /tmp -maxdepth 1 -name 'jig-run-*')"
	! ls -a "$T" | grep -q '^\.jig-stage' || fail "a stage was left behind"
}
# The packet, if any, is whole: its files verify, and its checkpoint is
# the accepted aggregate it names (or there is none and it says save 0).
whole() {
	[ -e "$T/pkt" ] || return 0
	"$JIG" inspect "$T/pkt" >"$T/inspect" 2>&1 || { cat "$T/inspect"; fail "the packet does not verify"; }
	if [ -e "$T/pkt/checkpoint.json" ]; then
		[ "$(sha256sum <"$T/pkt/checkpoint.json" | cut -d' ' -f1)" = "$(rec checkpoint.sha256)" ] || fail "checkpoint digest"
		[ "$(jq .save "$T/pkt/checkpoint.json")" = "$(rec checkpoint.save)" ] || fail "checkpoint save"
	elif [ "$(rec checkpoint)" != null ]; then
		[ "$(rec checkpoint.progress)" = completed ] || [ "$(rec checkpoint.save)" = 0 ] || fail "a checkpoint is named but missing"
	fi
}
nothing() { [ ! -e "$T/pkt" ] || fail "a packet was published: $(cat "$T/pkt/record.json")"; }
status() { [ -e "$T/pkt" ] && [ "$(rec status)" = "$1" ] || fail "expected a packet with status $1"; }
saved() { [ "$(rec checkpoint.save)" = "$1" ] || fail "checkpoint save $(rec checkpoint.save), expected $1"; }
# wait_saves N: the outer command's run directory holds accepted save N.
wait_saves() {
	i=0; until [ "$(jq -r .save /tmp/jig-run-*/checkpoint.json 2>/dev/null)" = "$1" ]; do
		i=$((i+1)); [ $i -lt 1500 ] || fail "save $1 was not accepted"; sleep 0.02; done
}

# --- checkpoints ---------------------------------------------------------------------
case_checkpoint_cancelled() {
	# Two accepted saves, then SIGTERM: the second is published with a record
	# saying interrupted; the unfinished output is not.
	project "$CK"
	grep -q "checkpoint: up to 16 saves (one at a time) of <= 2097152 bytes" "$T/review.out" || fail "the Plan does not show the checkpoint"
	start saver twice-then-sleep
	coordinator; wait_saves 2
	kill -TERM "$outer"
	finish
	[ "$rc" -eq 1 ] || fail "exit $rc"
	status cancelled; saved 2; whole
	[ "$(rec checkpoint.progress)" = interrupted ] || fail "not interrupted"
	[ ! -e "$T/pkt/files/result.json" ] || fail "an unfinished output was published"
	jq -e '.files == {"b.md": "# é\n", "notes/a.txt": "two\n"} and .state == {"done": ["x"], "step": 2} and .format == "jig-checkpoint/1"' \
		"$T/pkt/checkpoint.json" >/dev/null || fail "checkpoint content: $(cat "$T/pkt/checkpoint.json")"
	jq -e '[.effects[] | select(.effect == "checkpoint") | .outcome] == ["accepted", "accepted"]' "$T/pkt/record.json" >/dev/null || fail "evidence"
	grep -q "saved 2 $(rec checkpoint.sha256)" "$T/pkt/record.json" || fail "the Flow was told another digest"
	no_leftovers
}
case_cancelled_without_pidfd() {
	# R-L05 (issue 32): with pidfd_open failing (JIG_FAULT_FAIL) the outer
	# command still relays SIGTERM and reaps the coordinator: cancelled,
	# the accepted save published whole, nothing left.
	project "$CK"
	start saver twice-then-sleep JIG_FAULT_FAIL=pidfd_open
	coordinator; wait_saves 2
	kill -TERM "$outer"
	finish
	[ "$rc" -eq 1 ] || fail "exit $rc"
	status cancelled; saved 2; whole
	no_leftovers
}
case_checkpoint_outcomes() {
	# Completion is distinct from interrupted progress; a failed Run after one
	# save publishes it; a Flow that does not declare checkpoint cannot save.
	project "$CK"
	start saver twice-then-exit; finish
	[ "$rc" -eq 0 ] && status succeeded || fail "exit $rc"
	[ "$(rec checkpoint.progress)" = completed ] && [ "$(rec checkpoint.saves)" = 2 ] || fail "completion"
	[ ! -e "$T/pkt/checkpoint.json" ] && [ -e "$T/pkt/files/result.json" ] || fail "completed packet"
	whole
	start saver once-then-fail; finish
	status failed; saved 1; whole
	[ "$(rec checkpoint.progress)" = interrupted ] || fail "not interrupted"
	clear_pkt
	set +e; (cd "$T/p" && "$JIG" run plain --output "$T/pkt") >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	status failed
	rec error | grep -q "Run/0: unknown or malformed operation" || fail "the undeclared checkpoint was not refused"
	[ "$(rec checkpoint)" = null ] && [ ! -e "$T/pkt/checkpoint.json" ] || fail "a checkpoint without the grant"
	no_leftovers
}
case_checkpoint_limits() {
	# Each cap at and over it: files, text, aggregate size, saves; one in
	# flight (the SDK's saves are taken one after the other).
	project "$CK"
	start saver limits; finish
	[ "$rc" -eq 0 ] && status succeeded || fail "exit $rc"
	r="$T/pkt/files/result.json"; cat "$r"
	for ok in files_at_cap text_at_cap size_at_cap save_16; do jq -e ".$ok.ok" "$r" >/dev/null || fail "$ok refused"; done
	jq -e '.files_over_cap.error | test("more than 64 files")' "$r" >/dev/null || fail files_over_cap
	jq -e '.text_over_cap.error | test("1048577 bytes; at most 1048576")' "$r" >/dev/null || fail text_over_cap
	jq -e '.size_at_cap.bytes > 2097152' "$r" >/dev/null || fail "size_at_cap stored size"
	jq -e '.size_over_cap.error | test("2097153 bytes of canonical JSON; at most 2097152")' "$r" >/dev/null || fail size_over_cap
	jq -e '.bad_path.error | test("normalised relative path")' "$r" >/dev/null || fail bad_path
	jq -e '.not_text.error | test("must be text")' "$r" >/dev/null || fail not_text
	jq -e '.in_flight == {"first": 9, "second": 10}' "$r" >/dev/null || fail in_flight
	jq -e '.save_16.save == 16 and (.save_17.error | test("more than 16 saves"))' "$r" >/dev/null || fail saves
	[ "$(rec checkpoint.saves)" = 17 ] || fail "saves counted"
	no_leftovers
}
case_checkpoint_one_in_flight() {
	# R-O01 (#213): one save in flight, kept by the host, not only the SDK.
	# The Flow writes three raw saves to Run/0 at once: the first is
	# accepted, the other two refused with the reason, the Run goes on and
	# a later save (after its reply) is accepted as save 2. A Run that then
	# fails publishes the first raw save, never a refused one.
	project "$CK"
	start saver raw-overlap; finish
	[ "$rc" -eq 0 ] && status succeeded || fail "exit $rc"
	r="$T/pkt/files/result.json"; cat "$r"
	jq -e '.replies[0].ok and .replies[0].save == 1' "$r" >/dev/null || fail "the first raw save was not accepted"
	jq -e '[.replies[1,2] | .ok == false and (.error | test("a second save was sent while one was in flight; jig takes one checkpoint save at a time"))] == [true, true]' \
		"$r" >/dev/null || fail "the overlapping saves were not refused"
	jq -e '.after == 2' "$r" >/dev/null || fail "the save after the replies"
	jq -e '[.effects[] | select(.effect == "checkpoint") | .outcome] == ["accepted", "refused", "refused", "accepted"]' "$T/pkt/record.json" >/dev/null || fail "evidence"
	[ "$(rec checkpoint.saves)" = 2 ] || fail "saves counted: $(rec checkpoint.saves)"
	"$JIG" inspect "$T/pkt" >"$T/inspect"
	grep -q "^  checkpoint save 1 accepted, [0-9]* bytes$" "$T/inspect" && grep -q "^  checkpoint save 2 accepted" "$T/inspect" &&
		[ "$(grep -c "^  checkpoint refused: a second save was sent while one was in flight" "$T/inspect")" -eq 2 ] ||
		{ cat "$T/inspect"; fail "jig inspect does not show the saves and the refusals"; }
	start saver raw-overlap-then-fail; finish
	status failed; saved 1; whole
	jq -e '.state == {"raw": 1}' "$T/pkt/checkpoint.json" >/dev/null || fail "published: $(cat "$T/pkt/checkpoint.json")"
	no_leftovers
}

case_verification_fast_same_checks() {
	# R-V01, R-V05 (#122, #123): the verification mode governs only how the
	# installed files' digests are obtained. Under fast (JIG_VERIFICATION
	# and --verification): the Run's limits are strict's (the same scope
	# policy digest); a tampered packet is refused by jig inspect; a
	# tampered package blob in the project's store is refused before
	# anything runs; cancellation, recovery after coordinator loss and
	# cleanup are those of the other modes.
	project "$CK"
	start saver twice-then-exit JIG_VERIFICATION=strict; finish
	status succeeded; [ "$(rec verification.mode)" = strict ] || fail "not strict"
	policy=$(rec scope.policy_sha256)
	start saver twice-then-exit JIG_VERIFICATION=fast; finish
	status succeeded; [ "$(rec verification.mode)" = fast ] || fail "not fast"
	[ "$(rec scope.policy_sha256)" = "$policy" ] || fail "the scope's policy (its limits) differs under fast"
	chmod -R u+w "$T/pkt"
	echo extra >>"$T/pkt/files/result.json"
	set +e; "$JIG" inspect "$T/pkt" --verification fast >/dev/null 2>"$T/err"; r=$?; set -e
	cat "$T/err"
	[ "$r" -eq 4 ] && grep -q "differs from the record" "$T/err" || fail "fast: a tampered packet was accepted (exit $r)"
	pkg=$(rec package_sha256)
	sha=$(jq -r '.files[] | select(.path | endswith("main.ts")) | .sha256' "$T/p/.jig/store/packages/$pkg.json")
	blob_write "$T/p/.jig/store" "$sha" 2 X || fail "no blob $sha"
	for how in "--verification fast" "JIG_VERIFICATION=fast"; do
		clear_pkt
		set +e
		case $how in
		--*) (cd "$T/p" && "$JIG" run saver --input mode="$T/mode" --output "$T/pkt" --verification fast) >"$T/out" 2>"$T/err" </dev/null ;;
		*) (cd "$T/p" && env JIG_VERIFICATION=fast "$JIG" run saver --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null ;;
		esac
		r=$?; set -e
		cat "$T/err"
		[ "$r" -eq 4 ] && grep -q "store: blob $sha was altered" "$T/err" || fail "$how: a tampered store blob was not refused (exit $r)"
		nothing; no_leftovers
	done
	project "$CK" # a fresh store
	start saver twice-then-sleep JIG_VERIFICATION=fast
	coordinator; wait_saves 2
	kill -TERM "$outer"
	finish
	status cancelled; saved 2; whole; no_leftovers
	start saver twice-then-sleep JIG_VERIFICATION=fast
	coordinator; wait_saves 2
	kill -KILL "$coord"
	finish
	lost_interrupted 2; whole
}

# --- the recovery-only coordinator ------------------------------------------------------
case_checkpoint_recovered() {
	# The coordinator is SIGKILLed after two saves: the outer command fences,
	# then one recovery-only coordinator publishes save 2 and the record.
	project "$CK"
	start saver twice-then-sleep
	coordinator; wait_saves 2
	kill -KILL "$coord"
	finish
	[ "$rc" -eq 1 ] || fail "exit $rc"
	grep -q "coordinator (pid $coord) was killed by signal 9 before it finished; its scope was fenced.*a recovery-only coordinator published its record (interrupted) and checkpoint save 2" "$T/err" || fail "no clear report"
	status interrupted; saved 2; whole
	[ "$(rec termination.outcome)" = coordinator_lost ] && [ "$(rec termination.cleanup_confirmed)" = true ] || fail "termination"
	[ "$(rec recovery.coordinator_pid)" = "$coord" ] && [ "$(rec recovery.project_ino)" = "$(stat -c %i "$T/p")" ] || fail "binding"
	[ -z "$(ls -A "$T/pkt/files")" ] || fail "output files were published"
	# R-S07 (decision 120): the recovery-only coordinator's packet is owner-only too.
	[ -z "$(find "$T/pkt" \( -type f ! -perm 400 \) -o \( -type d ! -perm 500 \))" ] ||
		fail "the recovered packet is not owner-only: $(find "$T/pkt" -printf '%m %p\n')"
	no_leftovers
}
case_checkpoint_unconfirmed() {
	# Recovery that cannot confirm the cgroup cleanup publishes nothing and
	# says so: the harness holds a process of its own in a cgroup it made
	# inside the scope's, which the fence kills but cannot remove.
	project "$CK"
	start saver twice-then-sleep
	coordinator; wait_saves 2
	leaf=$(find /sys/fs/cgroup -path "*/jig-$coord-*/*" -maxdepth 6 -name cgroup.procs | grep -v "/jig-$coord-[^/]*/cgroup.procs" | head -1)
	leaf=${leaf%/cgroup.procs}
	[ -d "$leaf" ] || fail "no scope cgroup"
	mkdir "$leaf/held"
	sleep 600 & held=$!
	echo "$held" >"$leaf/held/cgroup.procs" || fail "cannot hold a process"
	kill -KILL "$coord"
	finish
	gone "$held"
	[ "$rc" -eq 1 ] || fail "exit $rc"
	grep -q "nothing was published; cgroup cleanup NOT confirmed" "$T/err" || fail "the failure was not reported"
	! grep -q "fenced and its run directory and stage removed" "$T/err" || fail "zero residue claimed"
	nothing
	rmdir "$leaf/held" "$leaf" "${leaf%/*}"
	no_leftovers
}

# --- the fault matrix (docs/reliability.md) ------------------------------------------------------
# kill_at STAGE OWNER FLOW MODE: stops the Run at STAGE, SIGKILLs OWNER
# (coordinator: the stopped process; outer: the outer command, then the
# stopped one is resumed), waits for everything to end.
kill_at() {
	start "$3" "$4" JIG_FAULT_STOP="$1"
	coordinator; stopped_at "$1"
	echo "=== $1: SIGKILL $2"
	case $2 in
	coordinator) kill -KILL "$stopped" ;;
	outer) kill -KILL "$outer"; kill -CONT "$stopped" ;;
	esac
	finish
	whole
}
lost_nothing() { # the coordinator died before the Run was bound
	grep -q "killed by signal 9 before it finished; nothing was published; its scope was fenced" "$T/err" || fail "no clear report"
	nothing; no_leftovers
}
lost_interrupted() { # lost after binding: recovery published save N
	grep -q "a recovery-only coordinator published its record (interrupted) and checkpoint save $1" "$T/err" || fail "no recovery report"
	status interrupted; rec checkpoint.save | grep -qx "$1" || fail "save $(rec checkpoint.save), expected $1"; no_leftovers
}
outer_cancelled() { # the orphaned coordinator cancelled and cleaned up
	status cancelled; no_leftovers
}
case_fault_admitted() { fault_before_launch admitted; }
case_fault_capture() { fault_before_launch capture; }
fault_before_launch() {
	project "$CK"
	kill_at "$1" coordinator saver twice-then-exit; lost_nothing
	kill_at "$1" outer saver twice-then-exit; outer_cancelled; saved 0
}
case_fault_run0() {
	# At the first Run/0 message (the first save), before it is read.
	project "$CK"
	kill_at run0 coordinator saver twice-then-exit; lost_interrupted 0
	kill_at run0 outer saver twice-then-exit; outer_cancelled
}
case_fault_checkpoint_save() {
	# Between the bounded replacement and the rename: save 1 is not accepted.
	project "$CK"
	kill_at "checkpoint save" coordinator saver twice-then-exit; lost_interrupted 0
	[ ! -e "$T/pkt/checkpoint.json" ] || fail "an unaccepted checkpoint was published"
	kill_at "checkpoint save" outer saver twice-then-exit; outer_cancelled
}
case_fault_output_copy() { fault_publication "output copy"; }
case_fault_stage_rename() { fault_publication "stage rename"; }
fault_publication() {
	project "$CK"
	kill_at "$1" coordinator saver twice-then-exit; lost_interrupted 2
	[ -z "$(ls -A "$T/pkt/files")" ] || fail "$1: output files were published"
	# The outer command's loss does not stop a Run that is publishing.
	kill_at "$1" outer saver twice-then-exit; status succeeded; no_leftovers
}
case_fault_recovery() {
	project "$CK"
	for owner in recovery outer; do
		start saver twice-then-sleep JIG_FAULT_STOP=recovery
		coordinator; wait_saves 2
		kill -KILL "$coord"
		stopped_at recovery
		echo "=== recovery: SIGKILL $owner"
		case $owner in
		recovery) kill -KILL "$stopped" ;;
		outer) kill -KILL "$outer"; kill -CONT "$stopped" ;;
		esac
		finish; whole
		if [ $owner = recovery ]; then
			grep -q "the recovery-only coordinator published nothing: it was killed by signal 9" "$T/err" || fail "no report"
			nothing
		else
			status interrupted; saved 2 # the orphaned recovery coordinator finished
		fi
		no_leftovers
	done
}
peer() { # peer NAME PORT
	/usr/bin/python3 "$JIG_SOURCE/tests/http/peer.py" --port "$2" --portfile "$T/$1.port" --log "$T/$1.log" &
	PEERS="$PEERS $!"
	i=0; while [ ! -s "$T/$1.port" ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "peer $1 did not start"; sleep 0.05; done
	touch "$T/$1.log"
}
case_fault_http() {
	# During an HTTP request: the worker, the coordinator or the outer command.
	peer srv 18080
	project "$CALLER"
	for owner in worker coordinator outer; do
		: >"$T/srv.log"
		clear_pkt
		printf '[{"do":"http","route":"slow"}]\n' >"$T/steps"
		(cd "$T/p" && exec "$JIG" run caller --input steps="$T/steps" --output "$T/pkt") >"$T/out" 2>"$T/err" &
		outer=$!; stopped=""
		coordinator
		i=0; until grep -q "^GET /slow" "$T/srv.log"; do i=$((i+1)); [ $i -lt 400 ] || fail "the request was not made"; sleep 0.05; done
		echo "=== http: SIGKILL $owner"
		case $owner in
		worker) pkill -KILL -f /.jig/http-worker ;;
		coordinator) kill -KILL "$coord" ;;
		outer) kill -KILL "$outer" ;;
		esac
		finish; whole
		case $owner in
		worker) status succeeded; jq -e '.effects[0].outcome == "failed"' "$T/pkt/record.json" >/dev/null || fail "evidence" ;;
		coordinator) nothing ;;
		outer) status cancelled ;;
		esac
		no_leftovers
	done
}
case_recovery_never_retries() {
	# R-O02 (#217): the coordinator is lost while an HTTP request is in
	# flight (after one accepted save); the recovery-only coordinator
	# publishes save 1 and the record, and the loopback peer has seen
	# exactly one request, then and seconds after recovery finished.
	peer srv 18080
	project "$RECALL"
	start recall x
	coordinator
	i=0; until grep -q "^GET /slow" "$T/srv.log"; do i=$((i+1)); [ $i -lt 600 ] || { cat "$T/err"; fail "the request was not made"; }; sleep 0.05; done
	kill -KILL "$coord"
	finish
	[ "$rc" -eq 1 ] || fail "exit $rc"
	lost_interrupted 1
	[ "$(rec termination.outcome)" = coordinator_lost ] || fail "termination"
	[ -z "$(ls -A "$T/pkt/files")" ] || fail "output files were published"
	sleep 3
	n=$(grep -c "^GET /slow" "$T/srv.log")
	[ "$n" -eq 1 ] || fail "the peer saw $n requests: $(cat "$T/srv.log")"
}
case_fault_launched() {
	# After launch (the Flow running): the outer command (the coordinator:
	# flow.coordinator_killed).
	project "$HOSTILE"; printf 'sleep 60000\n' >"$T/mode"; clear_pkt
	(cd "$T/p" && exec "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" &
	outer=$!; stopped=""
	coordinator
	i=0; until pgrep -f /.jig/runtime/boot.js >/dev/null; do i=$((i+1)); [ $i -lt 400 ] || fail "the Flow did not start"; sleep 0.05; done
	kill -KILL "$outer"
	finish; whole; status cancelled; no_leftovers
}

# --- the supervisor's path, inside the sandbox module ------------------------------------------
# The module's own fault points (plugins/sandbox-linux/fault.h): "scope
# cgroup" (the scope's leaf made, nothing in it yet), "scope launched"
# (bwrap just born in it), "scope fence" (the payload ended, the scope not
# yet fenced). In jig run the supervisor is the coordinator's process
# (decision 24: the module runs in it), so killing it there is killing
# the coordinator mid-launch; jig scope run's supervisor is jig itself,
# with its reaper.
scope_killed_at() { # scope_killed_at STAGE PAYLOAD...: jig scope run, its supervisor SIGKILLed at STAGE
	stage=$1; shift
	jq -n --arg probe "$JIG_PROBE" '{format: "jig-scope-policy/1", scope: "probe",
	  binds: [{source: $probe, target: "/probe"}], tmpfs: [], symlinks: [], env: {}, cwd: "/", network: "none",
	  descriptors: [{source: 0, target: 0}, {source: 1, target: 1}, {source: 2, target: 2}],
	  limits: {memory_bytes: 134217728, tasks: 32, cpu_quota_us: 100000, wall_ms: 30000}}' >"$T/policy.json"
	rm -f "$T/fault.log"
	JIG_FAULT_STOP="$stage" JIG_FAULT_LOG="$T/fault.log" "$JIG" scope run "$T/policy.json" -- /probe "$@" >"$T/out" 2>&1 </dev/null &
	outer=$!; coord=""
	stopped_at "$stage"
	[ "$stopped" = "$outer" ] || fail "$stage: stopped $stopped, not the supervisor $outer"
	echo "=== jig scope run, $stage: SIGKILL the supervisor"
	kill -KILL "$stopped"
	set +e; wait "$outer"; set -e
	i=0; until grep -q "supervisor (pid $stopped) was lost; its scope was fenced and its cgroups removed" "$T/out"; do
		i=$((i+1)); [ $i -lt 300 ] || { cat "$T/out"; fail "$stage: no report from the reaper"; }; sleep 0.05; done
	i=0; while pgrep -x jig-reaper >/dev/null; do i=$((i+1)); [ $i -lt 300 ] || fail "the reaper did not end"; sleep 0.05; done
	! pgrep -f '/probe' >/dev/null || fail "$stage: the payload survived"
	no_leftovers
}
# One case a point (each stays within the lane's time), iterating the
# owners: jig run's supervisor (the coordinator's process), the outer
# command, jig scope run's supervisor.
case_fault_scope_cgroup() { fault_scope "scope cgroup"; }
case_fault_scope_launched() { fault_scope "scope launched"; }
fault_scope() { # before the Flow runs (bound already: the checkpoint is save 0)
	project "$CK"
	kill_at "$1" coordinator saver twice-then-exit; lost_interrupted 0
	# The resumed coordinator learns of the loss while the Flow starts:
	# cancelled, with whatever save was accepted by then, whole.
	kill_at "$1" outer saver twice-then-exit; outer_cancelled
	scope_killed_at "$1" sleep 60
}
case_fault_scope_fence() {
	# The Flow ended after two saves, its scope not yet fenced.
	project "$CK"
	kill_at "scope fence" coordinator saver twice-then-exit; lost_interrupted 2
	[ -z "$(ls -A "$T/pkt/files")" ] || fail "scope fence: output files were published"
	# The Flow had finished: the resumed coordinator publishes it (seen:
	# succeeded with its output), or cancels it; whole either way.
	kill_at "scope fence" outer saver twice-then-exit; no_leftovers
	case $(rec status) in succeeded | cancelled) ;; *) fail "scope fence, outer killed: $(rec status)" ;; esac
	scope_killed_at "scope fence" sleep 0
}

# --- issue 31: a scope's bwrap killed after the payload started ---------------------------
case_bwrap_killed_while_running() {
	# The Flow runs (its scope's launcher reported the start); its bwrap is
	# SIGKILLed: the Run fails as killed while running, never as "ended
	# before its payload started", and the packet verifies.
	project "$HOSTILE"; printf 'sleep 60000\n' >"$T/mode"; clear_pkt
	(cd "$T/p" && exec "$JIG" run hostile --input mode="$T/mode" --output "$T/pkt") >"$T/out" 2>"$T/err" &
	outer=$!; stopped=""
	coordinator
	i=0; until pgrep -f /.jig/runtime/boot.js >/dev/null; do i=$((i+1)); [ $i -lt 400 ] || fail "the Flow did not start"; sleep 0.05; done
	b=$(pgrep -P "$coord" -x bwrap) || fail "no bwrap under the coordinator"
	kill -KILL "$b"
	finish; whole; status failed
	[ "$(rec termination.payload_started)" = true ] || fail "termination.payload_started is $(rec termination.payload_started)"
	rec error | grep -q "the scope was killed while its payload ran (bwrap killed by signal 9)" || fail "error: $(rec error)"
	! grep -q "before its payload started" "$T/err" "$T/pkt/record.json" || fail "recorded as never started"
	grep -q "killed while its payload ran" "$T/err" || fail "the message does not say so"
	no_leftovers
}

# --- the abandoned-run sweep (issue 31) ------------------------------------------------
# The outer command and the coordinator SIGKILLed together (what a kill of
# the process group, the OOM killer or a power cut does): nothing of the
# Run is left to clean up after it, so the next jig run's sweep removes its
# cgroups, run directory and stage and says so; it never touches a live
# Run, and keeps (and names) what it cannot prove abandoned.
# together STAGE: jig run stopped at STAGE, then its outer command and
# coordinator SIGKILLed at once; $dead (its run directory), $dead_stage
# (the stage its lease names, if one was made) and $dead_cgroups (its
# run cgroups, drained) are what it left.
together() {
	start saver twice-then-exit JIG_FAULT_STOP="$1"
	coordinator; stopped_at "$1"
	dead=""
	for l in /tmp/jig-run-*/lease; do
		jq -e --argjson c "$coord" '.coordinator.pid == $c' "$l" >/dev/null 2>&1 && dead=${l%/lease}
	done
	[ -d "$dead" ] || fail "$1: no run directory whose lease names coordinator $coord"
	echo "=== $1: SIGKILL the outer command ($outer) and the coordinator ($coord) together"
	kill -KILL "$outer" "$coord"
	set +e; wait "$outer" 2>/dev/null; set -e
	gone "$coord"
	dead_stage=$(jq -r '.stage.path' "$dead/lease")
	[ -e "$dead_stage" ] || dead_stage=""
	dead_cgroups=$(find /sys/fs/cgroup -type d -name "jig-$coord-*" 2>/dev/null)
	for cg in $dead_cgroups; do # the payload dies with its supervisor
		i=0; until grep -qx 'populated 0' "$cg/cgroup.events"; do
			i=$((i+1)); [ $i -lt 1500 ] || fail "$1: $cg stays populated"; sleep 0.02; done
	done
	echo "left: $dead ${dead_stage:-(no stage)} ${dead_cgroups:-(no cgroup)}"
}
remember() { prev=$dead prev_stage=$dead_stage prev_cgroups=$dead_cgroups; }
# swept ERR: what the remembered dead Run left is gone, each said in ERR.
swept() {
	grep -qF "jig: removed the run directory of an abandoned Run: $prev (its outer command (pid" "$1" || { cat "$1"; fail "no report of $prev"; }
	[ ! -e "$prev" ] || fail "$prev is left"
	if [ -n "$prev_stage" ]; then
		grep -qF "jig: removed the publication stage of the abandoned Run $prev: $prev_stage" "$1" || { cat "$1"; fail "no report of $prev_stage"; }
		[ ! -e "$prev_stage" ] || fail "$prev_stage is left"
	fi
	for cg in $prev_cgroups; do
		grep -qF "jig: removed a cgroup of the abandoned Run $prev: $cg" "$1" || { cat "$1"; fail "no report of $cg"; }
		[ ! -e "$cg" ] || fail "$cg is left"
	done
}
sweep_now() { # a jig run refused before admission (an unknown Flow): its sweep only
	set +e; (cd "$T/p" && "$JIG" run no-such-flow --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q 'has no Flow "no-such-flow"' "$T/err" || fail "the sweeping run: exit $rc"
}
# sweep_chain STAGE...: each stage's Run killed together; the next Run
# (killed at the next stage, then one that succeeds) sweeps it.
sweep_chain() {
	project "$CK"
	prev=""
	for stage in "$@"; do
		together "$stage"
		[ -z "$prev" ] || swept "$T/err"
		case $stage in
		"scope cgroup" | "scope launched") [ -n "$dead_cgroups" ] || fail "$stage: no cgroup was left" ;;
		"output copy" | "stage rename") [ -n "$dead_stage" ] || fail "$stage: no stage was left" ;;
		esac
		remember
	done
	start saver twice-then-exit; finish
	[ "$rc" -eq 0 ] && status succeeded || fail "the Run after the sweep: exit $rc"
	swept "$T/err"
	no_leftovers
}
case_sweep_killed_launch() { sweep_chain admitted capture "scope cgroup" "scope launched" run0; }
case_sweep_killed_publish() { sweep_chain "checkpoint save" "scope fence" "output copy" "stage rename"; }
case_sweep_killed_ending() {
	# Decision 188 (models/recovery_sweep.pml, issue 37): the outer command
	# and the coordinator killed together as the coordinator removed its
	# run directory, between the lease's unlink and the rmdir (point `run
	# dir end`): the directory is empty and marked (01700), and the next
	# sweep removes it; the packet published before stays whole.
	project "$CK"
	start saver twice-then-exit JIG_FAULT_STOP="run dir end"
	coordinator; stopped_at "run dir end"
	[ "$stopped" = "$coord" ] || fail "not the coordinator stopped at run dir end: $stopped"
	dead=$(find /tmp -maxdepth 1 -name 'jig-run-*' -perm 1700)
	[ -d "$dead" ] && [ -z "$(ls -A "$dead")" ] || fail "no empty, marked run directory: $(ls -la /tmp/jig-run-* 2>&1)"
	kill -KILL "$outer" "$coord"
	set +e; wait "$outer" 2>/dev/null; set -e
	gone "$coord"
	status succeeded; whole
	sweep_now
	grep -qF "jig: removed the empty run directory $dead: its Run was killed as it removed it" "$T/err" || fail "no report of $dead"
	[ ! -e "$dead" ] || fail "$dead is left"
	no_leftovers
}
case_sweep_live_untouched() {
	# A live Run beside a dead one: the sweep removes the dead one's and
	# never touches the live one, which then finishes whole.
	project "$CK"
	printf 'twice-then-sleep\n' >"$T/modeA"
	(cd "$T/p" && exec "$JIG" run saver --input mode="$T/modeA" --output "$T/pktA") >"$T/outA" 2>"$T/errA" </dev/null &
	live_outer=$!
	wait_saves 2
	live=$(ls -d /tmp/jig-run-*)
	live_cgroups=$(find /sys/fs/cgroup -type d -name 'jig-[0-9]*')
	[ -n "$live_cgroups" ] || fail "the live Run has no cgroup"
	together "scope launched"; remember
	[ -n "$dead_cgroups" ] || fail "the dead Run left no cgroup"
	sweep_now
	swept "$T/err"
	! grep -qF "$live" "$T/err" || fail "the sweep named the live Run"
	[ -f "$live/lease" ] && [ -f "$live/checkpoint.json" ] || fail "the live Run's directory was touched"
	for cg in $live_cgroups; do [ -d "$cg" ] || fail "the live Run's cgroup $cg was removed"; done
	kill -TERM "$live_outer"
	set +e; wait "$live_outer"; rc=$?; set -e
	cat "$T/errA"
	[ "$(jq -r .status "$T/pktA/record.json")" = cancelled ] && [ "$(jq -r .checkpoint.save "$T/pktA/record.json")" = 2 ] ||
		fail "the live Run did not finish whole: $(cat "$T/pktA/record.json")"
	no_leftovers
}
case_sweep_kept() {
	# Checks that cannot be passed keep everything and say so: a process
	# in the dead Run's cgroup (seen by jig run), then its lease held by a
	# live process (seen by jig scope run); freed, jig review removes it.
	project "$CK"
	together "scope launched"; remember
	leaf=$(find $dead_cgroups -mindepth 1 -maxdepth 1 -type d | head -1)
	[ -d "$leaf" ] || fail "no scope cgroup left"
	sleep 600 & held=$!
	echo "$held" >"$leaf/cgroup.procs" || fail "cannot put a process in $leaf"
	sweep_now
	grep -qF "jig: kept the abandoned Run $dead: cgroup ${leaf%/*}: it is not empty (a process is still in it); remove it by hand" "$T/err" || fail "the kept cgroup was not said"
	! grep -q "jig: removed" "$T/err" || fail "something was removed"
	[ -d "$dead" ] && [ -d "$leaf" ] || fail "the kept Run was touched"
	kill "$held"; wait "$held" 2>/dev/null || true
	i=0; until grep -qx 'populated 0' "$leaf/cgroup.events"; do i=$((i+1)); [ $i -lt 500 ] || fail "$leaf stays populated"; sleep 0.02; done
	flock -o "$dead/lease" sleep 600 & holder=$!
	i=0; while flock -n "$dead/lease" true; do i=$((i+1)); [ $i -lt 500 ] || fail "the lease was not taken"; sleep 0.02; done
	# jig scope run sweeps too.
	jq -n --arg probe "$JIG_PROBE" '{format: "jig-scope-policy/1", scope: "probe",
	  binds: [{source: $probe, target: "/probe"}], tmpfs: [], symlinks: [], env: {}, cwd: "/", network: "none",
	  descriptors: [{source: 0, target: 0}, {source: 1, target: 1}, {source: 2, target: 2}],
	  limits: {memory_bytes: 134217728, tasks: 32, cpu_quota_us: 100000, wall_ms: 30000}}' >"$T/policy.json"
	"$JIG" scope run "$T/policy.json" -- /probe sleep 0 >"$T/out" 2>"$T/err" </dev/null || { cat "$T/err"; fail "jig scope run failed"; }
	cat "$T/err"
	grep -qF "jig: kept the abandoned Run $dead: its lease is held by a live process, but the owners it names are gone" "$T/err" || fail "the held lease was not said"
	! grep -q "jig: removed" "$T/err" || fail "something was removed"
	[ -d "$dead" ] && [ -d "$leaf" ] || fail "the kept Run was touched"
	pkill -P "$holder" sleep || true; kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true
	# jig review (it launches preparation scopes) sweeps too.
	(cd "$T/p" && "$JIG" review --yes) >"$T/out" 2>"$T/err" </dev/null || { cat "$T/out" "$T/err"; fail "review failed"; }
	cat "$T/err"
	swept "$T/err"
	no_leftovers
}

. "$JIG_SOURCE/tests/vm/case-main.sh"
