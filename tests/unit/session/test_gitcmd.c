/* The session's git command policy (issue 45, Slice 4A): the signed
 * policy's strict parse and jig's check of a request's argv, one line per
 * refusal: configuration on the command line, the Git programs and the
 * repository named by options, aliases (unknown subcommands), options
 * that run programs or read files on jig's side, ext::/fd:: transports,
 * the remote operand of the network subcommands, and -C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session/gitcmd.h"
#include "util/fileio.h"

static struct jig_git_policy pol;

static int setup(void **state)
{
	(void)state;
	FILE *f = fopen(JIG_GIT_POLICY_SOURCE, "rb");
	assert_non_null(f);
	static char buf[JIG_GIT_POLICY_MAX_BYTES];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct jig_error e = {0};
	assert_int_equal(jig_git_policy_parse(buf, n, &pol, &e), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jig_git_policy_free(&pol);
	return 0;
}

/* line: space-separated argv after "git"; 0 or the refusal in e. */
static int check(const char *line, struct jig_git_checked *ck, struct jig_error *e)
{
	static char buf[512];
	static const char *argv[32];
	snprintf(buf, sizeof(buf), "%s", line);
	int argc = 0;
	argv[argc++] = "git";
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	memset(e, 0, sizeof(*e));
	return jig_git_check(&pol, argc, argv, ck, e);
}

static void allowed(const char *line)
{
	struct jig_git_checked ck;
	struct jig_error e;
	if (check(line, &ck, &e) != 0)
		fail_msg("git %s refused: %s", line, e.msg);
}

static void refused(const char *line, const char *says)
{
	struct jig_git_checked ck;
	struct jig_error e;
	if (check(line, &ck, &e) != -JIG_E_USAGE)
		fail_msg("git %s allowed", line);
	if (!strstr(e.msg, says) || strchr(e.msg, '\n'))
		fail_msg("git %s: \"%s\" does not say \"%s\" in one line", line, e.msg, says);
}

static void test_everyday_work(void **state)
{
	(void)state;
	allowed("status --short");
	allowed("status -sb");
	allowed("--no-pager log --oneline -5");
	allowed("log -n 3 --format=%H");
	allowed("diff --cached --stat");
	allowed("add -A");
	allowed("commit -am message");
	allowed("commit -m message --no-verify");
	allowed("switch -c feature");
	allowed("checkout -b other");
	allowed("branch -vv");
	allowed("tag -a v1 -m release");
	allowed("fetch origin");
	allowed("pull --rebase origin main");
	allowed("push -u origin feature");
	allowed("merge --no-ff feature");
	allowed("rebase --onto main old");
	allowed("stash pop");
	allowed("reset --hard HEAD~1");
	allowed("rev-parse --show-toplevel");
	allowed("ls-files -z");
	allowed("remote -v");
	allowed("--version");
	allowed("-C sub status");
	allowed("show HEAD -- file");
}

static void test_config_and_repository_refused(void **state)
{
	(void)state;
	refused("-c core.sshCommand=evil fetch", "git -c: configuration on the command line is refused");
	refused("-ccore.hooksPath=x status", "configuration on the command line is refused");
	refused("--config-env=core.fsmonitor=X status", "git --config-env: configuration on the command line is refused");
	refused("--exec-path=/tmp status", "git --exec-path: refused");
	refused("--git-dir=/elsewhere status", "git --git-dir: refused in a session (the repository is the session's worktree)");
	refused("--work-tree=/ status", "git --work-tree: refused");
	refused("--bare status", "refused in a session");
	refused("--paginate status", "a global option a session's git may not use");
	refused("", "a subcommand is needed");
	refused("-C", "git -C: needs a directory");
	refused("-C a -C b status", "at most once");
}

static void test_subcommands_and_aliases(void **state)
{
	(void)state;
	refused("config core.hooksPath /tmp", "git config: not a subcommand a session may run (aliases are not honoured");
	refused("st", "aliases are not honoured");
	refused("difftool", "not a subcommand");
	refused("submodule update", "not a subcommand");
	refused("clone https://example.test/x", "not a subcommand");
	refused("remote add evil https://evil.test/x", "git remote: takes no operand in a session");
}

