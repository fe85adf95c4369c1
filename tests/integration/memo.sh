#!/bin/sh
# A jig run that proves instead of rebuilding (issue 36 item 2, must-show 3;
# decisions 179-181) in the plain lane: jig review --yes remembers what the
# admission established (.jig/admission-memo.json) and jig run uses it while
# it is proven, or derives the Plan as before. Each case changes one input
# the memo depends on (a Flow file, the snapshot and a catalog byte, a host
# fact composition read, the operator's configuration) or damages the memo
# (corrupt, truncated, oversized, a link, foreign-owned, shared, tampered
# scopes or Plan) and sees the refusal or the re-derivation, with exactly
# today's outcome. How a Run had its Plan is read from its last-Run entry
# (.jig/runs/FLOW.json "admission", "admission_why"), written for refusals
# too: on this host a Run stops at the cgroup step, after admission; on a
# supported host it runs. Each case_* is one ctest (memo.<case>); jig runs
# as the unprivileged user. The guest's /etc/resolv.conf with an HTTP route
# worker is in tests/flow/cases.sh (flow.memo_host_fact).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
USER_NAME=jigtest
T=$(mktemp -d /var/tmp/jig-memo.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }
jig() { runuser -u "$USER_NAME" -- env ${CFG:+XDG_CONFIG_HOME=$CFG} "$JIG" "$@"; }
fresh() { rm -rf "$T/p"; cp -r "$JIG_SOURCE/examples" "$T/p"; chown -R "$USER_NAME" "$T/p"; }
inp() { (cd "$T/p" && jig "$@"); }
MEMO=$T/p/.jig/admission-memo.json
# run [ARGS]: jig run csv-report; $rc, $T/err (the packet, if any, removed).
run() {
	rm -rf "$T/pkt"
	set +e; (cd "$T/p" && jig run csv-report --input data="$T/p/csv-report/sample.csv" --output "$T/pkt" "$@") >"$T/out" 2>"$T/err" </dev/null
	rc=$?; set -e; rm -rf "$T/pkt"
}
# how: the last Run's "admission" and "admission_why".
how() { jq -r '"\(.admission) \(.admission_why // "")"' "$T/p/.jig/runs/csv-report.json"; }
# expect WAY [WHY-PATTERN]: the last Run had its Plan that way (and why).
expect() {
	h=$(how)
	case $h in "$1"*) ;; *) fail "admission '$h', expected $1 ($(cat "$T/err"))" ;; esac
	[ -z "${2:-}" ] || echo "$h" | grep -q "$2" || fail "admission '$h' does not say '$2'"
}
# reference: a Run without any memo, its exit status and error kept to
# compare (what today's code does).
reference() { rm -f "$MEMO"; run; expect derived; ref_rc=$rc; cp "$T/err" "$T/ref_err"; }
same() { [ "$rc" -eq "$ref_rc" ] && cmp -s "$T/err" "$T/ref_err" || fail "exit $rc, not $ref_rc, or another error: $(cat "$T/err")"; }
chmod 777 "$T" # --output's parent: the Run's own to write

case_remembered_and_refreshed() {
	# Review remembers; the Run uses it with today's outcome; no memo:
	# derived and remembered again; the memo is the caller's, 0600, in .jig.
	fresh
	inp review --yes >/dev/null
	[ -f "$MEMO" ] || fail "review kept no memo"
	[ "$(stat -c '%U %a' "$MEMO")" = "$USER_NAME 600" ] || fail "memo $(stat -c '%U %a' "$MEMO")"
	run; expect remembered; r1=$rc; cp "$T/err" "$T/e1"
	reference
	[ "$r1" -eq "$ref_rc" ] && cmp -s "$T/e1" "$T/ref_err" || fail "the remembered Run's outcome differs: $r1 $(cat "$T/e1")"
	[ -f "$MEMO" ] || fail "the derived Run kept no memo"
	run; expect remembered; same
	# --verification strict derives everything, the same outcome.
	run --verification strict; expect derived "verification strict"
	[ "$rc" -eq "$ref_rc" ] || fail "strict: exit $rc, not $ref_rc"
	# Another Flow of the project: remembered too (the memo covers every Flow).
	set +e; (cd "$T/p" && jig run notes-index --input notes="$T/p/notes-index" --output "$T/pkt2") >/dev/null 2>&1; set -e
	jq -e '.admission == "remembered"' "$T/p/.jig/runs/notes-index.json" >/dev/null || fail "notes-index: $(cat "$T/p/.jig/runs/notes-index.json")"
}

