#!/bin/sh
# jig gc without a supported host (plain lane, issue 35): what it frees and
# keeps in the Package/0 store after several reviews of a changing project,
# --dry-run, the roots (the admitted Plan, retained Run records below
# .jig/runs), failing closed, and its lock against a concurrent review or
# run. Each case_* is one ctest (gc.<case>); jig runs as the unprivileged
# user. The run-after-gc check is the VM lane's (tests/flow/lock.sh).
set -eu
. "${JIG_SOURCE:?}/tests/lib/store.sh"
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-gc.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG_TEST_PREFIX/bin/jig" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
review() { (cd "$T/p" && jig review --yes "$@") >/dev/null; }
gc() { (cd "$T/p" && jig gc "$@"); }
# What the store holds: its manifests and records by name, its blobs
# (loose or packed) by digest.
store_files() { { find "$T/p/.jig/store" -type f ! -path '*/blobs/*' ! -path '*/packs/*'; blobs_all "$T/p/.jig/store"; } | sort; }
# three reviews, csv-report's main.ts changed before the second and the
# third: two superseded package manifests and two superseded blobs.
changing() {
	fresh
	review
	printf '// edit 1\n' >>"$T/p/csv-report/main.ts"
	review
	old=$(jq -r '.plan_sha256' "$T/p/.jig/admission.json")
	printf '// edit 2\n' >>"$T/p/csv-report/main.ts"
	review
	plan=$(jq -r '.plan_sha256' "$T/p/.jig/admission.json")
	[ "$old" != "$plan" ] || fail "the edit did not change the Plan"
}

