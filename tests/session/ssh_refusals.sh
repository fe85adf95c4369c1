#!/bin/sh
# The session's SSH chain before launch (issue 45 must-show 2, decisions
# 235-238), plain lane: the map's SSH hosts per context and their checks,
# each refusal one line with nothing started (a dry run refuses as the
# launch would): an ssh:// remote of the other context, one agent socket
# for both contexts, an agent socket below /run; the context's agent socket
# missing, stale, not a socket, a symbolic link, another user's, or
# holding none of the approved keys (the other context's agent, or a
# substituted one); a known_hosts writable by others or inside a
# repository. The Plan (text and JSON) lists the SSH hosts, the agent and
# the broker's git scope with its policy sha256. jig runs as jigtest with
# this test's $T/home bound over its password-database home (cases.sh).
set -eu
: "${JIG_TEST_PREFIX:?}"
USER_NAME=jigtest
UID_T=$(id -u "$USER_NAME")
T=$(mktemp -d /var/tmp/jig-ssh.XXXXXX)
chmod 755 "$T"
RT=/run/user/$UID_T
AGENTS=""
cleanup() { for p in $AGENTS; do kill "$p" 2>/dev/null || :; done; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$RT" && chown "$USER_NAME:" "$RT" && chmod 700 "$RT"
mkdir -p "$T/repo/.git" "$T/client/bin" "$T/home/.config/jig" "$T/home/.ssh" "$T/keys"
printf '#!/usr/bin/sh\necho agent "$@"\n' >"$T/client/bin/agent" && chmod 755 "$T/client/bin/agent"
H=$(getent passwd "$USER_NAME" | cut -d: -f6)
[ -d "$H" ] || { mkdir -p "$H" && chown "$USER_NAME:" "$H"; }
for k in personal work; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$T/keys/$k"; done
fp() { ssh-keygen -lf "$T/keys/$1.pub" | cut -d' ' -f2; }
echo "[127.0.0.1]:22022 $(cut -d' ' -f1,2 "$T/keys/work.pub")" >"$T/home/.ssh/known_hosts"
chown -R "$USER_NAME:" "$T"
chmod 700 "$T/home" "$T/home/.ssh"
chmod 644 "$T/home/.ssh/known_hosts"
# agent NAME KEY...: an ssh-agent of jigtest's at $T/home/.ssh/agent-NAME.sock
# ($H/.ssh/... as jig sees it) holding KEYs.
agent() {
	name=$1
	shift
	out=$(runuser -u "$USER_NAME" -- ssh-agent -a "$T/home/.ssh/agent-$name.sock")
	AGENTS="$AGENTS $(echo "$out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')"
	for k in "$@"; do runuser -u "$USER_NAME" -- env SSH_AUTH_SOCK="$T/home/.ssh/agent-$name.sock" ssh-add -q "$T/keys/$k"; done
}
# map [JQ]: a personal repository with one SSH remote, fixture.
map() {
	jq -n --arg t "$T" --arg h "$H" --arg pf "$(fp personal)" --arg wf "$(fp work)" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent")], trees: [($t + "/client")]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {
	    personal: {ssh_agent: ($h + "/.ssh/agent-personal.sock"),
	               ssh_hosts: {fixture: {host: "127.0.0.1", port: 22022, known_hosts: ($h + "/.ssh/known_hosts"), fingerprints: [$pf]}}},
	    work: {ssh_agent: ($h + "/.ssh/agent-work.sock"),
	           ssh_hosts: {forge: {host: "forge.example.com", port: 22, known_hosts: ($h + "/.ssh/known_hosts"), fingerprints: [$wf]}}}},
	  repositories: {repo: {root: ($t + "/repo"), mode: "rw", context: "personal", default_provider: "local", providers: ["local"],
	                        git_remotes: ["ssh://jigtest@fixture/srv/repo.git"]}}
	}' | jq "${1:-.}" >"$T/home/.config/jig/sessions.json"
	chown "$USER_NAME:" "$T/home/.config/jig/sessions.json" && chmod 600 "$T/home/.config/jig/sessions.json"
}
. "${JIG_SOURCE:?}/tests/session/home_bound.sh"
S="$H/.ssh/agent-personal.sock"