case_flow_file_changed() {
	# A Flow file changed: the memo's key (the package digest) no longer
	# holds; derived, and the stale-Plan refusal of today (exit 4, named);
	# the memo is not replaced by an unadmitted Plan.
	fresh
	inp review --yes >/dev/null
	cp "$MEMO" "$T/memo0"
	printf '// edited\n' >>"$T/p/csv-report/main.ts"
	run
	[ "$rc" -eq 4 ] || fail "exit $rc, expected 4"
	grep -q "^jig: flow csv-report: main.ts changed since review" "$T/err" || fail "not named: $(cat "$T/err")"
	expect derived "an input changed"
	cmp -s "$MEMO" "$T/memo0" || fail "an unadmitted Plan was remembered"
	cp "$T/err" "$T/e1"; reference
	[ "$ref_rc" -eq 4 ] && cmp -s "$T/e1" "$T/ref_err" || fail "not today's refusal"
	# Reviewed again: remembered again.
	inp review --yes >/dev/null
	run; expect remembered
	# jig.json changed (a byte that keeps its meaning): derived, same outcome.
	reference
	printf '\n' >>"$T/p/jig.json"
	run; expect derived "an input changed"; same
}

# A copy of the installation the case may change (its snapshot, files).
own_prefix() {
	cp -a "$JIG_TEST_PREFIX" "$T/prefix"
	chown -R "$USER_NAME" "$T/prefix"
	JIG="$T/prefix/bin/jig"
	CUR=$T/prefix/lib/jig/$(readlink "$T/prefix/lib/jig/current")
}

case_snapshot_and_host_fact_changed() {
	# A host fact composition read (a bind source's identity: the snapshot's
	# runtime directory) changes: derived with today's outcome; then a new
	# snapshot whose catalog differs by one byte: derived and refused as
	# today (the snapshot changed, exit 4); reviewed again: remembered.
	own_prefix
	fresh
	inp review --yes >/dev/null
	run; expect remembered
	reference
	run; expect remembered
	touch "$CUR/libexec/runtime"
	run; expect derived "a host fact changed: stat $CUR/libexec/runtime"; same
	run; expect remembered; same
	mkdir "$T/stage" && (cd "$CUR" && cp -r modules libexec "$T/stage/")
	jq -c . "$T/stage/libexec/catalog.json" >"$T/cat" && cp "$T/cat" "$T/stage/libexec/catalog.json" # the same catalog, its bytes reformatted
	cmp -s "$T/stage/libexec/catalog.json" "$CUR/libexec/catalog.json" && fail "the catalog did not change"
	seq=$(($(jq .sequence "$CUR/manifest.json") + 1))
	mods=$(jq -r '.modules[] | "--module \(.name):\(.kind):\(.path)"' "$CUR/manifest.json" | tr '\n' ' ')
	# shellcheck disable=SC2086
	"$T/prefix/bin/jig-snapshot" create --dir "$T/stage" --id "s$seq" --sequence "$seq" $mods >/dev/null
	"$T/prefix/bin/jig-snapshot" sign --dir "$T/stage" --key "$JIG_DEV_KEY" >/dev/null
	"$T/prefix/bin/jig-snapshot" install --dir "$T/stage" --prefix "$T/prefix" >/dev/null
	chown -R "$USER_NAME" "$T/prefix"
	run
	[ "$rc" -eq 4 ] || fail "exit $rc, expected 4"
	grep -q "^jig: the installed snapshot changed since review" "$T/err" || fail "not named: $(cat "$T/err")"
	expect derived "an input changed"
	inp review --yes >/dev/null
	run; expect remembered
}

