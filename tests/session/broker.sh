#!/bin/sh
# The session's command broker (issue 45 must-show 2, seed 001 Slice 4A),
# in the supported-host lane as the unprivileged user: a fake agent in an
# rw session runs `git` and `ssh` from its PATH, which are jig's shim; jig's
# broker outside the scope checks each request and runs the pinned git.
# Through it the agent commits, switches branch, fetches and pushes to a
# fixture remote the map approves (a local bare repository); each bypass
# is refused with one line: direct ssh, -c core.sshCommand, --upload-pack,
# an ext:: transport, a remote the map does not approve (a path, an HTTPS
# host and port), -C outside the worktree, git run from outside the
# worktree; the repository's own post-commit hook does not run;
# GIT_SSH_COMMAND and GIT_DIR in the agent's environment have no
# effect (the shim forwards no environment). Over SSH and over HTTPS:
# case_git_over_ssh, case_git_over_https. Requirements: docs/session.md
# ("Git through jig").
set -eu
: "${JIG_TEST_PREFIX:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Remote hosts (case git_remote, decision 310), as root in a guest of its
# own: a non-loopback address of the guest (TEST-NET-1, 192.0.2.10, on a
# dummy interface; never routed anywhere) where the fixture sshd and HTTPS
# server listen, and two names: forge.test at it, loop.test at 127.0.0.1.
root_git_remote() {
	if modprobe dummy 2>/dev/null && ip link add jigr0 type dummy 2>/dev/null; then
		ip addr add 192.0.2.10/24 dev jigr0 && ip link set jigr0 up
	else
		ip addr add 192.0.2.10/32 dev lo
	fi
	cat /etc/hosts >/run/jig-hosts
	printf '192.0.2.10 forge.test\n127.0.0.1 loop.test\n' >>/run/jig-hosts
	chmod 644 /run/jig-hosts && mount --bind /run/jig-hosts /etc/hosts
}

# The pinned git swapped mid-session (case git_pinned, decision 312), as
# root in the lane (a mount and a process, which the lane's reset undoes):
# once /tmp/jig-git-swap appears, a script that prints FAKE-GIT-RAN is
# bound over /usr/bin/git and /usr/lib/git-core/git.
scratch_git_pinned() {
	printf '#!/bin/sh\necho FAKE-GIT-RAN\n' >/tmp/jig-fake-git && chmod 755 /tmp/jig-fake-git
	setsid sh -c 'i=0; while [ ! -e /tmp/jig-git-swap ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i+1)); done
		mount --bind /tmp/jig-fake-git /usr/bin/git && mount --bind /tmp/jig-fake-git /usr/lib/git-core/git && touch /tmp/jig-git-swapped' \
		</dev/null >/dev/null 2>&1 &
}

# A foreign-owned agent socket (case git_foreign_socket), as root in the
# lane: root's socket at the personal context's path in jigtest's home
# (a tmpfs the lane's reset mounts again).
scratch_git_foreign_socket() {
	h=$(getent passwd jigtest | cut -d: -f6)
	mkdir -p "$h/.ssh" && chown jigtest: "$h/.ssh" && chmod 700 "$h/.ssh"
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$h/.ssh/agent-personal.sock"
}

if [ "${ROOT_MODE:-}" = 1 ]; then
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u" && chown jigtest: "/run/user/$u" && chmod 700 "/run/user/$u"
	[ "${1:-}" != git_remote ] || root_git_remote
	[ "${1:-}" != git_pinned ] || scratch_git_pinned
	[ "${1:-}" != git_foreign_socket ] || scratch_git_foreign_socket
	exit 0
fi

RT=/run/user/$(id -u)
export XDG_RUNTIME_DIR="$RT"
S=$(mktemp -d "$HOME/jig-broker.XXXXXX")
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/agent" "$HOME/.config/jig"
git init -q --bare "$S/remote.git"
git init -q --bare "$S/unapproved.git"
git init -q -b main "$S/repo"
git -C "$S/repo" config user.name "Fixture Operator"
git -C "$S/repo" config user.email operator@example.test
echo one >"$S/repo/file" && git -C "$S/repo" add file && git -C "$S/repo" commit -qm one
git -C "$S/repo" remote add origin "$S/remote.git"
git -C "$S/repo" push -q origin main
# Outside the worktree, readable by the operator, approved by no one.
git init -q -b main "$S/secret.git" && echo s >"$S/secret.git/f" && git -C "$S/secret.git" add f &&
	git -C "$S/secret.git" -c user.name=o -c user.email=o@example.test commit -qm SECRET-CANARY
git -C "$S/repo" remote add elsewhere https://git.example.test:444/r.git
# The operator's own hook: jig's git runs no hook (core.hooksPath=/dev/null).
printf '#!/bin/sh\ntouch "%s/canary-hook"\n' "$S" >"$S/repo/.git/hooks/post-commit"
chmod 755 "$S/repo/.git/hooks/post-commit"

# The fake agent: "RC name rc" and "ERR name <its first stderr line>" per
# command, then what git printed where asked.
cat >"$S/agent/agent" <<EOF
#!/usr/bin/sh
run() { name=\$1; shift; "\$@" >"\$TMPDIR/out" 2>"\$TMPDIR/err"; echo "RC \$name \$?"; echo "ERR \$name \$(head -n 1 "\$TMPDIR/err")"; echo "LINES \$name \$(wc -l <"\$TMPDIR/err")"; }
cd "$S/repo"
# The second round (the operator's fault skips the broker's remote check):
# what the git scope holds by itself.
if [ -e "$S/agent/fault-round" ]; then
	run contained_push git push "$S/unapproved.git" feature
	run contained_fetch git fetch "$S/secret.git" main
	echo "FETCHED \$(git log -1 --format=%s FETCH_HEAD 2>/dev/null)"
	exit 0
