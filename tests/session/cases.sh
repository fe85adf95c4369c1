#!/bin/sh
# jig session before launch (issue 34), plain lane: every refusal of the
# command line, the repository map, the repository and the provider, an
# unsafe $XDG_RUNTIME_DIR and each high-risk flag,
# one line each with nothing started; the plan (text and JSON) and the
# digest (the same inputs give the same bytes; a map entry, a provider, a
# catalog fragment or the snapshot changes it). Each case_* is one ctest
# (session.<case>); jig runs as the unprivileged user jigtest, whose
# password-database home is this test's $T/home, bound over it in a mount
# namespace of jig's call alone (jig reads its map and state roots from
# there, never from XDG_CONFIG_HOME or XDG_STATE_HOME: decision 215).
# Requirements: see docs/session.md ("Tests").
set -eu
: "${JIG_TEST_PREFIX:?}" "${JIG_SOURCE:?}" "${JIG_DEV_KEY:?}"
USER_NAME=jigtest
UID_T=$(id -u "$USER_NAME")
T=$(mktemp -d /var/tmp/jig-session.XXXXXX)
chmod 755 "$T"
RT=/run/user/$UID_T
trap 'rm -rf "$T"' EXIT
P="$JIG_TEST_PREFIX"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The caller's runtime directory as a login would make it.
mkdir -p "$RT" && chown "$USER_NAME:" "$RT" && chmod 700 "$RT"

# Repositories, read as files (no git needed): repo (main worktree),
# repo-wt (a linked worktree of repo), other (unmapped), repo/sub (a
# nested unmapped repository), a client tree and its program.
mkdir -p "$T/repo/.git/worktrees/wt" "$T/repo/src" "$T/repo-wt" "$T/other/.git" "$T/repo/sub/.git" \
	"$T/repo-unreg" "$T/client/bin" "$T/home/.config/jig"
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$T" >"$T/repo-wt/.git"
printf '../..\n' >"$T/repo/.git/worktrees/wt/commondir"
mkdir -p "$T/repo/.git/worktrees/unreg"
printf 'gitdir: %s/repo/.git/worktrees/unreg\n' "$T" >"$T/repo-unreg/.git"
printf '../..\n' >"$T/repo/.git/worktrees/unreg/commondir"
printf '#!/usr/bin/sh\necho agent "$@"\n' >"$T/client/bin/agent" && chmod 755 "$T/client/bin/agent"
chown -R "$USER_NAME:" "$T"
chmod 700 "$T/home"
# The user's home as the password database names it (the mount point).
H=$(getent passwd "$USER_NAME" | cut -d: -f6)
[ -d "$H" ] || { mkdir -p "$H" && chown "$USER_NAME:" "$H"; }
CFG="$T/home/.config/jig"
# The state root of repository $T/repo as jig names it: its root's digest.
state_of() { echo "$H/.local/state/jig-sessions/personal/fake/$(printf %s "$1" | sha256sum | cut -c1-32)"; }

# map [JQ]: the repository map, edited by JQ.
map() {
	jq -n --arg t "$T" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent"), "--interactive"], trees: [($t + "/client"), "/usr/bin"],
	                   env: {AGENT_MODE: "session"}, selectors: ["--agent-model"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234", args: ["--model", "local-7b"]},
	              other: {client: "fake", endpoint: "127.0.0.1:1240"},
	              remote: {client: "fake", endpoint: "api.example.com:443"}},
	  repositories: {repo: {root: ($t + "/repo"), worktrees: [($t + "/repo-wt")], mode: "ro", context: "personal",
	                        default_provider: "local", providers: ["local", "other", "remote"], capabilities: []}}
	}' | jq "${1:-.}" >"$CFG/sessions.json.new"
	mv "$CFG/sessions.json.new" "$CFG/sessions.json"
	chown "$USER_NAME:" "$CFG/sessions.json" && chmod 600 "$CFG/sessions.json"
}
# j DIR ARGS: jig session ARGS as the user in DIR, $T/home bound over the
# user's home; $rc, $T/out, $T/err.
j() {
	dir=$1
	shift
	set +e
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$T/home" "$H" \
		runuser -u "$USER_NAME" -- env -C "$dir" HOME="$H" \
		XDG_RUNTIME_DIR="${RUNTIME:-$RT}" TERM=xterm ${EXTRA_ENV:-} "${JIG:-$P/bin/jig}" session "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	return 0
}
# refused DIR PATTERN ARGS: exit 2, 3 or 4, one line matching PATTERN, no plan.
refused() {
	dir=$1 pat=$2
	shift 2
	j "$dir" "$@"
	[ "$rc" -ge 2 ] && [ "$rc" -le 4 ] || fail "exit $rc, expected a refusal for: $*"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
	grep -Eq -- "$pat" "$T/err" || fail "error does not match /$pat/"
	[ ! -s "$T/out" ] || fail "something was printed on stdout: $(cat "$T/out")"
}
sha() { j "$@" && [ "$rc" -eq 0 ] || fail "dry run failed: $(cat "$T/err")"; jq -r .policy_sha256 "$T/out"; }