case_frees_unreferenced() {
	# Issue 35 must-show 6 (the plain part): after several reviews of a
	# changing project, --dry-run says what gc would free and frees
	# nothing; gc frees exactly that (the superseded manifests and blobs),
	# keeps what the admitted Plan references (its packages, as the Plan
	# names them, and their blobs), an unchanged re-review still has the
	# admitted Plan's identity, and a second gc frees nothing.
	changing
	store_files >"$T/before"
	gc --dry-run --json | tee "$T/dry.json"
	jq -e --arg p "$plan" '.schema == "jig-gc/1" and .dry_run and .admitted_plan == $p and .roots == 1 and
		.freed.packages == 2 and .freed.blobs == 2 and .freed.bytes > 0 and .kept.packages == 3' "$T/dry.json" >/dev/null ||
		fail "the dry run's counts"
	store_files | cmp -s - "$T/before" || fail "--dry-run freed something"
	gc | tee "$T/gc.out"
	grep -q "^freed 4 files, [0-9]* bytes ([0-9.]* MiB): 2 package manifests, 2 blobs, 0 prepared records" "$T/gc.out" || fail "the text"
	grep -q "what the admitted Plan $plan" "$T/gc.out" || fail "the text does not name the admitted Plan"
	[ "$(store_files | wc -l)" -eq "$(($(wc -l <"$T/before") - 4))" ] || fail "not exactly four files freed"
	for sha in $(jq -r '.flows[].package.sha256' "$T/p/.jig/admitted/$plan.json"); do
		m="$T/p/.jig/store/packages/$sha.json"
		[ -f "$m" ] || fail "the admitted package $sha was freed"
		for b in $(jq -r '.files[].sha256' "$m"); do
			blob_cat "$T/p/.jig/store" "$b" | sha256sum | grep -q "^$b " || fail "a blob of the admitted package $sha was freed"
		done
	done
	(cd "$T/p" && jig review --json) | jq -e --arg p "$plan" '.plan_sha256 == $p' >/dev/null ||
		fail "the unchanged re-review after gc has another Plan"
	gc --json | jq -e '.freed.bytes == 0 and .freed.packages == 0 and .freed.blobs == 0' >/dev/null || fail "a second gc freed something"
}
case_keeps_retained_records() {
	# A retained Run record (.jig/runs) naming a superseded package
	# keeps it and its blobs; only the other one is freed.
	fresh
	review
	first=$(jq -r '.plan_sha256' "$T/p/.jig/admission.json")
	pkg=$(jq -r '.flows[] | select(.name == "csv-report") | .package.sha256' "$T/p/.jig/admitted/$first.json")
	printf '// edit 1\n' >>"$T/p/csv-report/main.ts"
	review
	printf '// edit 2\n' >>"$T/p/csv-report/main.ts"
	review
	runuser -u "$USER_NAME" -- sh -c "mkdir -p -m 700 '$T/p/.jig/runs' && printf '{\"plan_sha256\": \"%s\", \"package_sha256\": \"%s\"}' '$first' '$pkg' >'$T/p/.jig/runs/csv-report.json'"
	# A crashed capture's temporary blob is freed; a name the store does
	# not use is left alone.
	runuser -u "$USER_NAME" -- sh -c "echo x >'$T/p/.jig/store/blobs/.tmp-1-abc' && echo y >'$T/p/.jig/store/blobs/NOTES'"
	gc --json | tee "$T/gc.json"
	jq -e '.roots == 2 and .freed.packages == 1 and .freed.blobs == 1 and .freed.temporary == 1 and .kept.packages == 4' "$T/gc.json" >/dev/null ||
		fail "the retained record's package was not kept"
	[ -f "$T/p/.jig/store/packages/$pkg.json" ] || fail "the package a retained record names was freed"
	[ ! -e "$T/p/.jig/store/blobs/.tmp-1-abc" ] && [ -f "$T/p/.jig/store/blobs/NOTES" ] || fail "temporary or unknown files"
}
case_frees_withdrawn_caches() {
	# Decisions 195, 196: what an older jig kept in .jig and nothing reads
	# any more, the remembered admission and the capture cache, is freed
	# (as temporary files); --dry-run only counts them; the admitted Plan
	# is unchanged.
	fresh
	review
	plan=$(jq -r '.plan_sha256' "$T/p/.jig/admission.json")
	runuser -u "$USER_NAME" -- sh -c "echo '{}' >'$T/p/.jig/admission-memo.json' && mkdir '$T/p/.jig/capture' &&
		echo a >'$T/p/.jig/capture/$(printf '%064d' 1)' && echo b >'$T/p/.jig/capture/$(printf '%064d' 2)'"
	gc --dry-run --json | jq -e '.freed.temporary == 3' >/dev/null || fail "the dry run does not count them"
	[ -f "$T/p/.jig/admission-memo.json" ] && [ "$(ls "$T/p/.jig/capture" | wc -l)" -eq 2 ] || fail "the dry run freed something"
	gc --json | jq -e '.freed.temporary == 3' >/dev/null || fail "not freed"
	[ ! -e "$T/p/.jig/admission-memo.json" ] && [ ! -e "$T/p/.jig/capture" ] || fail "left: $(ls -A "$T/p/.jig")"
	[ "$(cd "$T/p" && jig review --json | jq -r .plan_sha256)" = "$plan" ] || fail "another Plan after gc"
}
case_nothing_admitted() {
	# Without an admission (reviews declined), nothing is referenced:
	# everything captured is freed, and the text says why.
	fresh
	(cd "$T/p" && jig review --json) >/dev/null
	n=$(store_files | wc -l)
	[ "$n" -gt 0 ] || fail "the review stored nothing"
	gc | tee "$T/gc.out"
	grep -q "^freed $n files" "$T/gc.out" && grep -q "no Plan is admitted" "$T/gc.out" || fail "the text"
	[ "$(store_files | wc -l)" -eq 0 ] || fail "something is left"
}
case_fails_closed() {
	# An admitted Plan that cannot be read, or a kept package manifest
	# that cannot: nothing is freed, one line, non-zero.
	changing
	store_files >"$T/before"
	chmod u+w "$T/p/.jig/admitted/$plan.json"
	printf 'not json' >"$T/p/.jig/admitted/$plan.json"
	set +e; gc >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "nothing was freed" "$T/err" || fail "exit $rc: not refused"
	store_files | cmp -s - "$T/before" || fail "something was freed"
	changing
	store_files >"$T/before"
	pkg=$(jq -r '.flows[] | select(.name == "csv-report") | .package.sha256' "$T/p/.jig/admitted/$plan.json")
	chmod u+w "$T/p/.jig/store/packages/$pkg.json"
	printf '{' >"$T/p/.jig/store/packages/$pkg.json"
	store_files >"$T/before"
	set +e; gc >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -ne 0 ] && grep -q "a kept package cannot be read, so nothing was freed" "$T/err" || fail "exit $rc: not refused"
	store_files | cmp -s - "$T/before" || fail "something was freed"
}
case_refused_while_in_use() {
	# Decision 166: while a review, run or lock has the project open (its
	# shared lock on .jig, held here by flock(1) as that command would),
	# gc frees nothing and says so; a review waits for no gc and works.
	changing
	store_files >"$T/before"
	set +e
	runuser -u "$USER_NAME" -- flock -s "$T/p/.jig" "$JIG_TEST_PREFIX/bin/jig" gc --project "$T/p" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc"
	grep -q "a review, run or lock of this project is in progress; nothing was freed" "$T/err" || fail "the message"
	store_files | cmp -s - "$T/before" || fail "something was freed"
	runuser -u "$USER_NAME" -- flock -s "$T/p/.jig" true || fail "the lock was left held"
	# A real holder: jig review waiting at its terminal prompt has the
	# project open (a pseudo-terminal from script(1), its input a FIFO the
	# test answers once gc was refused). The project is changed first (an
	# admitted one is "already admitted" and asks nothing, issue 44), by a
	# Flow left out of jig.json: nothing new for the store.
	cp "$T/p/jig.json" "$T/jig.json"
	jq 'del(.flows["service-check"])' "$T/jig.json" >"$T/p/jig.json"
	mkfifo "$T/answer"
	script -qec "cd $T/p && runuser -u $USER_NAME -- $JIG_TEST_PREFIX/bin/jig review" /dev/null <"$T/answer" >"$T/prompt" 2>&1 &
	pid=$!
	exec 3>"$T/answer"
	i=0
	until grep -q "Admit this Plan" "$T/prompt"; do
		i=$((i + 1)); [ "$i" -lt 300 ] || fail "no prompt: $(cat "$T/prompt")"; sleep 0.1
	done
	set +e; gc >"$T/out" 2>"$T/err"; rc=$?; set -e
	echo no >&3
	exec 3>&-
	wait "$pid" || true
	cp "$T/jig.json" "$T/p/jig.json"
	[ "$rc" -eq 1 ] && grep -q "in progress; nothing was freed" "$T/err" || fail "gc beside a review at its prompt: exit $rc: $(cat "$T/err")"
	store_files | cmp -s - "$T/before" || fail "something was freed beside the review"
	gc --json | jq -e '.freed.packages == 2' >/dev/null || fail "gc after the holders ended"
}
case_review_waits_for_gc() {
	# Decision 166, the other way round: a review started while gc holds
	# the project's lock exclusively waits in flock(2) (its system call
	# seen in /proc, no sleep-and-hope) and goes on, admitting, once gc has
	# freed what it frees and let go; nothing it needs was freed.
	changing
	printf '// edit 3\n' >>"$T/p/csv-report/main.ts"
	: >"$T/log"
	chmod 666 "$T/log"
	(cd "$T/p" && runuser -u "$USER_NAME" -- env JIG_FAULT_STOP=gc_locked JIG_FAULT_LOG="$T/log" \
		"$JIG_TEST_PREFIX/bin/jig" gc --json) >"$T/gc.json" 2>"$T/gc.err" &
	gcjob=$!
	i=0
	until grep -q '^gc_locked ' "$T/log"; do
		i=$((i + 1)); [ "$i" -lt 300 ] || fail "gc never took its lock: $(cat "$T/gc.err")"; sleep 0.1
	done
	gcpid=$(awk '{print $2}' "$T/log")
	(cd "$T/p" && jig review --yes --json) >"$T/review.json" 2>"$T/review.err" &
	rvjob=$!
	i=0 rv=
	while :; do
		rv=$(pgrep -u "$USER_NAME" -f "bin/jig review --yes --json" | head -n1)
		[ -n "$rv" ] && [ "$(cut -d' ' -f1 "/proc/$rv/syscall" 2>/dev/null)" = 73 ] && break
		i=$((i + 1)); [ "$i" -lt 300 ] || fail "the review did not wait in flock: $(cat "$T/review.err")"; sleep 0.1
	done
	kill -0 "$rvjob" || fail "the review ended while gc held the lock"
	# runuser stopped itself beside its stopped child; it continues it.
	kill -CONT "$(ps -o ppid= -p "$gcpid" | tr -d ' ')" "$gcpid"
	wait "$gcjob" || fail "gc failed: $(cat "$T/gc.err")"
	wait "$rvjob" || fail "the review failed after gc: $(cat "$T/review.err")"
	jq -e '.freed.packages == 2' "$T/gc.json" >/dev/null || fail "gc freed: $(cat "$T/gc.json")"
	plan=$(jq -r '.plan_sha256' "$T/p/.jig/admission.json")
	jq -e --arg p "$plan" '.plan_sha256 == $p and .admitted' "$T/review.json" >/dev/null || fail "the review did not admit its Plan"
	gc --dry-run --json | jq -e '.freed.packages == 1' >/dev/null || fail "the review's package was not stored after gc"
}

case_not_a_project() {
	mkdir -p "$T/empty" && chown "$USER_NAME" "$T/empty"
	set +e; (cd "$T/empty" && jig gc) >"$T/out" 2>"$T/err"; rc=$?; set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] && grep -q "not a jig project here" "$T/err" || fail "exit $rc"
	set +e; (cd "$T/empty" && jig gc --bogus) 2>"$T/err"; rc=$?; set -e
	[ "$rc" -eq 2 ] && grep -q 'usage: jig gc \[--dry-run\]' "$T/err" || fail "a bad argument: exit $rc"
	# A project never reviewed (no .jig): nothing to free.
	fresh
	gc --json | jq -e '.freed.bytes == 0' >/dev/null || fail "a project without .jig"
}

"case_$1"
echo "PASS: $1"