fi
echo "GIT=\$(command -v git) SSH=\$(command -v ssh)"
run switch git switch -c feature
echo two >file
run add git add file
run commit git commit -qm two
run branch sh -c 'git rev-parse --abbrev-ref HEAD >"\$TMPDIR/branch"'
echo "BRANCH \$(cat "\$TMPDIR/branch")"
run push git push -q -u origin feature
run fetch git fetch -q origin
run back git switch -q main
run ssh ssh git@git.example.test
run ssh_path /.jig/shim/ssh -p 22 example.test
run config_ssh git -c core.sshCommand="touch $S/canary-c" fetch origin
run upload_pack git fetch --upload-pack="touch $S/canary-u" origin
run ext git fetch "ext::sh -c touch% $S/canary-ext"
run unapproved_path git push "$S/unapproved.git" feature
run unapproved_remote git push elsewhere feature
run unapproved_url git push https://git.example.test:444/r.git feature
run outside_c git -C / status
run alias git st
cd "\$TMPDIR"
run outside_cwd git status
cd "$S/repo"
run env_ssh env GIT_SSH_COMMAND="touch $S/canary-env" GIT_DIR=/nonexistent git fetch -q origin
EOF
chmod 755 "$S/agent/agent"
jq -n --arg s "$S" '{
  format: "jig-sessions/1",
  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
  repositories: {repo: {root: ($s + "/repo"), mode: "rw", context: "personal", default_provider: "local",
                        providers: ["local"], git_remotes: [($s + "/remote.git")]}}
}' >"$HOME/.config/jig/sessions.json"
chmod 600 "$HOME/.config/jig/sessions.json"

session() {
	set +e
	(cd "$S/repo" && "$JIG" session </dev/null >"$S/out" 2>"$S/err")
	rc=$?
	set -e
	tr -d '\r' <"$S/out" >"$S/o" && mv "$S/o" "$S/out"
	echo "--- jig session (exit $rc)"
	cat "$S/out" && tail -n 3 "$S/err"
}
ok() { grep -qx "RC $1 0" "$S/out" || fail "$1 did not succeed: $(grep -E "^(RC|ERR) $1 " "$S/out" | tr '\n' ' ')"; }
# refused NAME LINE: exit 126 and exactly one stderr line, LINE.
refused() {
	grep -qx "RC $1 126" "$S/out" || fail "$1 was not refused: $(grep -E "^(RC|ERR) $1 " "$S/out" | tr '\n' ' ')"
	grep -qxF "ERR $1 $2" "$S/out" || fail "$1 said: $(grep "^ERR $1 " "$S/out")"
	grep -qx "LINES $1 1" "$S/out" || fail "$1 said more than one line"
}

scratch_git_through_broker() { :; }
case_git_through_broker() {
	# What a killed session left: removed (no runtime directory of that id).
	stale="$HOME/.local/state/jig/sessions/0123456789abcdef0123456789abcdef"
	mkdir -p "$stale/broker" && echo x >"$stale/broker/gitconfig"
	session
	[ ! -e "$stale" ] || fail "a gone session's broker directory stays"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -qx "GIT=/.jig/shim/git SSH=/.jig/shim/ssh" "$S/out" || fail "git and ssh on PATH are not jig's shim"
	for c in switch add commit branch push fetch back env_ssh; do ok "$c"; done
	grep -qx "BRANCH feature" "$S/out" || fail "git's output did not come back to the agent"
	[ "$(git -C "$S/remote.git" log -1 --format=%s feature)" = two ] || fail "the push did not reach the fixture remote"
	[ "$(git -C "$S/repo" rev-parse --abbrev-ref HEAD)" = main ] || fail "the switch back did not happen"
	refused ssh "jig: ssh is not available in a session: Git reaches remotes through jig"
	refused ssh_path "jig: ssh is not available in a session: Git reaches remotes through jig"
	refused config_ssh "jig: git -c: configuration on the command line is refused in a session (Git's configuration is jig's)"
	refused upload_pack "jig: git fetch --upload-pack: refused in a session (names the program Git runs for the remote side)"
	refused ext "jig: git fetch: the transport of \"ext::sh -c touch% $S/canary-ext\" is refused in a session (ext:: and fd:: run programs; remotes are the map's)"
	refused unapproved_path "jig: git push: \"$S/unapproved.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_remote "jig: git push: remote \"elsewhere\" (https://git.example.test:444/r.git) is not one of the map's approved git_remotes; refused"
	refused unapproved_url "jig: git push: \"https://git.example.test:444/r.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused outside_c "jig: git -C: runs only inside the session's worktree $S/repo; refused"
	refused alias "jig: git st: not a subcommand a session may run (aliases are not honoured; \`jig session --dry-run\` lists the policy)"
	refused outside_cwd "jig: git: runs only inside the session's worktree $S/repo; refused"
	for c in c u ext env hook; do [ ! -e "$S/canary-$c" ] || fail "canary-$c: a program the agent named ran"; done
	[ -z "$(git -C "$S/unapproved.git" for-each-ref)" ] || fail "the unapproved remote was pushed to"
	[ ! -e "$HOME/.local/state/jig/sessions" ] || [ -z "$(ls -A "$HOME/.local/state/jig/sessions")" ] ||
		fail "the broker's directory stays after the session: $(ls "$HOME/.local/state/jig/sessions")"
	# The git scope (decision 222): with the broker's remote check skipped
	# by the test-only fault, a path outside the worktree, its Git
	# directory and the approved remotes is not there for git.
	touch "$S/agent/fault-round"
	JIG_FAULT_FAIL="session broker remote check" session
	[ "$rc" -eq 0 ] || fail "fault round: exit $rc"
	grep -Eq "^RC contained_push [0-9]+$" "$S/out" && ! grep -qx "RC contained_push 0" "$S/out" ||
		fail "the brokered git reached a repository outside its scope: $(grep -E "^(RC|ERR) contained_push " "$S/out" | tr '\n' ' ')"
	! grep -qx "RC contained_push 126" "$S/out" || fail "contained_push was refused by policy, not held by the scope: $(grep "^ERR contained_push " "$S/out")"
	[ -z "$(git -C "$S/unapproved.git" for-each-ref)" ] || fail "the brokered git pushed outside its scope"
	! grep -qx "RC contained_fetch 0" "$S/out" || fail "the brokered git fetched from outside its scope"
	! grep -q "SECRET-CANARY" "$S/out" || fail "the operator's repository outside the scope was read: $(grep FETCHED "$S/out")"
}

