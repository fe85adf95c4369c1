#!/bin/sh
# jig session launched (issue 34, must-show 1 and 5's environment part), in
# the supported-host lane as the unprivileged user: a fake agent (a shell
# script in its client tree) reports what it sees. The mapped worktree is
# readable, writable only when mapped rw; a sibling repository, a sibling
# worktree, another session's TMPDIR, the host's /tmp, the runtime parent,
# ~/.ssh and ~/.config/gh are not; TMPDIR is the exact private directory
# and is gone after a normal exit, after SIGTERM to jig and after the agent
# is SIGKILLed; a raw credential in the caller's environment is not inside;
# in rw, the Git directory's hooks and config stay read-only; the provider's
# loopback endpoint 127.0.0.1:1234 answers inside and 1235 does not; a
# remote provider's HOST:PORT is reached through jig's CONNECT relay only.
# scratch_<case> (root, in the lane) makes the caller's /run/user/<uid>.
# Requirements: see docs/session.md ("Tests").
set -eu
: "${JIG_TEST_PREFIX:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }

runtime_dir() {
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u" && chown jigtest: "/run/user/$u" && chmod 700 "/run/user/$u"
	echo marker >"/run/user/$u/marker" && chown jigtest: "/run/user/$u/marker"
	echo marker >/tmp/jig-session-marker && chmod 644 /tmp/jig-session-marker
}
# The guest's /etc/hosts is the read-only host's: for the remote provider
# cases a copy naming provider.test is bound over it in the guest:
# 192.0.2.10, an address of the guest's lo that is not loopback (its own
# guest: root_remote_provider_exact), or 127.0.0.1, which the relay
# refuses for a granted name (decision 218; in the lane).
provider_hosts() {
	getent hosts provider.test >/dev/null && return 0
	cat /etc/hosts >/run/jig-test-hosts && echo "$1 provider.test" >>/run/jig-test-hosts
	chmod 644 /run/jig-test-hosts && mount --bind /run/jig-test-hosts /etc/hosts
}
if [ "${ROOT_MODE:-}" = 1 ]; then
	runtime_dir
	case ${1:-} in
	remote_provider_exact) ip addr add 192.0.2.10/32 dev lo && provider_hosts 192.0.2.10 ;;
	remote_provider_loopback_refused) provider_hosts 127.0.0.1 ;;
	esac
	exit 0
fi

RT=/run/user/$(id -u)
export XDG_RUNTIME_DIR="$RT"
S=$(mktemp -d "$HOME/jig-session.XXXXXX")
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/repo/.git/worktrees/wt" "$S/repo/.git/hooks" "$S/repo-wt" "$S/other/.git" "$S/repo-unreg" "$S/agent" "$HOME/.config/jig" \
	"$HOME/.ssh" "$HOME/.config/gh" "$RT/jig/sessions/0123456789abcdef0123456789abcdef/tmp"
chmod 700 "$RT/jig" "$RT/jig/sessions"
echo secret >"$RT/jig/sessions/0123456789abcdef0123456789abcdef/tmp/other-session"
echo '[core]' >"$S/repo/.git/config" && echo hello >"$S/repo/file" && echo other >"$S/other/file" && echo key >"$HOME/.ssh/id_test" && echo tok >"$HOME/.config/gh/hosts.yml"
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$S" >"$S/repo-wt/.git" && printf '../..\n' >"$S/repo/.git/worktrees/wt/commondir"
mkdir -p "$S/repo/.git/worktrees/unreg" && printf 'gitdir: %s/repo/.git/worktrees/unreg\n' "$S" >"$S/repo-unreg/.git" &&
	printf '../..\n' >"$S/repo/.git/worktrees/unreg/commondir"