case_operator_config_changed() {
	# The operator's agents.json (its bytes are in the key): written,
	# changed by one byte, removed: each time derived, then remembered.
	CFG=$T/cfg
	mkdir -p "$CFG/jig" && chown -R "$USER_NAME" "$CFG"
	fresh
	inp review --yes >/dev/null
	run; expect remembered
	reference
	printf '{"format":"jig-agents/1","providers":{}}\n' >"$CFG/jig/agents.json"
	chown "$USER_NAME" "$CFG/jig/agents.json" && chmod 600 "$CFG/jig/agents.json"
	run; expect derived "an input changed"; same
	run; expect remembered; same
	printf ' ' >>"$CFG/jig/agents.json"
	run; expect derived "an input changed"; same
	rm "$CFG/jig/agents.json"
	run; expect derived "an input changed"; same
	run; expect remembered; same
}

# ignored HOW WHY: after damaging the memo with HOW, the Run derives (why)
# with today's outcome, and keeps a good memo again (then remembered).
ignored() {
	cp "$T/good" "$MEMO" && chown "$USER_NAME" "$MEMO" && chmod 600 "$MEMO"
	eval "$1"
	run; expect derived "$2"; same
	run; expect remembered; same
}

case_bad_memo_ignored() {
	fresh
	inp review --yes >/dev/null
	cp "$MEMO" "$T/good"
	reference
	ignored 'head -c 100 "$T/good" >"$MEMO"' "malformed"
	ignored 'printf "not json" >"$MEMO"' "malformed"
	ignored 'head -c 9000000 /dev/zero >"$MEMO"' "no memo"
	ignored 'mv "$MEMO" "$T/p/.jig/elsewhere.json"; ln -s elsewhere.json "$MEMO"' "no memo"
	ignored 'chown root "$MEMO"' "no memo" # unreadable to the caller
	ignored 'chown root "$MEMO"; chmod 644 "$MEMO"' "not the caller"
	ignored 'chmod 640 "$MEMO"' "not the caller"
	ignored 'ln "$MEMO" "$T/p/.jig/second-name"' "not the caller"
	rm -f "$T/p/.jig/second-name" "$T/p/.jig/elsewhere.json"
	# Valid memos that say something else than the admitted Plan: a scope's
	# argv, a scope's policy, the Plan's text (with its own digest).
	ignored 'python3 - "$MEMO" <<PY
import json, sys
m = json.load(open(sys.argv[1]))
m["scopes"][0]["argv"].append("--extra")
open(sys.argv[1], "w").write(json.dumps(m))
PY' "its scopes are not the Plan"
	ignored 'python3 - "$MEMO" <<PY
import json, sys
m = json.load(open(sys.argv[1]))
for s in m["scopes"]:
    p = json.loads(s["policy"]); p["limits"]["memory_bytes"] += 4096; s["policy"] = json.dumps(p, separators=(",", ":"), sort_keys=True)
open(sys.argv[1], "w").write(json.dumps(m))
PY' "its scopes are not the Plan"
	ignored 'python3 - "$MEMO" <<PY
import hashlib, json, sys
m = json.load(open(sys.argv[1]))
m["plan"] = m["plan"].replace("\"default\":", "\"default\": ", 1)
m["plan_sha256"] = hashlib.sha256(m["plan"].encode()).hexdigest()
open(sys.argv[1], "w").write(json.dumps(m))
PY' "not the admitted one"
	# A host fact the memo says differently.
	ignored 'python3 - "$MEMO" <<PY
import json, sys
m = json.load(open(sys.argv[1]))
m["facts"][0]["ino"] += 1
open(sys.argv[1], "w").write(json.dumps(m))
PY' "a host fact changed"
}

# Run the named case (ctest passes it as $1).
"case_$1"