# Over SSH (decisions 235-237): an sshd of jigtest's on 127.0.0.1:22022 with
# fixture host and user keys, the operator's known_hosts, the personal and
# work contexts' own ssh-agents (each holding its own key, the personal one
# the work key too; the server would accept either). Through the broker the agent commits, switches branch,
# pushes and fetches over SSH; each bypass is refused with one line: direct
# ssh, -c core.sshCommand, ext::, an unapproved host, port or alias, and the
# personal context's socket replaced mid-session by the work agent's.
# GIT_SSH_COMMAND in the agent's environment has no effect. The work key
# never authenticates (the sshd's log).
scratch_git_over_ssh() { :; }
case_git_over_ssh() {
	P=22022
	K="$S/keys"
	mkdir -p "$K" "$HOME/.ssh" "$S/sshd" && chmod 700 "$HOME/.ssh"
	for k in host personal work; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$K/$k"; done
	cat "$K/personal.pub" "$K/work.pub" >"$S/sshd/authorized_keys"
	printf '%s\n' "Port $P" "ListenAddress 127.0.0.1" "HostKey $K/host" "PidFile $S/sshd/pid" \
		"AuthorizedKeysFile $S/sshd/authorized_keys" "StrictModes no" "UsePAM no" "PasswordAuthentication no" \
		"KbdInteractiveAuthentication no" "LogLevel VERBOSE" >"$S/sshd/config"
	/usr/sbin/sshd -f "$S/sshd/config" -E "$S/sshd/log" || fail "the fixture sshd did not start: $(cat "$S/sshd/log")"
	echo "[127.0.0.1]:$P $(cut -d' ' -f1,2 "$K/host.pub")" >"$HOME/.ssh/known_hosts"
	chmod 644 "$HOME/.ssh/known_hosts"
	agents=""
	for c in personal work; do
		out=$(ssh-agent -a "$HOME/.ssh/agent-$c.sock")
		agents="$agents $(echo "$out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')"
		SSH_AUTH_SOCK="$HOME/.ssh/agent-$c.sock" ssh-add -q "$K/$c"
	done
	# The personal agent holds the work key too, loaded first: only the
	# approved key may be offered (IdentitiesOnly with its public half).
	SSH_AUTH_SOCK="$HOME/.ssh/agent-personal.sock" ssh-add -q -D
	SSH_AUTH_SOCK="$HOME/.ssh/agent-personal.sock" ssh-add -q "$K/work" "$K/personal"
	trap 'kill $(cat "$S/sshd/pid") $agents 2>/dev/null; rm -rf "$S"' EXIT
	git init -q --bare "$S/ssh-remote.git"
	git -C "$S/repo" push -q "$S/ssh-remote.git" main
	url="ssh://jigtest@fixture$S/ssh-remote.git"
	git -C "$S/repo" remote set-url origin "$url"
	{
		printf '%s\n' '#!/usr/bin/sh' \
			'run() { name=$1; shift; "$@" >"$TMPDIR/out" 2>"$TMPDIR/err"; echo "RC $name $?"; echo "ERR $name $(head -n 1 "$TMPDIR/err")"; echo "LINES $name $(wc -l <"$TMPDIR/err")"; }'
		echo "cd '$S/repo'"
		echo 'run switch git switch -c feature'
		echo 'echo two >file'
		echo 'run add git add file'
		echo 'run commit git commit -qm two'
		echo 'run push git push -q -u origin feature'
		echo 'run fetch git fetch -q origin'
		echo 'run back git switch -q main'
		echo "run env_ssh env GIT_SSH_COMMAND='touch $S/canary-env' git fetch -q origin"
		echo "run ssh ssh -p $P jigtest@127.0.0.1 true"
		echo "run config_ssh git -c core.sshCommand='touch $S/canary-c' fetch origin"
		echo "run ext git fetch 'ext::ssh -p $P jigtest@127.0.0.1 %S r.git'"
		echo "run unapproved_host git push ssh://jigtest@127.0.0.1$S/ssh-remote.git feature"
		echo "run unapproved_port git push ssh://jigtest@fixture:2222$S/ssh-remote.git feature"
		echo "run unapproved_alias git push ssh://jigtest@forge$S/ssh-remote.git feature"
		# The operator's personal socket is replaced by the work agent's.
		echo 'touch .jig-swap'
		echo 'i=0; while [ ! -e .jig-swapped ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
		echo 'run other_socket git push -q origin feature'
		echo 'rm -f .jig-swap .jig-swapped'
	} >"$S/agent/agent"
	jq -n --arg s "$S" --arg h "$HOME" --arg pf "$(ssh-keygen -lf "$K/personal.pub" | cut -d' ' -f2)" \
		--arg wf "$(ssh-keygen -lf "$K/work.pub" | cut -d' ' -f2)" --arg url "$url" --argjson p "$P" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {
	    personal: {ssh_agent: ($h + "/.ssh/agent-personal.sock"),
	               ssh_hosts: {fixture: {host: "127.0.0.1", port: $p, known_hosts: ($h + "/.ssh/known_hosts"), fingerprints: [$pf]}}},
	    work: {ssh_agent: ($h + "/.ssh/agent-work.sock"),
	           ssh_hosts: {forge: {host: "127.0.0.1", port: $p, known_hosts: ($h + "/.ssh/known_hosts"), fingerprints: [$wf]}}}},
	  repositories: {repo: {root: ($s + "/repo"), mode: "rw", context: "personal", default_provider: "local",
	                        providers: ["local"], git_remotes: [$url]}}
	}' >"$HOME/.config/jig/sessions.json"
	# The swap, outside the scope, when the agent asks for it.
	(
		i=0
		while [ ! -e "$S/repo/.jig-swap" ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
		mv "$HOME/.ssh/agent-work.sock" "$HOME/.ssh/agent-personal.sock" && touch "$S/repo/.jig-swapped"
	) &
	session
	wait
	[ "$rc" -eq 0 ] || fail "exit $rc"
	for c in switch add commit push fetch back env_ssh; do ok "$c"; done
	[ "$(git -C "$S/ssh-remote.git" log -1 --format=%s feature)" = two ] || fail "the push over SSH did not reach the fixture remote"
	[ "$(git -C "$S/repo" rev-parse --abbrev-ref HEAD)" = main ] || fail "the switch back did not happen"
	[ "$(git -C "$S/repo" rev-parse origin/feature)" = "$(git -C "$S/ssh-remote.git" rev-parse feature)" ] ||
		fail "the fetch over SSH did not update origin/feature"
	refused ssh "jig: ssh is not available in a session: Git reaches remotes through jig"
	refused config_ssh "jig: git -c: configuration on the command line is refused in a session (Git's configuration is jig's)"
	refused ext "jig: git fetch: the transport of \"ext::ssh -p $P jigtest@127.0.0.1 %S r.git\" is refused in a session (ext:: and fd:: run programs; remotes are the map's)"
	refused unapproved_host "jig: git push: \"ssh://jigtest@127.0.0.1$S/ssh-remote.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_port "jig: git push: \"ssh://jigtest@fixture:2222$S/ssh-remote.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_alias "jig: git push: \"ssh://jigtest@forge$S/ssh-remote.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused other_socket "jig: git push: the personal context's ssh agent $HOME/.ssh/agent-personal.sock holds none of the keys approved for fixture (contexts.personal.ssh_hosts.fixture.fingerprints); refused"
	for c in c env; do [ ! -e "$S/canary-$c" ] || fail "canary-$c: a program the agent named ran"; done
	wfp=$(ssh-keygen -lf "$K/work.pub" | cut -d' ' -f2)
	grep -q "Accepted publickey for jigtest" "$S/sshd/log" || fail "no SSH login: $(tail -n 5 "$S/sshd/log")"
	! grep -qF "$wfp" "$S/sshd/log" || fail "the work key was offered to the personal remote"
	[ ! -e "$HOME/.local/state/jig/sessions" ] || [ -z "$(ls -A "$HOME/.local/state/jig/sessions")" ] ||
		fail "the broker's or ssh directory stays after the session: $(ls -R "$HOME/.local/state/jig/sessions")"
}