# --- the command line ---------------------------------------------------------
case_provider_twice() { map; refused "$T/repo" 'given twice' --provider local --provider other --dry-run; }
case_provider_equals() { map; refused "$T/repo" '--provider=ID is refused' --provider=local --dry-run; }
case_provider_after_dashdash() { map; refused "$T/repo" '--provider after "--"' --dry-run -- --provider local; }
case_model_after_dashdash() {
	map
	refused "$T/repo" 'selects a provider, model' --dry-run -- --model=gpt-x
	refused "$T/repo" 'selects a provider, model' --dry-run -- -m gpt-x
	refused "$T/repo" 'selects a provider, model' --dry-run -- --config x=y
}
case_client_selector_after_dashdash() { map; refused "$T/repo" '--agent-model' --dry-run -- --agent-model=big; }
case_env_flag() { map; refused "$T/repo" '--env is refused' --env FOO=1 --dry-run; }
case_env_variable_selector() {
	map
	EXTRA_ENV="JIG_SESSIONS_MAP=$T/evil.json" refused "$T/repo" 'JIG_SESSIONS_MAP in the environment is refused' --dry-run
}
case_unknown_argument() { map; refused "$T/repo" 'unknown argument' --yolo; }

# --- the repository map ----------------------------------------------------------
case_unknown_repository() { map; refused "$T/other" 'unknown repository .*/other' --dry-run; }
case_not_a_repository() { map; refused "$T/client" 'not inside a Git repository' --dry-run; }
case_unregistered_worktree() { map; refused "$T/repo-unreg" 'unregistered worktree .*/repo-unreg' --dry-run; }
case_nested_repository_no_fallback() {
	# A nested repository (a submodule's place) is its own: unmapped, it
	# is refused, never the mapped repository around it.
	map
	refused "$T/repo/sub" 'unknown repository .*/repo/sub' --dry-run
}
case_unknown_provider() { map; refused "$T/repo" 'unknown provider "nope"' --provider nope --dry-run; }
case_unapproved_provider() {
	map '.repositories.repo.providers = ["local"]'
	refused "$T/repo" 'provider "other" is not approved' --provider other --dry-run
}
case_missing_default() { map 'del(.repositories.repo.default_provider)'; refused "$T/repo" 'names no default provider' --dry-run; }
case_ambiguous_default() {
	map '.repositories.repo.default_provider = ["local", "other"]'
	refused "$T/repo" 'default provider is ambiguous' --dry-run
}
case_malformed_map() {
	map '.extra = 1'
	refused "$T/repo" 'unknown key|"extra"' --dry-run
	map '.format = "jig-sessions/9"'
	refused "$T/repo" 'format "jig-sessions/9"' --dry-run
	map '.repositories.repo.mode = "write"'
	refused "$T/repo" 'repositories.repo.mode' --dry-run
	map '.providers.local.endpoint = "localhost:1234"'
	refused "$T/repo" 'providers.local.endpoint' --dry-run
	map '.clients.fake.env.OPENAI_API_KEY = "x"'
	refused "$T/repo" 'OPENAI_API_KEY: a credential-like name' --dry-run
	map '.repositories.repo.capabilities = ["docker"]'
	refused "$T/repo" 'capabilities' --dry-run
	map '.repositories.twin = .repositories.repo'
	refused "$T/repo" 'mapped twice' --dry-run
}
case_map_file_rules() {
	map
	chmod 644 "$CFG/sessions.json"
	refused "$T/repo" 'mode 0600' --dry-run
	map
	mv "$CFG/sessions.json" "$CFG/real.json"
	ln -s real.json "$CFG/sessions.json"
	refused "$T/repo" 'sessions.json' --dry-run
	rm "$CFG/sessions.json"
	refused "$T/repo" 'sessions.json' --dry-run
}
case_map_unreadable() {
	map
	chmod 000 "$CFG"
	refused "$T/repo" "the repository map" --dry-run
	grep -q "Permission denied" "$T/err" || fail "EACCES on the map's directory not named: $(cat "$T/err")"
	chmod 700 "$CFG"
	mv "$CFG" "$T/home/.config/real" && touch "$CFG" && chown "$USER_NAME:" "$CFG"
	refused "$T/repo" "the repository map" --dry-run
	grep -Eq "Not a directory|is not a directory" "$T/err" || fail "ENOTDIR on the map's directory not named: $(cat "$T/err")"
	rm "$CFG" && mv "$T/home/.config/real" "$CFG"
	rm "$CFG/sessions.json"
	refused "$T/repo" "sessions.json" --dry-run
}
# Must-show 4 (issue 45): a repository's .envrc points XDG_CONFIG_HOME,
# XDG_STATE_HOME and HOME into the repository, where a wider map (rw,
# another provider) waits; jig reads the operator's own map and state root.
case_env_map_ignored() {
	map
	mkdir -p "$T/repo/.cfg/jig"
	jq -n --arg t "$T" '{format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent")], trees: [($t + "/client"), "/"]}},
	  providers: {wide: {client: "fake", endpoint: "api.evil.example:443"}},
	  repositories: {repo: {root: ($t + "/repo"), mode: "rw", context: "work", default_provider: "wide", providers: ["wide"]}}}' \
		>"$T/repo/.cfg/jig/sessions.json"
	mkdir -p "$T/repo/.config" && cp -a "$T/repo/.cfg/jig" "$T/repo/.config/jig"
	chown -R "$USER_NAME:" "$T/repo/.cfg" "$T/repo/.config" && chmod 600 "$T/repo/.cfg/jig/sessions.json"
	EXTRA_ENV="XDG_CONFIG_HOME=$T/repo/.cfg XDG_STATE_HOME=$T/repo/.state" j "$T/repo" --dry-run --json
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$T/err")"
	want_sha=$(sha256sum <"$CFG/sessions.json" | cut -c1-64)
	jq -e --arg sha "$want_sha" --arg st "$(state_of "$T/repo")" '.repository.mode == "ro" and .repository.context == "personal"
	  and .provider.id == "local" and .map_sha256 == $sha and .state_root == $st' "$T/out" >/dev/null ||
		fail "the environment chose the map or the state root: $(jq -c '[.repository, .provider.id, .map_sha256, .state_root]' "$T/out")"
	# HOME pointed there too (its .config/jig holds the wider map).
	EXTRA_ENV="HOME=$T/repo" j "$T/repo" --dry-run --json
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$T/err")"
	jq -e --arg sha "$want_sha" '.repository.mode == "ro" and .map_sha256 == $sha' "$T/out" >/dev/null ||
		fail "HOME chose the map: $(jq -c '[.repository.mode, .map_sha256]' "$T/out")"
	# With no map of the operator's, the repository's is not a fallback.
	rm "$CFG/sessions.json"
	EXTRA_ENV="XDG_CONFIG_HOME=$T/repo/.cfg" refused "$T/repo" "$H/.config/jig/sessions.json" --dry-run
}
# The map's directory inside a mapped repository (a link to it) is refused.
case_map_inside_repository() {
	map
	mkdir -p "$T/repo/.cfg" && mv "$CFG" "$T/repo/.cfg/jig" && ln -s "$T/repo/.cfg/jig" "$CFG"
	chown -R "$USER_NAME:" "$T/repo/.cfg"
	refused "$T/repo" "the repository map's directory $T/repo/.cfg/jig is inside the mapped repository \"repo\"" --dry-run
}
# The map's directory, or one above it, writable by others is refused
# (a sticky one above is not: /var/tmp holds this test).
case_map_dir_writable_by_others() {
	map
	chmod 770 "$CFG"
	refused "$T/repo" "the repository map: $H/.config/jig is writable by others \(mode 0770\); refused \(chmod go-w" --dry-run
	chmod 700 "$CFG" && chmod 777 "$T/home/.config"
	refused "$T/repo" "$H/.config is writable by others \(mode 0777\) and not sticky" --dry-run
	chmod 1777 "$T/home/.config"
	j "$T/repo" --dry-run
	[ "$rc" -eq 0 ] || fail "a sticky directory above the map was refused: $(cat "$T/err")"
}
# The state root inside a mapped repository (the home itself mapped) is refused.
case_state_root_inside_repository() {
	map
	mkdir -p "$T/cfg" && mv "$CFG/sessions.json" "$T/cfg/" && rmdir "$CFG" && ln -s "$T/cfg" "$CFG" && mkdir "$T/home/.git"
	chown -R "$USER_NAME:" "$T/cfg" "$T/home/.git"
	jq --arg h "$H" '.repositories.home = (.repositories.repo | .root = $h | del(.worktrees))' "$T/cfg/sessions.json" >"$T/cfg/m" &&
		mv "$T/cfg/m" "$T/cfg/sessions.json" && chown "$USER_NAME:" "$T/cfg/sessions.json" && chmod 600 "$T/cfg/sessions.json"
	refused "$H" "the state root $H/.local/state/jig-sessions/personal/fake/[0-9a-f]{32} is inside the (mapped )?repository" --dry-run
}
case_unsafe_runtime_dir() {
	map
	mkdir -p "$T/rt" && chown "$USER_NAME:" "$T/rt" && chmod 700 "$T/rt"
	RUNTIME="$T/rt" refused "$T/repo" 'XDG_RUNTIME_DIR|/run/user' --dry-run
}