static void test_options_that_run_or_read(void **state)
{
	(void)state;
	refused("push --receive-pack=evil origin", "git push --receive-pack: refused in a session (names the program");
	refused("fetch --upload-pack evil origin", "git fetch --upload-pack: refused");
	refused("push --exec=evil origin", "git push --exec: refused");
	refused("rebase --exec make", "git rebase --exec: refused");
	refused("rebase -x make", "git rebase -x: an option a session's git may not use");
	refused("rebase -i HEAD~2", "git rebase -i: an option");
	refused("diff --output=/home/op/.bashrc", "git diff --output: refused");
	refused("diff --no-index /etc/shadow /dev/null", "git diff --no-index: refused");
	refused("log --ext-diff -p", "git log --ext-diff: refused");
	refused("commit -F /home/op/.ssh/id_ed25519", "git commit -F: an option");
	refused("commit --file=/etc/shadow", "git commit --file: refused");
	refused("commit --template=/etc/shadow", "git commit --template: refused");
	refused("commit -am", "git commit -m: needs a value");
	refused("fetch --recurse-submodules origin", "git fetch --recurse-submodules: refused");
	refused("push --repo=https://evil.test/x", "git push --repo: refused");
	refused("status --short=x", "an option a session's git may not use");
	refused("fetch --multiple a b", "git fetch --multiple: refused");
	/* A path outside the worktree: `git diff A B` would compare the files. */
	refused("diff /etc/shadow /dev/null", "git diff: \"/etc/shadow\" names a path outside the worktree");
	refused("diff ../../.ssh/id_ed25519 x", "names a path outside the worktree");
	refused("add -- sub/../../x", "names a path outside the worktree");
	allowed("log main..feature");
	allowed("diff HEAD~2...HEAD -- src/a..b");
}

static void test_transports(void **state)
{
	(void)state;
	refused("fetch ext::sh%20-c%20evil", "the transport of \"ext::sh%20-c%20evil\" is refused");
	refused("push fd::3 main", "the transport of \"fd::3\" is refused");
	refused("push origin ext::x", "is refused");
	refused("fetch foo::https://example.test/x", "is refused");
	refused("show ext::x", "is refused");
}

static void test_network_remote(void **state)
{
	(void)state;
	struct jig_git_checked ck;
	struct jig_error e;
	assert_int_equal(check("push -u origin feature", &ck, &e), 0);
	assert_true(ck.network);
	assert_string_equal(ck.remote, "origin");
	assert_int_equal(check("fetch --depth 1 upstream", &ck, &e), 0);
	assert_string_equal(ck.remote, "upstream");
	assert_int_equal(check("pull", &ck, &e), 0);
	assert_true(ck.network);
	assert_null(ck.remote);
	assert_int_equal(check("-C sub commit -m x", &ck, &e), 0);
	assert_false(ck.network);
	assert_string_equal(ck.cdir, "sub");
	json_t *ok = json_pack("[s,s]", "https://git.test/r.git", "/srv/r.git");
	assert_true(jig_git_remote_approved(ok, "/srv/r.git"));
	assert_false(jig_git_remote_approved(ok, "/srv/r.git/"));
	assert_false(jig_git_remote_approved(ok, "https://git.test:444/r.git"));
	assert_false(jig_git_remote_approved(NULL, "/srv/r.git"));
	json_decref(ok);
}

static void test_policy_parse(void **state)
{
	(void)state;
	struct jig_git_policy p;
	struct jig_error e = {0};
	static const char *const bad[] = {
		"{\"format\":\"jig-git-command/2\",\"network\":[],\"refused\":{},\"subcommands\":{}}",
		"{\"format\":\"jig-git-command/1\",\"network\":[\"fetch\"],\"refused\":{},\"subcommands\":{}}",
		"{\"format\":\"jig-git-command/1\",\"network\":[],\"refused\":{\"-x\":\"y\"},\"subcommands\":{}}",
		"{\"format\":\"jig-git-command/1\",\"network\":[],\"refused\":{},\"subcommands\":{\"s\":{\"operands\":true,\"options\":[\"x\"]}}}",
		"{\"format\":\"jig-git-command/1\",\"network\":[],\"refused\":{},\"subcommands\":{\"s\":{\"options\":[]}}}",
		"{\"format\":\"jig-git-command/1\",\"network\":[],\"refused\":{},\"subcommands\":{},\"aliases\":{}}",
		NULL};
	for (const char *const *b = bad; *b; b++) {
		if (jig_git_policy_parse(*b, strlen(*b), &p, &e) != -JIG_E_INTEGRITY)
			fail_msg("accepted: %s", *b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_everyday_work),	    cmocka_unit_test(test_config_and_repository_refused),
		cmocka_unit_test(test_subcommands_and_aliases), cmocka_unit_test(test_options_that_run_or_read),
		cmocka_unit_test(test_transports),	    cmocka_unit_test(test_network_remote),
		cmocka_unit_test(test_policy_parse),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
