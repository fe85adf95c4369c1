#!/bin/sh
# The repository is never a way back to the operator (issue 45, must-show
# 1; decisions 210-212): in rw sessions of a plain repository, one with a
# submodule and a linked worktree, a fake agent tries every known way to
# leave code that the operator's next git runs: core.fsmonitor in
# .git/config and in .git/modules/<sub>/config, hooks in a repository
# without .git/hooks, .git/commondir pointed at a worktree directory
# holding a hostile config, .git renamed and a new one created, a linked
# worktree's own Git directory and its .git gitfile rewritten, a nested
# repository planted (also by renaming the directory that holds a
# submodule's .git). Each is refused inside the scope or, for what mounts
# cannot stop, quarantined when the session ends; then the operator's git
# status, checkout and commit (outside any scope) leave the canary the
# hostile code would create absent. A commondir planted before a session
# (as an earlier jig let an agent do) refuses the next launch.
# JIG_FAULT_FAIL="session git guard" (a test build) drops the protection:
# then these cases fail (docs/session.md, "The Git directory").
set -eu
: "${JIG_TEST_PREFIX:?}"
JIG="$JIG_TEST_PREFIX/bin/jig"
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "${ROOT_MODE:-}" = 1 ]; then
	u=$(id -u jigtest)
	mkdir -p "/run/user/$u" && chown jigtest: "/run/user/$u" && chmod 700 "/run/user/$u"
	exit 0
fi

RT=/run/user/$(id -u)
export XDG_RUNTIME_DIR="$RT"
S=$(mktemp -d "$HOME/jig-git.XXXXXX")
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/agent" "$HOME/.config/jig"
export GIT_AUTHOR_NAME=op GIT_AUTHOR_EMAIL=op@example.test GIT_COMMITTER_NAME=op GIT_COMMITTER_EMAIL=op@example.test
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
CANARY=$S/canary
og() { git -c protocol.file.allow=always "$@"; } # the operator's git, outside any scope

# The hostile program every attack names: it leaves the canary.
printf '#!/bin/sh\necho "$0 $*" >>%s\n' "$CANARY" >"$S/agent/evil"
# The fake agent: runs the attack script $1 (in its tree) and reports.
cat >"$S/agent/agent" <<EOF
#!/usr/bin/sh
try() { if eval "\$2" >/dev/null 2>&1; then echo "TRY \$1 yes"; else echo "TRY \$1 no"; fi; }
EVIL="$S/agent/evil"
# A Git directory whose config runs EVIL (core.fsmonitor) at the next git status.
mkevil() { mkdir -p "\$1/objects" "\$1/refs/heads" && echo "ref: refs/heads/main" >"\$1/HEAD" &&
	printf "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n" "\$EVIL" >"\$1/config"; }
. "$S/agent/\$1.attack"
echo DONE
EOF
chmod 755 "$S/agent/agent" "$S/agent/evil"

# Repositories: plain (no .git/hooks), super with a submodule "sub", and a
# linked worktree of super.
og init -q -b main "$S/plain" && echo a >"$S/plain/file" && og -C "$S/plain" add file && og -C "$S/plain" commit -qm one
rm -rf "$S/plain/.git/hooks"
og init -q -b main "$S/subsrc" && echo s >"$S/subsrc/s" && og -C "$S/subsrc" add s && og -C "$S/subsrc" commit -qm s
og init -q -b main "$S/super" && echo b >"$S/super/file" && og -C "$S/super" add file &&
	og -C "$S/super" submodule -q add "$S/subsrc" sub && og -C "$S/super" commit -qm super
og -C "$S/super" worktree add -q "$S/super-wt" -b wt
[ -d "$S/super/.git/modules/sub" ] && [ -f "$S/super/sub/.git" ] && [ -f "$S/super-wt/.git" ] || fail "the fixture repositories"

jq -n --arg s "$S" '{
  format: "jig-sessions/1",
  clients: {fake: {command: [($s + "/agent/agent")], trees: [($s + "/agent"), "/usr/bin"]}},
  providers: {local: {client: "fake", endpoint: "127.0.0.1:1234"}},
  repositories: {
    plain: {root: ($s + "/plain"), mode: "rw", context: "personal", default_provider: "local", providers: ["local"]},
    super: {root: ($s + "/super"), worktrees: [($s + "/super-wt")], mode: "rw", context: "personal",
            default_provider: "local", providers: ["local"]}}
}' >"$HOME/.config/jig/sessions.json"
chmod 600 "$HOME/.config/jig/sessions.json"