# Issue 45 (review L4): a launch that fails after jig's pty pair is open
# (here the fault point "session-instance") closes the pair: stopped at
# the end of the launch, jig holds no /dev/ptmx or /dev/pts descriptor.
case_pty_closed_on_early_failure() {
	map
	EXTRA_ENV="JIG_FAULT_FAIL=session-instance JIG_FAULT_STOP=session-launch-end JIG_FAULT_LOG=$T/fault.log" j "$T/repo" &
	bg=$!
	i=0
	until [ -s "$T/fault.log" ]; do
		i=$((i + 1))
		[ "$i" -lt 300 ] || { kill "$bg" 2>/dev/null; fail "jig never reached the end of its launch: $(cat "$T/err")"; }
		sleep 0.1
	done
	pid=$(cut -d' ' -f2 "$T/fault.log" | tail -n 1)
	held=$(ls -l "/proc/$pid/fd" | grep -E '/dev/(ptmx|pts/)' || true)
	# runuser stops itself when its child stops: both go on.
	parent=$(ps -o ppid= -p "$pid" | tr -d ' ')
	kill -CONT "$pid" "$parent"
	wait "$bg" || true
	grep -q 'fault point "session-instance"' "$T/err" || fail "the launch did not fail where it should: $(cat "$T/err")"
	[ -z "$held" ] || fail "jig still holds its pty pair after a failed launch: $held"
}

