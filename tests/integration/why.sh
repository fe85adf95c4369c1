#!/bin/sh
# jig why and Plan differences (issue 35) in the plain lane: a re-review
# prints only what changed since the admitted Plan; jig run's stale-Plan
# refusal names the Flow and the changed file (never "(null)", also with
# API-backed Agent routes, the issue's example); jig why explains that
# refusal from the project's last Run, a changed snapshot, and hand-made
# packets; its own refusals are one line. The records of Runs that need a
# supported host are in tests/flow/cases.sh (flow.why_*, and the jig why
# lines of existing cases). Each case_* is one ctest (why.<case>); jig runs
# as the unprivileged user. Decisions 163, 164.
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-why.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- "$JIG" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "${1:-$JIG_SOURCE/examples}" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
inp() { (cd "$T/p" && jig "$@"); }
# run FLOW ARGS: jig run in the project; $rc, $T/err.
run() { set +e; (cd "$T/p" && jig run "$@" --output "$T/pkt") >"$T/out" 2>"$T/err" </dev/null; rc=$?; set -e; cat "$T/err"; }
edit() { printf '%s\n' "$2" >>"$T/p/$1"; }
# ask ARGS: jig review without --yes and without a terminal: not admitted
# (exit 5, or 0 from a jig before decision 160).
ask() { set +e; inp review "$@" </dev/null; r=$?; set -e; [ "$r" -eq 0 ] || [ "$r" -eq 5 ] || fail "review exited $r"; }

case_rereview_shows_only_changes() {
	# Must-show 5: after editing one Flow, the re-review prints exactly that
	# Flow's changes (not the whole Plan); --full and --json keep the whole.
	fresh
	inp review --yes >/dev/null
	edit notes-index/main.ts "// edited"
	ask >"$T/out"
	cat "$T/out"
	grep -q "^  changes since the admitted Plan [0-9a-f]\{12\} (1):$" "$T/out" || fail "no change header with one change"
	grep -qx "  flow notes-index: main.ts changed ([0-9]* -> [0-9]* bytes)" "$T/out" || fail "the changed file is not named"
	! grep -q "csv-report\|service-check" "$T/out" || fail "an unchanged Flow was shown"
	! grep -q "scope flow-notes-index\|permission\|files (read-only" "$T/out" || fail "the whole Plan was printed again"
	# Issue 44: the changed Flow's new package line and one line for what
	# of it and of the others is as admitted.
	grep -qx "    package sha256 [0-9a-f]\{64\} ([0-9]* files, [0-9]* bytes), entry main.ts" "$T/out" &&
		grep -qx "    as admitted (not shown again): attachments, outputs, scope" "$T/out" &&
		grep -qx "  the other 2 Flows as admitted, not shown again (jig review --full prints the whole Plan)" "$T/out" || fail "not summarised"
	[ "$(wc -l <"$T/out")" -le 9 ] || fail "more than the changes: $(wc -l <"$T/out") lines"
	grep -q "not admitted" "$T/out" || fail "not asked"
	ask --full >"$T/full"
	grep -q "scope flow-csv-report" "$T/full" && grep -q "flow notes-index: main.ts changed" "$T/full" || fail "--full lacks the Plan or the change"
	inp review --json >"$T/j"
	jq -e '(.changes | length) == 1 and .changes[0].flow == "notes-index" and .changes[0].change == "file-changed"
		and .changes[0].subject == "main.ts" and (.admitted_plan_sha256 | test("^[0-9a-f]{64}$")) and (.plan.flows | length) == 3' "$T/j" >/dev/null ||
		fail "json: $(jq -c .changes "$T/j")"
	# Added and removed files, an added output, a changed route cap.
	printf 'x\n' >"$T/p/notes-index/extra.txt"; chown "$USER_NAME" "$T/p/notes-index/extra.txt"
	rm "$T/p/notes-index/sample-notes/"* 2>/dev/null || true
	jq '.http.health.max_request_bytes = 32768' "$T/p/service-check/flow.json" >"$T/f" && cp "$T/f" "$T/p/service-check/flow.json"
	ask >"$T/out"
	cat "$T/out"
	grep -qx "  flow notes-index: extra.txt added" "$T/out" || fail "the added file"
	grep -qx "  flow service-check: http route health max_request_bytes changed (16384 -> 32768)" "$T/out" || fail "the changed cap"
	! grep -q "csv-report" "$T/out" || fail "an unchanged Flow was shown"
	# An unchanged project after admission: the Plan, no changes.
	inp review --yes >/dev/null
	inp review --json | jq -e '.changes == null' >/dev/null || fail "changes without a change"
}