# The fake agent: one line "SEE NAME yes|no" a fact, then $1: exit, sleep or die.
cat >"$S/agent/agent" <<EOF
#!/usr/bin/sh
see() { if eval "\$2" >/dev/null 2>&1; then echo "SEE \$1 yes"; else echo "SEE \$1 no"; fi; }
see worktree_readable 'grep -q hello "$S/repo/file"'
see worktree_writable 'echo x >"$S/repo/written"'
see sibling_repository 'cat "$S/other/file"'
see sibling_worktree 'ls "$S/repo-unreg"'
see other_session_tmpdir 'cat "$RT/jig/sessions/0123456789abcdef0123456789abcdef/tmp/other-session"'
see host_tmp 'cat /tmp/jig-session-marker'
see runtime_parent 'cat "$RT/marker"'
see ssh 'cat "$HOME/.ssh/id_test"'
see gh 'cat "$HOME/.config/gh/hosts.yml"'
see tmpdir_writable 'echo x >"\$TMPDIR/x"'
see git_hooks_writable 'echo x >"$S/repo/.git/hooks/pre-commit"'
see git_config_writable 'echo x >>"$S/repo/.git/config"'
see canary 'env | grep -q CANARY'
see credential_names 'env | grep -Eq "OPENAI_API_KEY|GITHUB_TOKEN|SSH_AUTH_SOCK"'
see port_1234 '"$S/agent/http-get" 1234'
see port_1235 '"$S/agent/http-get" 1235'
see remote_provider 'curl -sS --max-time 20 --cacert "$S/agent/ca.pem" https://provider.test:8443/ | grep -q "provider ok"'
see remote_other_port 'curl -sS --max-time 10 --cacert "$S/agent/ca.pem" https://provider.test:8444/'
echo "PROXY=\${HTTPS_PROXY:-none}"
curl -sS --max-time 20 --cacert "$S/agent/ca.pem" https://provider.test:8443/ 2>&1 | head -n 2 | sed 's/^/CURL: /'
see remote_without_relay 'curl -sS --max-time 10 --noproxy "*" --cacert "$S/agent/ca.pem" https://provider.test:8443/'
see state_left 'test -e "\$HOME/left"'
echo "TMPDIR=\$TMPDIR"
echo "HOME=\$HOME"
case "\${1:-}" in
sleep) echo READY; sleep 120 ;;
leave) echo x >"\$HOME/left" ;;
chmod000) chmod 000 "\$HOME" ;;
chmod755) chmod 755 "\$HOME" ;;
interactive) echo READY; read line; echo "GOT \$line"; read line; echo "SIZE \$(stty size)"; kill -9 \$\$ ;;
die) kill -9 \$\$ ;;
esac
EOF
# An HTTP answer from 127.0.0.1:PORT (a connection alone could be jig's
# relay inside the scope, not the server).
cat >"$S/agent/http-get" <<'EOF'
#!/usr/bin/bash
exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
printf 'GET / HTTP/1.0\r\n\r\n' >&3
IFS= read -r -t 10 line <&3 || exit 1
case $line in HTTP/1.*) exit 0 ;; esac
exit 1
EOF
chmod 755 "$S/agent/agent" "$S/agent/http-get"