# session DIR ATTACK: $rc, $S/out (the agent's lines), $S/err (jig's).
session() {
	set +e
	(cd "$1" && "$JIG" session -- "$2" </dev/null >"$S/out" 2>"$S/err")
	rc=$?
	set -e
	tr -d '\r' <"$S/out" >"$S/o" && mv "$S/o" "$S/out"
	echo "--- jig session in $1 -- $2 (exit $rc)"
	cat "$S/out" "$S/err"
}
refused() { grep -qx "TRY $1 no" "$S/out" || fail "the agent's $1: $(grep "TRY $1 " "$S/out" || echo "not tried")"; }
allowed() { grep -qx "TRY $1 yes" "$S/out" || fail "the agent's $1 should have worked: $(grep "TRY $1 " "$S/out" || echo "not tried")"; }
reported() { grep -q "$1" "$S/err" || fail "jig did not report: $1"; }
# The operator's git after the session, in DIR: status, checkout, commit.
operator_git() {
	og -C "$1" status >/dev/null 2>&1 || true
	og -C "$1" checkout -q -b "after-$2" 2>/dev/null || og -C "$1" checkout -q "after-$2" || true
	echo "$2" >>"$1/operator-file" && og -C "$1" add operator-file && og -C "$1" commit -qm "operator $2" || commit_failed="$commit_failed $1"
	og -C "$1" checkout -q - || true
}
commit_failed=
no_canary() {
	[ ! -e "$CANARY" ] || fail "the agent's code ran at the operator's git: $(cat "$CANARY")"
	[ -z "$commit_failed" ] || fail "the operator's commit failed in$commit_failed"
}

# A plain repository: config, hooks (absent), commondir, .git renamed and
# replaced, a nested repository, .gitattributes.
cat >"$S/agent/plain.attack" <<'EOF'
try config 'printf "[core]\n\tfsmonitor = %s\n" "$EVIL" >>.git/config'
try hooks_dir 'mkdir .git/hooks'
try hooks 'mkdir -p .git/hooks; printf "#!/bin/sh\n%s hook\n" "$EVIL" >.git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit'
try info 'echo "* filter=evil" >>.git/info/attributes'
mkevil evil
try commondir 'echo ../evil >.git/commondir'
try rename_dotgit 'mv .git .git-old; test ! -e .git'
try remove_dotgit 'rm -rf .git; test ! -e .git'
try new_dotgit 'mkdir .git-new && cp -r evil/. .git-new/; mv -T .git-new .git; grep -q fsmonitor .git/config'
try nested 'mkevil x/.git'
try gitattributes 'echo "* diff=evil" >.gitattributes'
EOF
scratch_plain_repository() { :; }
case_plain_repository() {
	session "$S/plain" plain
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -qx DONE "$S/out" || fail "the agent did not finish"
	# first what the operator would live through, then each attempt
	operator_git "$S/plain" plain
	og -C "$S/plain/x" status >/dev/null 2>&1 || true
	no_canary
	for a in config hooks_dir hooks info commondir rename_dotgit remove_dotgit new_dotgit; do refused "$a"; done
	allowed nested
	allowed gitattributes
	reported "the agent created x/.git (a nested repository): moved to x/.git.jig-quarantined"
	reported "the agent created .gitattributes (Git reads it: filter and diff drivers)"
	[ -d "$S/plain/x/.git.jig-quarantined" ] && [ ! -e "$S/plain/x/.git" ] || fail "x/.git was not quarantined"
	[ ! -e "$S/plain/.git/commondir" ] && [ ! -e "$S/plain/.git/hooks" ] && ! grep -q fsmonitor "$S/plain/.git/config" ||
		fail "the Git directory was written"
}