# --- high-risk flags: in the plan, refused until built --------------------------------
high_risk() {
	map
	j "$T/repo" --dry-run "--$1"
	[ "$rc" -eq 2 ] || fail "--$1: exit $rc"
	grep -q -- "--$1: not built yet; the session was not started" "$T/err" || fail "--$1: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line"
	grep -q -- "--$1 (not built yet)" "$T/out" || fail "--$1 not in the plan"
}
case_high_risk_docker() { high_risk docker; }
case_high_risk_browser() { high_risk browser; }
case_high_risk_voice() { high_risk voice; }
case_high_risk_release() { high_risk release; }
case_high_risk_production() { high_risk production; }
case_high_risk_maintenance() { high_risk maintenance; }

# --- the plan ---------------------------------------------------------------------------
case_plan_text() {
	map
	j "$T/repo/src" --dry-run
	[ "$rc" -eq 0 ] || fail "exit $rc"
	cat "$T/out"
	for want in "session of repository repo" "worktree *$T/repo \\(read-only\\)" "cwd *$T/repo/src" \
		"TMPDIR *$RT/jig/sessions/@session/tmp" "provider *local at 127.0.0.1:1234 \\(loopback" \
		"state root *$(state_of "$T/repo")" "capabilities *none" "high-risk +none" \
		"policy sha256 [0-9a-f]{64}" \
		"program *$T/client/bin/agent --interactive --model local-7b" "dry run: nothing was started" \
		"git *through jig's broker: /usr/bin/git \(sha256 [0-9a-f]{64}\), policy libexec/git-command.json \(sha256 [0-9a-f]{64}\), 0 approved remote\(s\); ssh refused"; do
		grep -Eq -- "$want" "$T/out" || fail "plan lacks /$want/"
	done
	! grep -q "cache" "$T/out" || fail "the plan names a policy cache (issue 44: there is none)"
}
case_plan_json() {
	map
	j "$T/repo-wt" --dry-run --json --provider remote -- --verbose
	[ "$rc" -eq 0 ] || fail "exit $rc"
	jq -e --arg t "$T" --arg rt "$RT" --arg st "$(state_of "$T/repo")" '.schema == "jig-session-plan/1" and .repository.id == "repo"
	  and .repository.worktree == ($t + "/repo-wt") and .repository.mode == "ro" and .repository.context == "personal"
	  and .repository.common_dir == ($t + "/repo/.git")
	  and .tmpdir.path == ($rt + "/jig/sessions/@session/tmp") and .provider.id == "remote"
	  and .provider.endpoint == "api.example.com:443" and .provider.network.connect == ["api.example.com:443"]
	  and .state_root == $st and .capabilities == [] and .high_risk == []
	  and (.snapshot.manifest_sha256 | test("^[0-9a-f]{64}$")) and (.policy_sha256 | test("^[0-9a-f]{64}$"))
	  and (has("cache_path") or has("cache_hit") | not)
	  and .argv == [($t + "/client/bin/agent"), "--interactive", "--verbose"]
	  and .permission_plan.schema == "jig-permission-plan/1"' "$T/out" >/dev/null || fail "plan json: $(cat "$T/out")"
	# The broker's policies and their digests (issue 45, Slice 4A).
	jq -e --arg g "$(sha256sum /usr/bin/git | cut -d" " -f1)" '.broker.socket == "/.jig/broker/sock"
	  and .broker.git == "/usr/bin/git" and .broker.git_sha256 == $g and .broker.git_policy == "libexec/git-command.json"
	  and (.broker.git_policy_sha256 | test("^[0-9a-f]{64}$")) and .broker.git_remotes == [] and .broker.ssh == "refused"' \
		"$T/out" >/dev/null || fail "plan json broker: $(jq .broker "$T/out")"
	# The environment allowlist: the map's, jig's; no credential.
	jq -e '.permission_plan.env | (has("HOME") and has("TMPDIR") and has("TERM") and .AGENT_MODE == "session"
	  and (has("OPENAI_API_KEY") | not))' "$T/out" >/dev/null || fail "plan env: $(jq .permission_plan.env "$T/out")"
}
case_dry_run_starts_nothing() {
	map
	j "$T/repo" --dry-run
	[ "$rc" -eq 0 ] || fail "exit $rc"
	[ ! -e "$T/home/.local/state/jig-sessions" ] || fail "a dry run created the state root"
	[ -z "$(ls -A "$RT/jig/sessions" 2>/dev/null)" ] || fail "a dry run left a session directory"
}

