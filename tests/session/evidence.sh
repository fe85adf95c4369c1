#!/bin/sh
# jig session --evidence (issue 34, must-show 5 and 6;
# docs/session-evidence.md), in the supported-host lane as the
# unprivileged user: the negative suite on a good mapping passes every
# check, with a canary in the caller's credential variables that reaches
# no summary; a deliberately broad mapping (a repository entry whose
# worktree holds another mapped repository) fails at least one check and
# the command exits non-zero. Each case_* is one ctest
# (session_evidence.<case>); scratch_<case> makes the caller's
# /run/user/<uid> as a login would (root, in the lane).
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }

runtime_dir() {
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u" && chown jigtest: "/run/user/$u" && chmod 700 "/run/user/$u"
}
if [ "${ROOT_MODE:-0}" = 1 ]; then
	runtime_dir
	exit 0
fi

T=$(mktemp -d /var/tmp/jig-evidence.XXXXXX)
trap 'rm -rf "$T"' EXIT
RT=/run/user/$(id -u)
CANARY=canary-4b1d9e0c77aa51
LISTENER=

# Repositories as files (no git needed): repo (main worktree) and repo-wt
# (its linked worktree), other (another mapped repository), outer with
# outer/inner (a repository nested in another one's worktree); a client
# whose program the probe replaces.
mkdir -p "$T/repo/.git/worktrees/wt" "$T/repo/src" "$T/repo-wt" "$T/other/.git" "$T/outer/.git" \
	"$T/outer/inner/.git" "$T/leakycanary7/.git" "$T/client/bin" "$HOME/.config/jig" "$HOME/.ssh" "$HOME/.config/gh"
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$T" >"$T/repo-wt/.git"
printf '../..\n' >"$T/repo/.git/worktrees/wt/commondir"
printf '#!/usr/bin/sh\necho agent "$@"\n' >"$T/client/bin/agent" && chmod 755 "$T/client/bin/agent"
echo secret >"$HOME/.ssh/id_test" && echo secret >"$HOME/.config/gh/hosts.yml"