# A submodule: its Git directory (.git/modules/sub), its gitfile, the
# directory holding it renamed and a new repository put in its place.
cat >"$S/agent/super.attack" <<'EOF'
try module_config 'printf "[core]\n\tfsmonitor = %s\n" "$EVIL" >>.git/modules/sub/config'
try module_hooks 'printf "#!/bin/sh\n%s hook\n" "$EVIL" >.git/modules/sub/hooks/post-checkout && chmod 755 .git/modules/sub/hooks/post-checkout'
try worktree_admin 'printf "[core]\n\tfsmonitor = %s\n" "$EVIL" >.git/worktrees/super-wt/config.worktree'
mkevil evil
try sub_gitfile 'echo "gitdir: ../evil" >sub/.git'
try sub_gitfile_rename 'mv sub/.git sub/.git-old; test ! -e sub/.git'
try sub_moved 'mv sub sub-old && mkevil sub/.git'
EOF
scratch_submodule() { :; }
case_submodule() {
	session "$S/super" super
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -qx DONE "$S/out" || fail "the agent did not finish"
	operator_git "$S/super" super
	og -C "$S/super" status --ignore-submodules=none >/dev/null 2>&1 || true
	[ ! -e "$S/super/sub/.git" ] || og -C "$S/super/sub" status >/dev/null 2>&1 || true
	og -C "$S/super" submodule status >/dev/null 2>&1 || true
	no_canary
	for a in module_config module_hooks worktree_admin sub_gitfile sub_gitfile_rename; do refused "$a"; done
	! grep -q fsmonitor "$S/super/.git/modules/sub/config" || fail "the submodule's config was written"
	if grep -qx "TRY sub_moved yes" "$S/out"; then
		reported "the agent replaced sub/.git (a nested repository): moved to sub/.git.jig-quarantined"
		[ ! -d "$S/super/sub/.git" ] || fail "the planted sub/.git is still a repository"
	fi
}

# A linked worktree: its own Git directory (.git/worktrees/super-wt), its
# .git gitfile, the common directory's config and the submodule's.
cat >"$S/agent/linked.attack" <<EOF
try admin_config 'printf "[core]\n\tfsmonitor = %s\n" "\$EVIL" >>"$S/super/.git/worktrees/super-wt/config.worktree"'
try admin_commondir 'echo "$S/super-wt/evil" >"$S/super/.git/worktrees/super-wt/commondir"'
try admin_dir 'echo x >"$S/super/.git/worktrees/super-wt/x"'
try common_config 'printf "[core]\n\tfsmonitor = %s\n" "\$EVIL" >>"$S/super/.git/config"'
try common_hooks 'printf "#!/bin/sh\n%s hook\n" "\$EVIL" >"$S/super/.git/hooks/post-checkout" && chmod 755 "$S/super/.git/hooks/post-checkout"'
try module_config 'printf "[core]\n\tfsmonitor = %s\n" "\$EVIL" >>"$S/super/.git/modules/sub/config"'
mkevil evil
try gitfile 'echo "gitdir: $S/super-wt/evil" >.git'
try gitfile_rename 'mv .git .git-old; test ! -e .git'
EOF
scratch_linked_worktree() { :; }
case_linked_worktree() {
	session "$S/super-wt" linked
	[ "$rc" -eq 0 ] || fail "exit $rc"
	grep -qx DONE "$S/out" || fail "the agent did not finish"
	operator_git "$S/super-wt" linked
	operator_git "$S/super" linked-main
	no_canary
	for a in admin_config admin_commondir admin_dir common_config common_hooks module_config gitfile gitfile_rename; do refused "$a"; done
	grep -qx "gitdir: $S/super/.git/worktrees/super-wt" "$S/super-wt/.git" || fail "the gitfile was written"
}

# The commondir redirection across two sessions: the first session's plant
# is refused; one planted anyway (as an earlier jig allowed) refuses the
# next launch with one line, and the real .git is never left writable.
cat >"$S/agent/plant.attack" <<'EOF'
mkevil evil
try commondir 'echo ../evil >.git/commondir'
try config 'echo >>.git/config'
EOF
cat >"$S/agent/after.attack" <<'EOF'
try config 'printf "[core]\n\tfsmonitor = %s\n" "$EVIL" >>.git/config'
EOF
scratch_commondir_across_sessions() { :; }
case_commondir_across_sessions() {
	session "$S/plain" plant
	[ "$rc" -eq 0 ] || fail "exit $rc"
	og -C "$S/plain" status >/dev/null 2>&1 || true
	no_canary
	refused commondir
	refused config
	[ ! -e "$S/plain/.git/commondir" ] || fail "the first session planted commondir"
	echo ../evil >"$S/plain/.git/commondir" # an earlier jig's agent did
	session "$S/plain" after
	[ "$rc" -ne 0 ] || fail "a session started over a planted commondir"
	[ "$(wc -l <"$S/err")" -ge 1 ] && head -n 1 "$S/err" | grep -q "commondir redirects Git to $S/plain/evil" ||
		fail "the refusal does not name the planted commondir: $(head -n 1 "$S/err")"
	! grep -q "TRY" "$S/out" || fail "the agent ran"
	! grep -q fsmonitor "$S/plain/.git/config" || fail "the real config was written"
	rm "$S/plain/.git/commondir"
	operator_git "$S/plain" across
	no_canary
}

[ $# -eq 1 ] || { echo "usage: $0 CASE" >&2; exit 2; }
"case_$1"