# --- the digest ----------------------------------------------------------------------------
case_digest_deterministic() {
	map
	a=$(sha "$T/repo" --dry-run --json)
	b=$(sha "$T/repo" --dry-run --json)
	[ "$a" = "$b" ] || fail "same inputs, two digests"
	# Issue 44: no policy is kept between launches; each is composed anew.
	# ($RT is shared by every session test; the digest covers this test's paths.)
	[ ! -e "$RT/jig/cache/$a.json" ] || fail "a policy cache entry was written: $RT/jig/cache/$a.json"
}
case_digest_follows_inputs() {
	map
	a=$(sha "$T/repo" --dry-run --json)
	b=$(sha "$T/repo" --dry-run --json --provider other)
	[ "$a" != "$b" ] || fail "another provider kept the digest"
	map '.repositories.repo.mode = "rw"'
	c=$(sha "$T/repo" --dry-run --json)
	[ "$a" != "$c" ] && [ "$b" != "$c" ] || fail "a changed map entry kept the digest"
	map '.providers.local.endpoint = "127.0.0.1:1235"'
	d=$(sha "$T/repo" --dry-run --json)
	[ "$a" != "$d" ] || fail "a changed endpoint kept the digest"
	map
	e=$(sha "$T/repo" --dry-run --json -- --verbose)
	[ "$a" != "$e" ] || fail "other agent arguments kept the digest"
	f=$(sha "$T/repo" --dry-run --json)
	[ "$a" = "$f" ] || fail "the same inputs again gave another digest"
}