case_stale_refusal_names_flow_and_file() {
	# Must-show 5: the refusal names the Flow and the file, for the Flow run
	# and for another Flow of the same admitted Plan; nothing runs.
	fresh
	inp review --yes >/dev/null
	edit notes-index/main.ts "// edited"
	run notes-index --input notes="$T/p/notes-index"
	[ "$rc" -eq 4 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || fail "exit $rc, expected 4 and one line"
	grep -q "^jig: flow notes-index: main.ts changed since review ([0-9]* -> [0-9]* bytes); nothing was run: review again with 'jig review'" "$T/err" || fail "not named"
	run csv-report --input data="$T/p/csv-report/sample.csv"
	[ "$rc" -eq 4 ] || fail "exit $rc"
	grep -q "flow notes-index: main.ts changed since review .*(the admitted Plan covers every Flow of the project, not only csv-report)" "$T/err" || fail "the other Flow's change"
	! grep -q "(null)" "$T/err" || fail "(null)"
	[ ! -e "$T/pkt" ] || fail "something was published"
	# jig why FLOW: the refusal kept as the Flow's last Run, with its change.
	inp why csv-report >"$T/why"
	cat "$T/why"
	grep -q "^flow notes-index: main.ts changed since review .*(the admitted Plan covers every Flow of the project, not only csv-report)" "$T/why" && grep -q "^- flow-changed: the project changed since review: flow notes-index: main.ts changed" "$T/why" &&
		grep -q "remedy: review the change and admit it (jig review shows exactly what changed)" "$T/why" || fail "jig why"
	inp why --json >"$T/why.json" # no FLOW: the Flow run last
	jq -e '.format == "jig-why/1" and .source == "last-run" and .flow == "csv-report" and .status == "refused"
		and .explanations[0].kind == "flow-changed" and .explanations[0].contract_forbids == false' "$T/why.json" >/dev/null || fail "why json: $(cat "$T/why.json")"
	[ "$(stat -c %a "$T/p/.jig/runs/csv-report.json")" = 600 ] || fail "the last Run is not private"
}

case_api_agent_no_null() {
	# The issue's example: Flows with API-backed Agent routes (no provider
	# identity); editing one names that one, never "provider (null)".
	fresh
	for f in csv-report notes-index; do
		jq '.http = {"llm": {"method": "POST", "url": "https://models.example.com/v1/chat/completions", "timeout_ms": 60000}}
			| .agents = {"summarise": {"api": "openai-chat", "http": "llm", "model": "some-model", "max_answer_bytes": 8192}}' \
			"$T/p/$f/flow.json" >"$T/f" && cp "$T/f" "$T/p/$f/flow.json"
	done
	inp review --yes >"$T/out" || { cat "$T/out"; fail "review"; }
	edit notes-index/main.ts "// edited"
	run csv-report --input data="$T/p/csv-report/sample.csv"
	[ "$rc" -eq 4 ] || fail "exit $rc"
	! grep -q "(null)" "$T/err" || fail "(null) in the refusal"
	grep -q "flow notes-index: main.ts changed since review" "$T/err" || fail "the wrong Flow or no file"
	ask >"$T/out"
	! grep -q "(null)\|summarise" "$T/out" || fail "the re-review shows an unchanged route"
}

case_snapshot_changed() {
	# Must-show 4 (a changed snapshot): a newer snapshot installed after
	# review; jig run refuses naming it, jig why says to review again.
	cp -a "$JIG_TEST_PREFIX" "$T/prefix"
	JIG="$T/prefix/bin/jig"
	fresh
	chown -R "$USER_NAME" "$T/prefix"
	inp review --yes >/dev/null
	cur=$T/prefix/lib/jig/$(readlink "$T/prefix/lib/jig/current")
	mkdir "$T/stage" && (cd "$cur" && cp -r modules libexec "$T/stage/")
	seq=$(($(jq .sequence "$cur/manifest.json") + 1))
	mods=$(jq -r '.modules[] | "--module \(.name):\(.kind):\(.path)"' "$cur/manifest.json" | tr '\n' ' ')
	# shellcheck disable=SC2086
	"$T/prefix/bin/jig-snapshot" create --dir "$T/stage" --id "s$seq" --sequence "$seq" $mods >/dev/null
	"$T/prefix/bin/jig-snapshot" sign --dir "$T/stage" --key "$JIG_DEV_KEY" >/dev/null
	"$T/prefix/bin/jig-snapshot" install --dir "$T/stage" --prefix "$T/prefix" >/dev/null
	chown -R "$USER_NAME" "$T/prefix"
	run csv-report --input data="$T/p/csv-report/sample.csv"
	[ "$rc" -eq 4 ] || fail "exit $rc"
	grep -q "^jig: the installed snapshot changed since review (id \"s[0-9]*\" -> \"s$seq\"); .*review again" "$T/err" || fail "not named"
	inp why csv-report >"$T/why"
	cat "$T/why"
	grep -q "^- snapshot-changed: the installed snapshot changed since review: the installed snapshot changed (id" "$T/why" &&
		grep -q "remedy: review the project against the new snapshot (jig review), then run again" "$T/why" || fail "jig why"
	[ "$(grep -c '^- ' "$T/why")" -eq 1 ] || fail "the scope paths that follow from the snapshot were listed too"
}

# packet NAME RECORD-JSON: a hand-made packet (owner-only, like a published one).
packet() {
	mkdir -p "$T/$1/files" && printf '%s\n' "$2" >"$T/$1/record.json"
	chmod 700 "$T/$1" "$T/$1/files" && chmod 600 "$T/$1/record.json" && chown -R "$USER_NAME" "$T/$1"
}

case_packet_explained() {
	# jig why PACKET over a record: a memory kill and an ungranted route;
	# the Flow's text shown inert; a record at the contract's cap says so.
	packet mem '{"format":"jig-run-record/1","flow":"f","status":"failed","error":"the Flow was killed by signal 9","outputs":[],"timeout_ms":30000,
		"termination":{"outcome":"oom","oom_kills":1,"pids_max_hits":0,"signal":9,"memory_peak_bytes":268435456},
		"scope":{"policy":{"limits":{"memory_bytes":268435456,"tasks":64,"cpu_quota_us":100000}}},
		"effects":[{"effect":"http","route":"leak\u001b[2J","outcome":"refused","error":"flow f has no reviewed http route \"leak\""}]}'
	(cd "$T" && jig why "$T/mem") >"$T/why"
	cat "$T/why"
	grep -q "^- memory: flow f ran out of memory: the kernel killed it 1 time(s) at its scope's limit of 256 MiB" "$T/why" &&
		grep -q "the contract forbids more: the limit is the capability catalog's" "$T/why" || fail "memory"
	grep -q '^- http-ungranted: flow f asked for the HTTP route "leak\\x1b\[2J", which its flow.json does not grant' "$T/why" &&
		grep -q 'remedy: if the Flow should have it, add the route to "http" in its flow.json and review again' "$T/why" || fail "ungranted route"
	! grep -q "$(printf '\033')" "$T/why" || fail "a control byte reached the terminal"
	(cd "$T" && jig why "$T/mem" --json) | jq -e '.source == "packet" and ([.explanations[].kind] == ["memory", "http-ungranted"])' >/dev/null || fail "json"
	# A succeeded Run: nothing to explain.
	packet ok '{"format":"jig-run-record/1","flow":"f","status":"succeeded","error":"","outputs":[],"termination":{"outcome":"exited"}}'
	(cd "$T" && jig why "$T/ok") | grep -q "nothing was refused and nothing failed" || fail "succeeded"
}