# Over HTTPS (decisions 290-294): git http-backend behind TLS on
# 127.0.0.1:18443 (tests/session/git_https_server.py) with a certificate of
# a test CA made here with openssl and Basic authentication; a second
# server on 127.0.0.1:18444 with a certificate of another CA. The map's
# personal context names both ports with the first CA and the operator's
# credential file. Through the broker the agent commits, switches branch,
# pushes and fetches over HTTPS; refused with one line each: -c
# http.proxy, -c http.sslVerify=false, -c http.sslCAInfo, a plain http://
# URL, an unapproved host and port, and (after the operator's
# configuration gains http.sslVerify=false mid-session) the repository's
# own http.* configuration, and (after the CA file becomes writable by
# others) the request. The second server's certificate does not chain
# to the map's CA: git's TLS check fails and nothing is pushed. In one
# command reaching every host (fetch --all), host other, whose map CA is
# its own but whose server presents a certificate of the fixture's CA, is
# refused by TLS (each host trusts only its own CA, decision 311). The
# credential is not in the agent's scope (its file, its environment,
# /.jig), and the server saw it on the requests.
scratch_git_over_https() { :; }
case_git_over_https() {
	P=18443
	R=18444
	K="$S/tls"
	mkdir -p "$K" "$S/srv" "$S/rogue"
	# tls NAME: a CA, and a certificate for 127.0.0.1 it signs
	tls() {
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=jig $1 test CA" -keyout "$K/$1-ca.key" -out "$K/$1-ca.pem" 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$K/$1.key" -out "$K/$1.csr" 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1\n' >"$K/$1.ext"
		openssl x509 -req -in "$K/$1.csr" -CA "$K/$1-ca.pem" -CAkey "$K/$1-ca.key" -CAcreateserial -days 2 \
			-extfile "$K/$1.ext" -out "$K/$1.pem" 2>/dev/null
	}
	tls good
	tls rogue
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=jig other test CA" -keyout "$K/other-ca.key" -out "$K/other-ca.pem" 2>/dev/null
	mkdir -p "$HOME/.jig-tls" && chmod 700 "$HOME/.jig-tls"
	cp "$K/good-ca.pem" "$HOME/.jig-tls/ca.pem" && chmod 644 "$HOME/.jig-tls/ca.pem"
	cp "$K/other-ca.pem" "$HOME/.jig-tls/other-ca.pem" && chmod 644 "$HOME/.jig-tls/other-ca.pem"
	printf 'username=jigtest\npassword=HTTPS-CANARY-%s\n' "$$" >"$HOME/.jig-tls/credential" && chmod 600 "$HOME/.jig-tls/credential"
	git init -q --bare "$S/srv/repo.git"
	git init -q --bare "$S/rogue/repo.git"
	git -C "$S/repo" push -q "$S/srv/repo.git" main
	# Host "other" (its own CA in the map) serves a certificate of the
	# fixture's CA: trusted only if one host's CA served another (decision 311).
	mkdir -p "$S/other" && git init -q --bare "$S/other/repo.git" && git -C "$S/repo" push -q "$S/other/repo.git" main
	/usr/bin/python3 "$JIG_SOURCE/tests/session/git_https_server.py" "$S/srv" "$K/good.pem" "$K/good.key" $P "$S/https.log" "jigtest:HTTPS-CANARY-$$" &
	srv=$!
	/usr/bin/python3 "$JIG_SOURCE/tests/session/git_https_server.py" "$S/rogue" "$K/rogue.pem" "$K/rogue.key" $R "$S/rogue.log" "jigtest:HTTPS-CANARY-$$" &
	rogue=$!
	/usr/bin/python3 "$JIG_SOURCE/tests/session/git_https_server.py" "$S/other" "$K/good.pem" "$K/good.key" 18446 "$S/other.log" "jigtest:HTTPS-CANARY-$$" &
	other=$!
	trap 'kill $srv $rogue $other 2>/dev/null; rm -rf "$S" "$HOME/.jig-tls"' EXIT
	url="https://127.0.0.1:$P/repo.git"
	git -C "$S/repo" remote set-url origin "$url"
	git -C "$S/repo" remote add rogue "https://127.0.0.1:$R/repo.git"
	git -C "$S/repo" remote add other "https://127.0.0.1:18446/repo.git"
	git -C "$S/repo" remote remove elsewhere # unapproved: fetch --all would be refused (decision 315)
	{
		printf '%s\n' '#!/usr/bin/sh' \
			'run() { name=$1; shift; "$@" >"$TMPDIR/out" 2>"$TMPDIR/err"; echo "RC $name $?"; echo "ERR $name $(head -n 1 "$TMPDIR/err")"; echo "LINES $name $(wc -l <"$TMPDIR/err")"; }'
		echo "cd '$S/repo'"
		echo 'run switch git switch -c feature'
		echo 'echo two >file'
		echo 'run add git add file'
		echo 'run commit git commit -qm two'
		echo 'run push git push -q -u origin feature'
		echo 'run fetch git fetch -q origin'
		echo 'run back git switch -q main'
		# One command reaching fixture, rogue and other: each host's own CA only.
		echo 'run cross git fetch -q --all'
		echo "run proxy git -c http.proxy=http://127.0.0.1:1234 fetch origin"
		echo "run ssl_verify git -c http.sslVerify=false fetch rogue"
		echo "run ca_info git -c http.sslCAInfo=/etc/ssl/certs/ca-certificates.crt fetch rogue"
		echo "run plain_http git push http://127.0.0.1:$P/repo.git feature"
		echo "run unapproved_port git push https://127.0.0.1:18445/repo.git feature"
		echo "run unapproved_host git push https://localhost:$P/repo.git feature"
		echo 'run rogue git push -q rogue feature'
		echo 'grep -r HTTPS-CANARY /proc/self/environ /.jig "$HOME" >/dev/null 2>&1 && echo "CREDENTIAL SEEN"'
		echo "cat '$HOME/.jig-tls/credential' >/dev/null 2>&1 && echo 'CREDENTIAL FILE SEEN'"
		echo 'echo "JIGDIR $(ls /.jig | tr "\\n" " ")"'
		# The operator's configuration gains http.sslVerify=false.
		echo 'touch .jig-swap'
		echo 'i=0; while [ ! -e .jig-swapped ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
		echo 'run repo_config git fetch -q origin'
		# Then the CA file becomes writable by others (checked per request).
		echo 'touch .jig-swap2'
		echo 'i=0; while [ ! -e .jig-swapped2 ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
		echo 'run ca_writable git fetch -q origin'
		echo 'rm -f .jig-swap .jig-swapped .jig-swap2 .jig-swapped2'
	} >"$S/agent/agent"
	jq -n --arg s "$S" --arg h "$HOME" --arg url "$url" --argjson p "$P" --argjson r "$R" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {
	    personal: {https_hosts: {fixture: {host: "127.0.0.1", port: $p, ca_file: ($h + "/.jig-tls/ca.pem"), credential: ($h + "/.jig-tls/credential")},
	                             rogue: {host: "127.0.0.1", port: $r, ca_file: ($h + "/.jig-tls/ca.pem"), credential: ($h + "/.jig-tls/credential")},
	                             other: {host: "127.0.0.1", port: 18446, ca_file: ($h + "/.jig-tls/other-ca.pem"), credential: ($h + "/.jig-tls/credential")}}}},
	  repositories: {repo: {root: ($s + "/repo"), mode: "rw", context: "personal", default_provider: "local",
	                        providers: ["local"], git_remotes: [$url, ("https://127.0.0.1:" + ($r | tostring) + "/repo.git"), "https://127.0.0.1:18446/repo.git"]}}
	}' >"$HOME/.config/jig/sessions.json"
	(
		i=0
		while [ ! -e "$S/repo/.jig-swap" ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
		git -C "$S/repo" config http.sslVerify false && touch "$S/repo/.jig-swapped"
		i=0
		while [ ! -e "$S/repo/.jig-swap2" ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
		git -C "$S/repo" config --unset http.sslVerify && chmod 666 "$HOME/.jig-tls/ca.pem" && touch "$S/repo/.jig-swapped2"
	) &
	session
	wait $!
	[ "$rc" -eq 0 ] || fail "exit $rc"
	for c in switch add commit push fetch back; do ok "$c"; done
	[ "$(git -C "$S/srv/repo.git" log -1 --format=%s feature)" = two ] || fail "the push over HTTPS did not reach the fixture remote"
	[ "$(git -C "$S/repo" rev-parse --abbrev-ref HEAD)" = main ] || fail "the switch back did not happen"
	[ "$(git -C "$S/repo" rev-parse origin/feature)" = "$(git -C "$S/srv/repo.git" rev-parse feature)" ] ||
		fail "the fetch over HTTPS did not update origin/feature"
	refused proxy "jig: git -c: configuration on the command line is refused in a session (Git's configuration is jig's)"
	refused ssl_verify "jig: git -c: configuration on the command line is refused in a session (Git's configuration is jig's)"
	refused ca_info "jig: git -c: configuration on the command line is refused in a session (Git's configuration is jig's)"
	refused plain_http "jig: git push: \"http://127.0.0.1:$P/repo.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_port "jig: git push: \"https://127.0.0.1:18445/repo.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_host "jig: git push: \"https://localhost:$P/repo.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused repo_config "jig: git fetch: http.sslverify in the repository's configuration is not honoured for an HTTPS remote (TLS, proxy and credentials are jig's); refused"
	refused ca_writable "jig: git fetch: the CA file of HTTPS host fixture, $HOME/.jig-tls/ca.pem: writable by others (chmod go-w); refused"
	# Not the map's CA: git's own TLS check refuses (not jig's 126).
	grep -Eq "^RC rogue (128|1)$" "$S/out" || fail "the push to a server of another CA: $(grep -E "^(RC|ERR) rogue " "$S/out" | tr '\n' ' ')"
	grep -Eq "^ERR rogue .*(certificate|SSL)" "$S/out" || fail "the rogue push failed otherwise: $(grep "^ERR rogue " "$S/out")"
	[ -z "$(git -C "$S/rogue/repo.git" for-each-ref)" ] || fail "the server of another CA was pushed to"
	# In one command, host other trusts only its own CA, not fixture's.
	grep -qx "RC cross 1" "$S/out" || fail "git fetch --all was not git's own failure (rogue and other refused by TLS): $(grep -E "^(RC|ERR) cross " "$S/out" | tr '\n' ' ')"
	! git -C "$S/repo" rev-parse -q --verify refs/remotes/other/main >/dev/null || fail "host other was fetched from with the fixture's CA"
	! grep -q "git-upload-pack" "$S/other.log" || fail "host other was asked for a pack: $(cat "$S/other.log")"
	! grep -q "CREDENTIAL" "$S/out" || fail "the agent's scope holds the credential: $(grep CREDENTIAL "$S/out")"
	grep -q "^JIGDIR " "$S/out" && ! grep "^JIGDIR " "$S/out" | grep -q https || fail "the agent's /.jig holds jig's HTTPS files: $(grep "^JIGDIR" "$S/out")"
	grep -q "POST /repo.git/git-receive-pack auth=ok" "$S/https.log" || fail "the server saw no authenticated push: $(cat "$S/https.log")"
	grep -q "POST /repo.git/git-upload-pack auth=ok" "$S/https.log" || fail "the server saw no authenticated fetch"
	[ ! -e "$HOME/.local/state/jig/sessions" ] || [ -z "$(ls -A "$HOME/.local/state/jig/sessions")" ] ||
		fail "the broker's directory stays after the session: $(ls -R "$HOME/.local/state/jig/sessions")"
}

