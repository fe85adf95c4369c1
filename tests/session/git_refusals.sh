#!/bin/sh
# The Git directory's launch refusals (issue 45, decision 210), plain lane:
# what jig protects is resolved from the map's root, and a repository file
# that would redirect it refuses the launch with one line, nothing started:
# a commondir in the repository's own Git directory, a linked worktree's
# gitfile naming anything but <common>/worktrees/<id>, a root gitfile naming
# a directory inside the worktree, a hooks link to a missing directory, a
# nested .git that is a link (rw). Each case_* is one ctest
# (session_git_refusal.<case>); jig runs as the unprivileged user jigtest.
set -eu
: "${JIG_TEST_PREFIX:?}"
USER_NAME=jigtest
UID_T=$(id -u "$USER_NAME")
T=$(mktemp -d /var/tmp/jig-git-refusal.XXXXXX)
chmod 755 "$T"
RT=/run/user/$UID_T
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$RT" && chown "$USER_NAME:" "$RT" && chmod 700 "$RT"
mkdir -p "$T/repo/.git/worktrees/wt" "$T/repo/.git/modules/m" "$T/repo-wt" "$T/client/bin" "$T/home/.config/jig"
# The map is found from the password database's home (decision 215): the
# test's $T/home is bound over jigtest's for each call (as tests/session/cases.sh).
H=$(getent passwd "$USER_NAME" | cut -d: -f6)
[ -d "$H" ] || { mkdir -p "$H" && chown "$USER_NAME:" "$H"; }
printf 'gitdir: %s/repo/.git/worktrees/wt\n' "$T" >"$T/repo-wt/.git"
printf '../..\n' >"$T/repo/.git/worktrees/wt/commondir"
printf '../..\n' >"$T/repo/.git/modules/m/commondir"
printf '#!/usr/bin/sh\necho agent "$@"\n' >"$T/client/bin/agent" && chmod 755 "$T/client/bin/agent"

map() {
	jq -n --arg t "$T" --arg mode "${1:-ro}" '{
	  format: "jig-sessions/1",
	  clients: {fake: {command: [($t + "/client/bin/agent")], trees: [($t + "/client"), "/usr/bin"]}},
	  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
	  repositories: {repo: {root: ($t + "/repo"), worktrees: [($t + "/repo-wt")], mode: $mode, context: "personal",
	                        default_provider: "local", providers: ["local"]}}
	}' >"$T/home/.config/jig/sessions.json"
	chown -R "$USER_NAME:" "$T" && chmod 700 "$T/home" && chmod 600 "$T/home/.config/jig/sessions.json"
}
# refused DIR PATTERN: exit 2, one line matching PATTERN, nothing on stdout.
refused() {
	set +e
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$T/home" "$H" \
		runuser -u "$USER_NAME" -- env -C "$1" HOME="$H" XDG_RUNTIME_DIR="$RT" \
		TERM=xterm "$JIG_TEST_PREFIX/bin/jig" session --dry-run >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	cat "$T/err"
	[ "$rc" -eq 2 ] || fail "exit $rc, expected a refusal"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
	grep -Eq -- "$2" "$T/err" || fail "error does not match /$2/"
	[ ! -s "$T/out" ] || fail "something was printed on stdout"
}
accepted() {
	set +e
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$T/home" "$H" \
		runuser -u "$USER_NAME" -- env -C "$1" HOME="$H" XDG_RUNTIME_DIR="$RT" \
		TERM=xterm "$JIG_TEST_PREFIX/bin/jig" session --dry-run --json >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || fail "the dry run was refused: $(cat "$T/err")"
}

case_planted_commondir() {
	map rw
	accepted "$T/repo"
	mkdir -p "$T/repo/evil" && echo '[core]' >"$T/repo/evil/config" && echo ../evil >"$T/repo/.git/commondir"
	refused "$T/repo" "^jig: session: $T/repo/.git/commondir redirects Git to $T/repo/evil; .*refused\$"
}
case_linked_gitfile_elsewhere() {
	map rw
	accepted "$T/repo-wt"
	printf 'gitdir: %s/repo/.git/modules/m\n' "$T" >"$T/repo-wt/.git"
	refused "$T/repo-wt" "$T/repo-wt/.git names $T/repo/.git/modules/m, not one of $T/repo/.git/worktrees/; refused"
}
case_linked_commondir_elsewhere() {
	map rw
	mkdir -p "$T/other/.git"
	printf '%s/other/.git\n' "$T" >"$T/repo/.git/worktrees/wt/commondir"
	refused "$T/repo-wt" "(commondir names $T/other/.git, not the repository's|not in the repository map)"
}
case_root_gitfile_inside() {
	map rw
	mkdir -p "$T/repo/inner" && rm -rf "$T/repo/.git" && printf 'gitdir: inner\n' >"$T/repo/.git" && chown -R "$USER_NAME:" "$T/repo"
	refused "$T/repo" "$T/repo/.git names $T/repo/inner, inside the worktree .*refused"
}
case_hooks_link_missing() {
	map rw
	ln -s ../.githooks "$T/repo/.git/hooks"
	refused "$T/repo" "$T/repo/.git/hooks is a link to a missing directory .*refused"
}
case_nested_dotgit_link() {
	map rw
	mkdir -p "$T/repo/x" && ln -s "$T/repo/.git" "$T/repo/x/.git"
	refused "$T/repo" "$T/repo/x/.git is a symbolic link .*refused"
	map ro
	accepted "$T/repo" # only an rw worktree is walked
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