map() {
	jq -n --arg s "$S" --arg mode "${1:-ro}" --arg prov "${2:-local}" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}, remote: {client: "fake", endpoint: "provider.test:8443"}},
	  repositories: {repo: {root: ($s + "/repo"), worktrees: [($s + "/repo-wt")], mode: $mode, context: "personal",
	                        default_provider: $prov, providers: ["local", "remote"]},
	                 other: {root: ($s + "/other"), mode: "rw", context: "personal", default_provider: "local", providers: ["local"]}}
	}' >"$HOME/.config/jig/sessions.json"
	chmod 600 "$HOME/.config/jig/sessions.json"
}
# session DIR ARGS: jig session in DIR with raw credentials in its
# environment; $rc, $S/out (the agent's terminal output), $S/err.
session() {
	dir=$1
	shift
	set +e
	(cd "$dir" && OPENAI_API_KEY=CANARY-1 GITHUB_TOKEN=CANARY-2 SSH_AUTH_SOCK=/tmp/CANARY-3 "$JIG" session "$@" </dev/null >"$S/out" 2>"$S/err")
	rc=$?
	set -e
	tr -d '\r' <"$S/out" >"$S/o" && mv "$S/o" "$S/out"
	echo "--- jig session $* (exit $rc)"
	cat "$S/out" && tail -n 3 "$S/err"
	return 0
}
sees() { grep -qx "SEE $1 $2" "$S/out" || fail "the agent sees $1: $(grep "SEE $1 " "$S/out" || echo nothing)"; }
tmpdir_of() { sed -n 's/^TMPDIR=//p' "$S/out"; }
# The TMPDIR was the session's exact private directory, and is gone.
tmpdir_gone() {
	t=$(tmpdir_of)
	echo "$t" | grep -Eq "^$RT/jig/sessions/[0-9a-f]{32}/tmp\$" || fail "TMPDIR is $t"
	[ ! -e "$t" ] && [ ! -e "${t%/tmp}" ] || fail "$t (or its session directory) is still there"
}
only_its_grants() {
	for f in sibling_repository sibling_worktree other_session_tmpdir host_tmp runtime_parent ssh gh canary credential_names; do
		sees "$f" no
	done
	sees worktree_readable yes
	sees tmpdir_writable yes
	grep -qx "HOME=$(state_of "$S/repo")" "$S/out" || fail "HOME is not the repository's state root: $(grep HOME= "$S/out")"
}
# The state root of the repository rooted at $1 (its root's digest).
state_of() { echo "$HOME/.local/state/jig-sessions/personal/fake/$(printf %s "$1" | sha256sum | cut -c1-32)"; }