case_refusals() {
	# jig why's own refusals: one line each, --json jig-error/1.
	fresh
	set +e
	(cd "$T/p" && jig why) >"$T/out" 2>"$T/err"; r1=$?
	inp review --yes >/dev/null
	(cd "$T/p" && jig why nosuch) >"$T/out" 2>"$T/err2"; r2=$?
	(cd "$T/p" && jig why csv-report) >"$T/out" 2>"$T/err6"; r6=$?
	(cd "$T" && jig why "$T/none/pkt") >"$T/out" 2>"$T/err3"; r3=$?
	packet open '{"format":"jig-run-record/1","flow":"f","status":"failed","error":"x","outputs":[]}'; chmod 755 "$T/open"
	(cd "$T" && jig why "$T/open") >"$T/out" 2>"$T/err4"; r4=$?
	(cd "$T/p" && jig why --json --bogus) >"$T/out" 2>"$T/err5"; r5=$?
	set -e
	cat "$T/err" "$T/err2" "$T/err3" "$T/err4" "$T/out"
	[ "$r1" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "no Run kept" "$T/err" || fail "no Run yet: $r1"
	# A name the project lacks: the one "no such Flow" refusal, the known Flows named.
	[ "$r2" -eq 2 ] && grep -q 'has no Flow "nosuch"; its Flows: .*csv-report' "$T/err2" || fail "unknown flow: $r2"
	[ "$r6" -eq 2 ] && grep -q 'flow csv-report has no Run kept' "$T/err6" || fail "a Flow with no Run: $r6"
	[ "$r3" -eq 2 ] && grep -q "No such file or directory" "$T/err3" || fail "missing packet: $r3"
	[ "$r4" -eq 4 ] && grep -q "open to others" "$T/err4" || fail "a non-private packet: $r4"
	[ "$r5" -eq 2 ] && jq -e '.schema == "jig-error/1"' "$T/out" >/dev/null || fail "usage json: $r5"
}

"case_$1"
echo "PASS: $1"