case_ssh_plan() {
	agent personal personal
	map
	j --dry-run
	[ "$rc" -eq 0 ] || fail "exit $rc"
	cat "$T/out"
	grep -Eq "^  ssh host +fixture at 127.0.0.1:22022 \\(known_hosts $H/.ssh/known_hosts, 1 approved key\\(s\\), the personal context's agent $S\\)$" "$T/out" ||
		fail "the plan lacks the SSH host"
	! grep -q "forge" "$T/out" || fail "the plan lists the other context's host"
	grep -q "^  git's scope (each brokered request" "$T/out" || fail "the plan lacks the git scope"
	d=$(sed -n "/^  git's scope/,\$p" "$T/out" | sed -n 's/^      policy sha256 \([0-9a-f]\{64\}\).*/\1/p' | head -n 1)
	[ -n "$d" ] || fail "the git scope has no policy sha256"
	j --dry-run --json
	[ "$rc" -eq 0 ] || fail "json: exit $rc"
	jq -e --arg d "$d" --arg s "$S" '.broker.git_scope.name == "session-git" and .broker.git_scope.policy_sha256 == $d
	  and .broker.git_scope.permission_plan.network == "none" and .broker.ssh == "refused"
	  and .broker.ssh_agent == {context: "personal", socket: $s}
	  and (.broker.ssh_hosts | keys) == ["fixture"] and .broker.ssh_hosts.fixture.port == 22022' "$T/out" >/dev/null ||
		fail "plan json: $(jq .broker "$T/out")"
}
case_ssh_remote_other_context() {
	agent personal personal
	map '.repositories.repo.git_remotes = ["ssh://git@forge/org/r.git"]'
	refused 'git_remotes\[0\] "ssh://git@forge/org/r.git": "forge" is not an SSH host of context "personal"'
}
case_ssh_remote_not_alias() {
	map '.repositories.repo.git_remotes = ["ssh://jigtest@fixture:22022/srv/repo.git"]'
	refused 'git_remotes\[0\]: an https://HOST\[:PORT\]/PATH URL, an ssh://\[USER@\]ALIAS/PATH URL or an absolute path'
}
case_ssh_agents_shared() {
	map ".contexts.work.ssh_agent = \"$S\""
	refused "contexts.personal and contexts.work name the same ssh_agent $S; each context has its own agent"
}
case_ssh_agent_below_run() {
	map ".contexts.personal.ssh_agent = \"$RT/ssh-agent.socket\""
	refused "contexts.personal.ssh_agent $RT/ssh-agent.socket: below /run nothing but a regular file is bound"
}
case_ssh_agent_missing() { map; refused "the personal context's ssh agent $S: missing: no agent was started there; refused"; }
case_ssh_agent_stale() {
	# A socket left by an agent that is gone.
	runuser -u "$USER_NAME" -- python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/home/.ssh/agent-personal.sock"
	map
	refused "the personal context's ssh agent $S: no agent answers there \\(a stale socket\\); refused"
}
case_ssh_agent_not_socket() {
	runuser -u "$USER_NAME" -- touch "$T/home/.ssh/agent-personal.sock"
	map
	refused "ssh agent $S: not a socket; refused"
}
case_ssh_agent_link() {
	agent real personal
	runuser -u "$USER_NAME" -- ln -s "$H/.ssh/agent-real.sock" "$T/home/.ssh/agent-personal.sock"
	map
	refused "ssh agent $S: a symbolic link \\(never followed\\); refused"
}
case_ssh_agent_foreign() {
	# A socket of another user's (root's) at the context's path.
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/home/.ssh/agent-personal.sock"
	map
	refused "ssh agent $S: owned by another user; refused"
}
case_ssh_agent_other_context() {
	# The personal context's map entry names the work agent's socket.
	agent work work
	map ".contexts.personal.ssh_agent = \"$H/.ssh/agent-work.sock\" | .contexts.work.ssh_agent = \"$H/.ssh/agent-w2.sock\""
	refused "the personal context's ssh agent $H/.ssh/agent-work.sock holds none of the keys approved for fixture \\(contexts.personal.ssh_hosts.fixture.fingerprints\\); refused"
}
case_ssh_agent_substituted() {
	# An agent at the personal path that holds the work key only.
	agent personal work
	map
	refused "ssh agent $S holds none of the keys approved for fixture"
}
case_ssh_known_hosts_writable() {
	agent personal personal
	chmod 666 "$T/home/.ssh/known_hosts"
	map
	refused "the known_hosts of SSH host fixture, $H/.ssh/known_hosts: writable by others \\(chmod go-w\\); refused"
}
case_ssh_known_hosts_inside_repository() {
	agent personal personal
	cp "$T/home/.ssh/known_hosts" "$T/repo/known_hosts" && chown "$USER_NAME:" "$T/repo/known_hosts"
	map ".contexts.personal.ssh_hosts.fixture.known_hosts = \"$T/repo/known_hosts\""
	refused "the known_hosts $T/repo/known_hosts is inside the mapped repository \"repo\""
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