map() {
	jq -n --arg t "$T" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent")], trees: [($t + "/client"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  repositories: {
	    repo: {root: ($t + "/repo"), worktrees: [($t + "/repo-wt")], mode: "ro", context: "personal",
	           default_provider: "local", providers: ["local"]},
	    other: {root: ($t + "/other"), worktrees: [], mode: "rw", context: "work", default_provider: "local", providers: ["local"]},
	    outer: {root: ($t + "/outer"), worktrees: [], mode: "ro", context: "personal", default_provider: "local", providers: ["local"]},
	    inner: {root: ($t + "/outer/inner"), worktrees: [], mode: "ro", context: "personal", default_provider: "local", providers: ["local"]},
	    leakycanary7: {root: ($t + "/leakycanary7"), worktrees: [], mode: "ro", context: "personal", default_provider: "local", providers: ["local"]}}
	}' | jq "${1:-.}" >"$HOME/.config/jig/sessions.json"
	chmod 600 "$HOME/.config/jig/sessions.json"
}
# A real listener on the granted port in the guest (the provider).
listen_1234() {
	python3 -c 'import socket,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 1234)); s.listen(16); print("listening", flush=True); time.sleep(240)' >"$T/listen.log" &
	LISTENER=$!
	i=0; until grep -q listening "$T/listen.log" 2>/dev/null; do i=$((i+1)); [ $i -lt 100 ] || fail "listener"; sleep 0.05; done
}
# ev DIR ARGS: jig session --evidence ARGS in DIR, a canary in the caller's
# credential variables; $rc, $T/out, $T/err.
ev() {
	dir=$1
	shift
	set +e
	(cd "$dir" && env XDG_RUNTIME_DIR="$RT" TERM=xterm \
		OPENAI_API_KEY="$CANARY" GH_TOKEN="gh-$CANARY" DEPLOY_PASSWORD="pw-$CANARY" \
		JIG_EVIDENCE_CANARY="${CONFIGURED:-configured-$CANARY}" "$JIG" session --evidence "$@" >"$T/out" 2>"$T/err")
	rc=$?
	set -e
	echo "--- jig session --evidence $* (exit $rc)"
	cat "$T/out" "$T/err"
	return 0
}
# Nothing of any canary in the run's summary or raw results.
no_canary() {
	dir=$(sed -n 's/.*raw results and summary in \(.*\)$/\1/p' "$T/out")
	[ -d "$dir" ] || fail "no evidence directory named"
	[ "$(stat -c %a "$dir")" = 700 ] || fail "$dir is not 0700"
	for f in "$dir"/* "$@"; do
		[ "$(stat -c %a "$f")" = 600 ] || fail "$f is not 0600"
		! grep -q "$CANARY" "$f" || fail "a canary is in $f"
	done
	! grep -Eiq 'OPENAI|GH_TOKEN|PASSWORD|API_KEY' "$dir/summary.json" || fail "a credential name is in the summary"
	jq -e '.format == "jig-session-evidence/1"' "$dir/summary.json" >/dev/null || fail "no summary"
	# the summary's hashes are the raw files'
	for n in plan.json suite.json probe.jsonl; do
		want=$(jq -r --arg n "$n" '.evidence[] | select(.name == $n) | .sha256' "$dir/summary.json")
		[ "$(sha256sum <"$dir/$n" | cut -c1-64)" = "$want" ] || fail "$n's hash is not the summary's"
	done
}

scratch_good_mapping() { runtime_dir; }
case_good_mapping() {
	map
	listen_1234
	ev "$T/repo/src" --out "$T/summary.json"
	kill "$LISTENER" 2>/dev/null || true
	[ "$rc" -eq 0 ] || fail "exit $rc on a good mapping"
	grep -q ', 0 failed;' "$T/out" || fail "not every check passed"
	no_canary "$T/summary.json"
	s="$T/summary.json"
	jq -c '.checks[]' "$s"
	jq -r '"run: \(.started) .. \(.finished)"' "$s"
	jq -e '.result == "pass" and .repository == "repo" and .worktree_mode == "ro"
	  and ([.checks[] | select(.pass | not)] | length) == 0
	  and (.policy_sha256 != .probe_policy_sha256)
	  and (.git.scope_policy_sha256 | length) == 64 and .git.ssh_hosts == [] and .git.https_hosts == []' "$s" >/dev/null ||
		fail "summary: $(cat "$s")"
	# every family of the suite ran, and the ones that must be real were
	for id in worktree.read worktree.write tmpdir.exact tmpdir.other.read tmpdir.other.write marker.1.read \
		marker.2.read sibling.1.read private.1.read private.2.read private.3.read private.4.read private.5.read \
		loopback.1234.tcp loopback.1235.tcp; do
		jq -e --arg id "$id" '[.checks[] | select(.id == $id and .pass and (.vacuous | not))] | length == 1' "$s" \
			>/dev/null || fail "check $id did not pass for real"
	done
	# the raw credential names, each absent inside (named by digest only)
	[ "$(jq '[.checks[] | select(.id | startswith("env.")) | select(.pass)] | length' "$s")" -ge 7 ] ||
		fail "the credential variables were not all checked"
	# the decoys are gone
	[ -z "$(ls -A /tmp | grep jig-evidence)" ] || fail "a decoy is left in /tmp"
	[ "$(ls "$RT/jig/sessions" | wc -l)" -eq 0 ] || fail "a session directory is left: $(ls "$RT/jig/sessions")"
	# --out never overwrites
	before=$(sha256sum <"$T/summary.json")
	ev "$T/repo" --out "$T/summary.json"
	[ "$rc" -eq 2 ] || fail "--out over an existing file: exit $rc"
	grep -q -- '--out .*summary.json exists; a summary never replaces a file' "$T/err" || fail "no --out refusal"
	[ "$(sha256sum <"$T/summary.json")" = "$before" ] || fail "the existing file changed"
}

scratch_broad_mapping_fails() { runtime_dir; }
case_broad_mapping_fails() {
	# The map's entry "outer" maps a worktree that holds the mapped
	# repository "inner": a session of outer can read inner, and the suite
	# must say so.
	map
	listen_1234
	ev "$T/outer" --out "$T/summary.json"
	kill "$LISTENER" 2>/dev/null || true
	[ "$rc" -eq 1 ] || fail "exit $rc: a broad mapping must fail the evidence (exit 1)"
	grep -q '^FAIL sibling\.[0-9]*\.read: expected deny, got allow' "$T/out" || fail "no sibling check failed"
	jq -e '.result == "fail" and ([.checks[] | select(.pass | not)] | length) >= 1' "$T/summary.json" >/dev/null ||
		fail "the summary does not say fail"
	no_canary "$T/summary.json"
}
scratch_leaking_fixture_fails() { runtime_dir; }
case_leaking_fixture_fails() {
	# A deliberately leaking fixture: the operator's configured canary is
	# the repository's id, which the summary names. Generation fails: exit
	# 4, one error line that never repeats the canary (the plan before it
	# names the repository, as always), no summary anywhere; the raw
	# results stay (0600).
	map
	listen_1234
	CONFIGURED=leakycanary7 ev "$T/leakycanary7" --out "$T/summary.json"
	kill "$LISTENER" 2>/dev/null || true
	[ "$rc" -eq 4 ] || fail "exit $rc: a leaking summary must fail (exit 4)"
	grep -q 'the summary would carry the value of a credential-like variable (canary [0-9]*); nothing was written' "$T/err" ||
		fail "no leak refusal"
	! grep '^jig:' "$T/err" | grep -q leakycanary7 || fail "the error repeats the canary"
	[ ! -e "$T/summary.json" ] || fail "--out was written"
	d=$(ls -d "$HOME"/.local/state/jig/evidence/*)
	[ ! -e "$d/summary.json" ] || fail "a summary was written"
	for f in plan.json suite.json probe.jsonl; do
		[ "$(stat -c %a "$d/$f")" = 600 ] || fail "raw $f missing or not 0600"
	done
}
# The Git directory's class (issue 45, decision 214) on an rw mapping:
# every write Git would later read or run is denied inside the scope, the
# nested repository the probe plants is quarantined by the session's end,
# and the planted files are gone afterwards.
scratch_rw_mapping_git() { runtime_dir; }
case_rw_mapping_git() {
	map
	echo '[core]' >"$T/other/.git/config"
	mkdir -p "$T/other/.git/modules/sub" "$T/other/.git/worktrees/w" && echo '[core]' >"$T/other/.git/modules/sub/config"
	listen_1234
	ev "$T/other" --out "$T/summary.json"
	kill "$LISTENER" 2>/dev/null || true
	[ "$rc" -eq 0 ] || fail "exit $rc on an rw mapping"
	s="$T/summary.json"
	for id in git.config.write git.hooks.create git.commondir.create git.info.create git.module.1.config.write \
		git.module.1.hooks.create git.worktree.1.write git.dotgit.rename git.dotgit.write git.nested.create git.nested.kept; do
		jq -e --arg id "$id" '[.checks[] | select(.id == $id and .pass and (.vacuous | not))] | length == 1' "$s" \
			>/dev/null || fail "check $id did not pass for real"
	done
	grep -q 'the agent created .jig-evidence-.*/.git (a nested repository): moved to' "$T/err" || fail "the end scan did not report the planted repository"
	[ -z "$(ls -A "$T/other" | grep -v '^\.git$')" ] || fail "the probe left files in the worktree: $(ls -A "$T/other")"
	[ "$(cat "$T/other/.git/config")" = "[core]" ] && [ ! -e "$T/other/.git/hooks" ] && [ ! -e "$T/other/.git/commondir" ] ||
		fail "the Git directory was written"
	no_canary "$T/summary.json"
}
# Must-show 3: the same run with the Git protection dropped (the test-only
# fault point of a -DJIG_FAULT_POINTS=ON build) fails the summary.
scratch_git_guard_weakened_fails() { runtime_dir; }
case_git_guard_weakened_fails() {
	map
	echo '[core]' >"$T/other/.git/config"
	listen_1234
	JIG_FAULT_FAIL="session git guard" ev "$T/other" --out "$T/summary.json"
	kill "$LISTENER" 2>/dev/null || true
	[ "$rc" -eq 1 ] || fail "exit $rc: a session whose Git directory is writable must fail the evidence (exit 1)"
	for id in git.config.write git.hooks.create git.commondir.create git.dotgit.rename; do
		grep -q "^FAIL $id: expected deny, got allow" "$T/out" || fail "check $id did not fail"
	done
	jq -e '.result == "fail"' "$T/summary.json" >/dev/null || fail "the summary does not say fail"
	[ "$(cat "$T/other/.git/config")" = "[core]" ] || fail "the probe changed the config"
}
"case_$1"