# --- the catalog ------------------------------------------------------------------------------
# with_catalog EDIT [again]: a private copy of the prefix (again: the same
# copy) whose newly signed snapshot's catalog is the installed one passed
# through jq EDIT.
with_catalog() {
	[ -n "${2:-}" ] || { rm -rf "$T/prefix" && cp -a "$P" "$T/prefix"; }
	cur="$T/prefix/lib/jig/$(readlink "$T/prefix/lib/jig/current")"
	rm -rf "$T/stage" && mkdir "$T/stage" && (cd "$cur" && cp -r modules libexec "$T/stage/")
	jq "$1" "$cur/libexec/catalog.json" >"$T/stage/libexec/catalog.json"
	seq=$(($(jq .sequence "$cur/manifest.json") + 1))
	"$T/prefix/bin/jig-snapshot" create --dir "$T/stage" --id "s$seq" --sequence "$seq" \
		--module sandbox-linux:sandbox:modules/sandbox-linux.so --module http:http:modules/http.so --module acp:acp:modules/acp.so --module display:display:modules/display.so >/dev/null
	"$T/prefix/bin/jig-snapshot" sign --dir "$T/stage" --key "$JIG_DEV_KEY" >/dev/null
	"$T/prefix/bin/jig-snapshot" install --dir "$T/stage" --prefix "$T/prefix" >/dev/null
	JIG="$T/prefix/bin/jig"
}
case_digest_follows_catalog() {
	map
	with_catalog '.'
	a=$(sha "$T/repo" --dry-run --json)
	with_catalog '.fragments["session-limits"].limits.tasks = 513'
	b=$(sha "$T/repo" --dry-run --json)
	jq -e '.permission_plan.limits.tasks == 513' "$T/out" >/dev/null || fail "the fragment was not composed"
	[ "$a" != "$b" ] || fail "a changed catalog fragment kept the digest"
}
case_digest_follows_snapshot() {
	map
	with_catalog '.'
	a=$(sha "$T/repo" --dry-run --json)
	with_catalog '.' again
	b=$(sha "$T/repo" --dry-run --json)
	[ "$a" != "$b" ] || fail "another snapshot (same catalog) kept the digest"
}
case_malformed_catalog() {
	map
	with_catalog '.kinds.session.fragments += ["network-host"]'
	refused "$T/repo" 'catalog kind "session"' --dry-run
	with_catalog 'del(.kinds.session)'
	refused "$T/repo" 'no scope kind "session"' --dry-run
	with_catalog '.fragments["session-env"].env.GITHUB_TOKEN = "x"'
	refused "$T/repo" 'GITHUB_TOKEN' --dry-run
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