# Remote hosts (decision 310): the fixture sshd and a TLS git http-backend
# listen on 192.0.2.10 (root_git_remote), which the map names forge.test;
# loop.test resolves to 127.0.0.1. The brokered git's scope has no route
# but jig's CONNECT relay (outside it), which allows exactly the request's
# approved HOST:PORT and resolves the name itself: over SSH through jig's
# ProxyCommand (jig-connect) with the host key bound to [forge.test]:22022
# in the operator's known_hosts (no entry for any address), over HTTPS
# with the relay as git's http.proxy. The agent pushes and fetches over
# both; an unapproved host (the same address by number) and port, and an
# approved name resolving to loopback over SSH and HTTPS are refused with
# one line each. With the broker's name check skipped (the test-only
# fault), the relay refuses the loopback answer itself and nothing is
# reached.
case_git_remote() {
	getent hosts forge.test | grep -q '^192\.0\.2\.10 ' || fail "the root set-up did not name forge.test: $(getent hosts forge.test)"
	P=22022
	W=18443
	K="$S/keys"
	mkdir -p "$K" "$HOME/.ssh" "$S/sshd" "$S/srv" "$HOME/.jig-tls" && chmod 700 "$HOME/.ssh" "$HOME/.jig-tls"
	for k in host personal; do ssh-keygen -q -t ed25519 -N '' -C "$k" -f "$K/$k"; done
	cp "$K/personal.pub" "$S/sshd/authorized_keys"
	printf '%s\n' "Port $P" "ListenAddress 192.0.2.10" "HostKey $K/host" "PidFile $S/sshd/pid" \
		"AuthorizedKeysFile $S/sshd/authorized_keys" "StrictModes no" "UsePAM no" "PasswordAuthentication no" \
		"KbdInteractiveAuthentication no" "LogLevel VERBOSE" >"$S/sshd/config"
	/usr/sbin/sshd -f "$S/sshd/config" -E "$S/sshd/log" || fail "the fixture sshd did not start: $(cat "$S/sshd/log")"
	# The host key bound to the approved name only, never to an address.
	echo "[forge.test]:$P $(cut -d' ' -f1,2 "$K/host.pub")" >"$HOME/.ssh/known_hosts"
	chmod 644 "$HOME/.ssh/known_hosts"
	out=$(ssh-agent -a "$HOME/.ssh/agent-personal.sock")
	agent_pid=$(echo "$out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
	SSH_AUTH_SOCK="$HOME/.ssh/agent-personal.sock" ssh-add -q "$K/personal"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=jig remote test CA" -keyout "$K/ca.key" -out "$K/ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=forge.test" -keyout "$K/web.key" -out "$K/web.csr" 2>/dev/null
	printf 'subjectAltName=DNS:forge.test,DNS:loop.test\n' >"$K/web.ext"
	openssl x509 -req -in "$K/web.csr" -CA "$K/ca.pem" -CAkey "$K/ca.key" -CAcreateserial -days 2 -extfile "$K/web.ext" \
		-out "$K/web.pem" 2>/dev/null
	cp "$K/ca.pem" "$HOME/.jig-tls/ca.pem" && chmod 644 "$HOME/.jig-tls/ca.pem"
	printf 'username=jigtest\npassword=REMOTE-CANARY-%s\n' "$$" >"$HOME/.jig-tls/credential" && chmod 600 "$HOME/.jig-tls/credential"
	git init -q --bare "$S/ssh-remote.git"
	git init -q --bare "$S/srv/repo.git"
	git -C "$S/repo" push -q "$S/ssh-remote.git" main
	git -C "$S/repo" push -q "$S/srv/repo.git" main
	/usr/bin/python3 "$JIG_SOURCE/tests/session/git_https_server.py" "$S/srv" "$K/web.pem" "$K/web.key" $W "$S/https.log" \
		"jigtest:REMOTE-CANARY-$$" 192.0.2.10 &
	srv=$!
	trap 'kill $(cat "$S/sshd/pid") $agent_pid $srv 2>/dev/null; rm -rf "$S" "$HOME/.jig-tls"' EXIT
	sshurl="ssh://jigtest@forge$S/ssh-remote.git"
	weburl="https://forge.test:$W/repo.git"
	git -C "$S/repo" remote set-url origin "$sshurl"
	git -C "$S/repo" remote add web "$weburl"
	{
		printf '%s\n' '#!/usr/bin/sh' \
			'run() { name=$1; shift; "$@" >"$TMPDIR/out" 2>"$TMPDIR/err"; echo "RC $name $?"; echo "ERR $name $(head -n 1 "$TMPDIR/err")"; echo "LINES $name $(wc -l <"$TMPDIR/err")"; }'
		echo "cd '$S/repo'"
		echo 'if [ -e .jig-fault-round ]; then'
		echo "  run relay_ssh git push ssh://jigtest@loopssh$S/ssh-remote.git HEAD:refs/heads/relay"
		echo "  run relay_https git push https://loop.test:$W/repo.git HEAD:refs/heads/relay"
		echo '  exit 0'
		echo 'fi'
		echo 'run switch git switch -c feature'
		echo 'echo two >file'
		echo 'run add git add file'
		echo 'run commit git commit -qm two'
		echo 'run ssh_push git push -q -u origin feature'
		echo 'run ssh_fetch git fetch -q origin'
		echo 'run https_push git push -q web feature'
		echo 'run https_fetch git fetch -q web'
		echo 'run back git switch -q main'
		echo "run unapproved_host git push https://192.0.2.10:$W/repo.git feature"
		echo "run unapproved_port git push https://forge.test:18444/repo.git feature"
		echo "run loop_ssh git push ssh://jigtest@loopssh$S/ssh-remote.git feature"
		echo "run loop_https git push https://loop.test:$W/repo.git feature"
	} >"$S/agent/agent"
	jq -n --arg s "$S" --arg h "$HOME" --arg pf "$(ssh-keygen -lf "$K/personal.pub" | cut -d' ' -f2)" \
		--arg sshurl "$sshurl" --arg weburl "$weburl" --argjson p "$P" --argjson w "$W" '
	  {host: "forge.test", port: $p, known_hosts: ($h + "/.ssh/known_hosts"), fingerprints: [$pf]} as $ssh |
	  {host: "forge.test", port: $w, ca_file: ($h + "/.jig-tls/ca.pem"), credential: ($h + "/.jig-tls/credential")} as $web | {
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {
	    personal: {ssh_agent: ($h + "/.ssh/agent-personal.sock"),
	               ssh_hosts: {forge: $ssh, loopssh: ($ssh | .host = "loop.test")},
	               https_hosts: {web: $web, loopweb: ($web | .host = "loop.test")}}},
	  repositories: {repo: {root: ($s + "/repo"), mode: "rw", context: "personal", default_provider: "local",
	                        providers: ["local"],
	                        git_remotes: [$sshurl, $weburl, ("ssh://jigtest@loopssh" + $s + "/ssh-remote.git"),
	                                      ("https://loop.test:" + ($w | tostring) + "/repo.git")]}}
	}' >"$HOME/.config/jig/sessions.json"
	session
	[ "$rc" -eq 0 ] || fail "exit $rc"
	for c in switch add commit ssh_push ssh_fetch https_push https_fetch back; do ok "$c"; done
	[ "$(git -C "$S/ssh-remote.git" log -1 --format=%s feature)" = two ] || fail "the push over SSH did not reach the remote host"
	[ "$(git -C "$S/srv/repo.git" log -1 --format=%s feature)" = two ] || fail "the push over HTTPS did not reach the remote host"
	[ "$(git -C "$S/repo" rev-parse origin/feature)" = "$(git -C "$S/ssh-remote.git" rev-parse feature)" ] ||
		fail "the fetch over SSH did not update origin/feature"
	[ "$(git -C "$S/repo" rev-parse web/feature)" = "$(git -C "$S/srv/repo.git" rev-parse feature)" ] ||
		fail "the fetch over HTTPS did not update web/feature"
	grep -q "Accepted publickey for jigtest" "$S/sshd/log" || fail "no SSH login: $(tail -n 5 "$S/sshd/log")"
	grep -q "POST /repo.git/git-receive-pack auth=ok" "$S/https.log" || fail "the server saw no authenticated push: $(cat "$S/https.log")"
	refused unapproved_host "jig: git push: \"https://192.0.2.10:$W/repo.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused unapproved_port "jig: git push: \"https://forge.test:18444/repo.git\" is neither a remote of this repository nor one of the map's approved git_remotes; refused"
	refused loop_ssh "jig: git push: SSH host loopssh (loop.test) resolves to a refused address (loopback): a remote host is never this host; refused"
	refused loop_https "jig: git push: HTTPS host loopweb (loop.test) resolves to a refused address (loopback): a remote host is never this host; refused"
	# The relay holds by itself: the broker's name check skipped.
	touch "$S/repo/.jig-fault-round"
	JIG_FAULT_FAIL="session broker host check" session
	rm -f "$S/repo/.jig-fault-round"
	[ "$rc" -eq 0 ] || fail "fault round: exit $rc"
	for c in relay_ssh relay_https; do
		grep -Eq "^RC $c [0-9]+$" "$S/out" && ! grep -Eq "^RC $c (0|126)$" "$S/out" ||
			fail "$c: $(grep -E "^(RC|ERR) $c " "$S/out" | tr '\n' ' ')"
	done
	grep -qF "ERR relay_ssh jig-connect: loop.test:$P: the relay answered: HTTP/1.1 403 Forbidden: the granted name resolves to a refused address (loopback)" "$S/out" ||
		fail "relay_ssh said: $(grep '^ERR relay_ssh' "$S/out")"
	grep -q "^ERR relay_https .*403" "$S/out" || fail "relay_https said: $(grep '^ERR relay_https' "$S/out")"
	for r in "$S/ssh-remote.git" "$S/srv/repo.git"; do
		! git -C "$r" rev-parse -q --verify relay >/dev/null || fail "$r was reached through a loopback answer"
	done
}

# The git that runs is the one hashed at the broker's start (decision 312):
# after the session started, root binds a fake over /usr/bin/git
# (scratch_git_pinned); the agent's git through the broker still runs the
# pinned bytes (jig's private copy, bound over both paths in the git
# scope): its commit succeeds and the fake never prints.
case_git_pinned() {
	# the test's own git after the swap (both paths become the fake)
	git="$S/realgit" && cp /usr/bin/git "$git"
	{
		printf '%s\n' '#!/usr/bin/sh' \
			'run() { name=$1; shift; "$@" >"$TMPDIR/out" 2>"$TMPDIR/err"; echo "RC $name $?"; echo "ERR $name $(head -n 1 "$TMPDIR/err")"; echo "OUT $name $(head -n 1 "$TMPDIR/out")"; }'
		echo "cd '$S/repo'"
		echo 'run before git rev-parse --abbrev-ref HEAD'
		echo 'touch .jig-swap'
		echo 'i=0; while [ ! -e .jig-swapped ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
		echo 'echo two >file'
		echo 'run add git add file'
		echo 'run commit git commit -qm pinned'
		echo 'run after git rev-parse --abbrev-ref HEAD'
		echo 'rm -f .jig-swap .jig-swapped'
	} >"$S/agent/agent"
	(
		i=0
		while [ ! -e "$S/repo/.jig-swap" ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
		touch /tmp/jig-git-swap
		i=0
		while [ ! -e /tmp/jig-git-swapped ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
		touch "$S/repo/.jig-swapped"
	) &
	session
	wait $!
	[ -e /tmp/jig-git-swapped ] || fail "the fake git was not bound (scratch_git_pinned)"
	[ "$(/usr/bin/git --version)" = FAKE-GIT-RAN ] || fail "the fake is not /usr/bin/git outside the session"
	[ "$rc" -eq 0 ] || fail "exit $rc"
	! grep -q FAKE-GIT-RAN "$S/out" || fail "the swapped /usr/bin/git ran in the session: $(grep -E '^(RC|OUT|ERR) ' "$S/out" | tr '\n' ' ')"
	for c in before add commit after; do ok "$c"; done
	grep -qx "OUT after main" "$S/out" || fail "git's output: $(grep '^OUT after' "$S/out")"
	[ "$($git -C "$S/repo" log -1 --format=%s)" = pinned ] || fail "the commit was not made"
}

# The personal context's agent socket is root's (scratch_git_foreign_socket):
# the launch is refused with one line naming the context and the socket,
# and no agent starts (decision 235; the plain lane's
# session_ssh.ssh_agent_foreign, here on the supported host).
case_git_foreign_socket() {
	[ "$(stat -c %U "$HOME/.ssh/agent-personal.sock")" = root ] || fail "the scratch set-up made no root socket"
	touch "$HOME/.ssh/known_hosts" && chmod 644 "$HOME/.ssh/known_hosts"
	echo 'echo AGENT-STARTED' >>"$S/agent/agent"
	jq -n --arg s "$S" --arg h "$HOME" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  contexts: {personal: {ssh_agent: ($h + "/.ssh/agent-personal.sock"),
	               ssh_hosts: {fixture: {host: "127.0.0.1", port: 22022, known_hosts: ($h + "/.ssh/known_hosts"),
	                                     fingerprints: ["SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]}}}},
	  repositories: {repo: {root: ($s + "/repo"), mode: "rw", context: "personal", default_provider: "local",
	                        providers: ["local"], git_remotes: [("ssh://jigtest@fixture" + $s + "/r.git")]}}
	}' >"$HOME/.config/jig/sessions.json"
	session
	[ "$rc" -ne 0 ] || fail "the session started with a foreign-owned agent socket"
	! grep -q AGENT-STARTED "$S/out" || fail "the agent ran"
	[ "$(wc -l <"$S/err")" -eq 1 ] || fail "more than one line: $(cat "$S/err")"
	grep -qF "the personal context's ssh agent $HOME/.ssh/agent-personal.sock: owned by another user; refused" "$S/err" ||
		fail "said: $(cat "$S/err")"
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