scratch_sees_only_its_grants() { runtime_dir; }
case_sees_only_its_grants() {
	map ro
	session "$S/repo"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	only_its_grants
	sees worktree_writable no
	[ ! -e "$S/repo/written" ] || fail "a read-only worktree was written"
	tmpdir_gone
	[ "$(stat -c %a "$(state_of "$S/repo")")" = 700 ] || fail "the state root is not 0700"
}
scratch_rw_worktree_writable() { runtime_dir; }
case_rw_worktree_writable() {
	map rw
	session "$S/repo"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	only_its_grants
	sees worktree_writable yes
	[ -e "$S/repo/written" ] || fail "the write did not reach the worktree"
	# The Git directory's code-running files stay read-only (decision 139).
	sees git_hooks_writable no
	sees git_config_writable no
	[ ! -e "$S/repo/.git/hooks/pre-commit" ] && [ "$(cat "$S/repo/.git/config")" = "[core]" ] || fail "hooks or config written"
	tmpdir_gone
}
# Must-show 2 in a session: the provider's loopback endpoint (real
# listeners on 1234 and 1235 in the guest) answers; 1235 does not.
scratch_loopback_endpoint_exact() { runtime_dir; }
case_loopback_endpoint_exact() {
	map ro
	python3 -m http.server --bind 127.0.0.1 1234 >/dev/null 2>&1 &
	p1=$!
	python3 -m http.server --bind 127.0.0.1 1235 >/dev/null 2>&1 &
	p2=$!
	trap 'kill $p1 $p2 2>/dev/null; rm -rf "$S"' EXIT
	i=0
	until bash -c 'exec 3<>/dev/tcp/127.0.0.1/1234 && exec 4<>/dev/tcp/127.0.0.1/1235' 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "the guest's listeners did not start"
		sleep 0.1
	done
	session "$S/repo"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	sees port_1234 yes
	sees port_1235 no
}
# Must-show 2's remote provider in a session: the map's endpoint
# provider.test:8443 (the guest's /etc/hosts names 192.0.2.10, on its lo;
# an HTTPS peer there stands in for the provider) is reached through jig's CONNECT relay
# and nothing else is: another port of the same name is refused by the
# relay (its listener never contacted), the peer without the relay is out
# of reach, and the loopback ports are not relayed.
root_remote_provider_exact() { :; }
case_remote_provider_exact() {
	map ro remote
	getent hosts provider.test || fail "the guest's /etc/hosts does not name provider.test: $(ls -l /etc/hosts; tail -n 3 /etc/hosts)"
	provider_peer
	: >"$S/8444.log"
	(cd "$S/repo" && "$JIG" session --dry-run) >"$S/plan" 2>&1 || fail "dry run: $(cat "$S/plan")"
	grep -q "provider.test:8443" "$S/plan" || fail "the plan does not name the endpoint"
	session "$S/repo"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	sees remote_provider yes
	sees remote_other_port no
	sees remote_without_relay no
	sees port_1234 no
	grep -q "https contact" "$S/https.log" || fail "the provider was not reached"
	! grep -q "GET" "$S/8444.log" || fail "port 8444 was reached"
	only_its_grants
}
# A granted remote name that resolves to this host (provider.test is
# 127.0.0.1 here) is refused by the relay with one line; the peer on
# 127.0.0.1:8443 is never contacted (decision 218).
scratch_remote_provider_loopback_refused() { runtime_dir; } # and provider_hosts 127.0.0.1 (above)
case_remote_provider_loopback_refused() {
	map ro remote
	[ "$(getent hosts provider.test | cut -d' ' -f1)" = 127.0.0.1 ] || fail "provider.test is not 127.0.0.1 here"
	provider_peer
	session "$S/repo"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	sees remote_provider no
	grep -q "CURL: .*403" "$S/out" || fail "the relay's refusal did not reach the agent: $(grep CURL: "$S/out")"
	! grep -q "https contact" "$S/https.log" || fail "the peer on this host was reached through a remote grant"
}
# The stand-in provider: an HTTPS peer on provider.test's address:8443,
# and plain listeners on 8444 and 1234.
provider_peer() {
	addr=$(getent hosts provider.test | cut -d' ' -f1)
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=provider.test -addext subjectAltName=DNS:provider.test \
		-keyout "$S/key.pem" -out "$S/agent/ca.pem" 2>/dev/null
	python3 "$JIG_SOURCE/tests/sandbox/https_peer.py" "$S/agent/ca.pem" "$S/key.pem" "$S/https.log" "$addr" &
	p0=$!
	python3 -m http.server --bind "$addr" 8444 >"$S/8444.log" 2>&1 &
	p1=$!
	python3 -m http.server --bind 127.0.0.1 1234 >/dev/null 2>&1 &
	p2=$!
	trap 'kill $p0 $p1 $p2 2>/dev/null; rm -rf "$S"' EXIT
	i=0
	until grep -q listening "$S/https.log" 2>/dev/null && bash -c "exec 3<>/dev/tcp/$addr/8444 && exec 4<>/dev/tcp/127.0.0.1/1234" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "the guest's listeners did not start"
		sleep 0.1
	done
}
# Must-show 7 in a session: at a terminal (tests/sandbox/pty_drive.py
# plays the operator), typed input reaches the agent, its output comes
# back, a resize is seen inside, and after the agent is killed the
# operator's terminal mode is restored.
scratch_interactive_terminal() { runtime_dir; }
case_interactive_terminal() {
	: "${JIG_SOURCE:?}"
	map ro
	(cd "$S/repo" && python3 "$JIG_SOURCE/tests/sandbox/pty_drive.py" expect:READY 'send:hello\r' 'expect:GOT hello' \
		resize:30:100 'send:x\r' 'expect:SIZE 30 100' exit:137 restored -- "$JIG" session -- interactive) ||
		fail "the session at a terminal"
}
scratch_tmpdir_gone_after_sigterm() { runtime_dir; }
case_tmpdir_gone_after_sigterm() {
	map ro
	(cd "$S/repo" && exec "$JIG" session -- sleep </dev/null >"$S/out" 2>"$S/err") &
	pid=$!
	i=0
	until grep -q READY "$S/out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || fail "the agent never got ready: $(cat "$S/err")"
		sleep 0.1
	done
	lease_has_cgroup
	kill -TERM "$pid"
	set +e
	wait "$pid"
	rc=$?
	set -e
	tr -d '\r' <"$S/out" >"$S/o" && mv "$S/o" "$S/out"
	cat "$S/out" "$S/err"
	signalled TERM 15
	tmpdir_gone
}
# The running session's lease records its scope's cgroup, populated
# (issue 45: it was always null).
lease_has_cgroup() {
	i=0
	while :; do
		lease=$(ls "$RT"/jig/sessions/*/lease 2>/dev/null | head -n 1)
		cg=$(jq -r '.cgroup // empty' "$lease" 2>/dev/null || true)
		[ -z "$cg" ] || break
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "the lease records no cgroup: $(cat "$lease" 2>/dev/null)"
		sleep 0.1
	done
	echo "lease cgroup: $cg"
	grep -qx "populated 1" "/sys/fs/cgroup$cg/cgroup.events" || fail "the recorded cgroup $cg is not the running scope's"
	case $cg in */session-repo*) ;; *) fail "the recorded cgroup $cg is not the session's scope" ;; esac
}
# jig's exit after signal $1 ($2): 128+n and one line that says so.
signalled() {
	[ "$rc" -eq $((128 + $2)) ] || fail "exit $rc after SIG$1, expected $((128 + $2))"
	grep -qx "jig: session stopped by SIG$1 (signal $2); the agent was stopped and its scope fenced" "$S/err" ||
		fail "no one-line message after SIG$1: $(tail -n 3 "$S/err")"
}
# SIGINT and SIGHUP as SIGTERM (each from a parent that does not ignore
# it: a background job of sh ignores SIGINT).
scratch_signal_exit_statuses() { runtime_dir; }
case_signal_exit_statuses() {
	map ro
	for sig in INT:2 HUP:1; do
		: >"$S/out"
		(cd "$S/repo" && exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGHUP, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$JIG" session -- sleep </dev/null >"$S/out" 2>"$S/err") &
		pid=$!
		i=0
		until grep -q READY "$S/out" 2>/dev/null; do
			i=$((i + 1))
			[ "$i" -lt 600 ] || fail "the agent never got ready: $(cat "$S/err")"
			sleep 0.1
		done
		kill -"${sig%:*}" "$pid"
		set +e
		wait "$pid"
		rc=$?
		set -e
		tr -d '\r' <"$S/out" >"$S/o" && mv "$S/o" "$S/out"
		signalled "${sig%:*}" "${sig#*:}"
		tmpdir_gone
	done
}
# Must-show 5 (issue 45): state per repository. A file one repository's
# session leaves in its HOME is not in another's; it is in the next
# session of the same repository.
scratch_state_per_repository() { runtime_dir; }
case_state_per_repository() {
	map ro
	session "$S/repo" -- leave
	[ "$rc" -eq 0 ] || fail "exit $rc"
	[ -e "$(state_of "$S/repo")/left" ] || fail "the file was not left in the repository's state root"
	session "$S/other"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	sees state_left no
	grep -qx "HOME=$(state_of "$S/other")" "$S/out" || fail "HOME is not the other repository's state root"
	session "$S/repo"
	sees state_left yes
}
# Must-show 5: the agent's chmod 000 or chmod 755 of its HOME (the state
# root) does not lock the next session out: jig puts its own directory
# back to 0700 and says so.
scratch_state_root_chmod() { runtime_dir; }
case_state_root_chmod() {
	map ro
	for how in chmod000:0 chmod755:755; do
		session "$S/repo" -- "${how%:*}"
		[ "$rc" -eq 0 ] || fail "exit $rc"
		[ "$(stat -c %a "$(state_of "$S/repo")")" = "${how#*:}" ] || fail "the agent's ${how%:*} did not happen"
		session "$S/repo"
		[ "$rc" -eq 0 ] || fail "the next session after the agent's ${how%:*}: exit $rc"
		grep -q "jig: the state root $(state_of "$S/repo") had mode 0*${how#*:}; put back to 0700" "$S/err" || fail "the repair was not said"
		[ "$(stat -c %a "$(state_of "$S/repo")")" = 700 ] || fail "the state root is not 0700 again"
		sees worktree_readable yes
	done
}
scratch_tmpdir_gone_after_agent_killed() { runtime_dir; }
case_tmpdir_gone_after_agent_killed() {
	map ro
	session "$S/repo" -- die
	[ "$rc" -eq 137 ] || fail "exit $rc, expected 137 (SIGKILL)"
	tmpdir_gone
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
