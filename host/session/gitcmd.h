/* The session's `git` command policy (Slice 4A; docs/session.md "Git
 * through jig"): the signed snapshot's libexec/git-command.json, and the
 * check of one request's argv against it, made by jig outside the agent's
 * scope before anything runs. Pure (tests/unit/session/test_gitcmd.c). */
#ifndef JIG_SESSION_GITCMD_H
#define JIG_SESSION_GITCMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define JIG_GIT_POLICY_FILE "libexec/git-command.json"
#define JIG_GIT_POLICY_FORMAT "jig-git-command/1"
#define JIG_GIT_POLICY_MAX_BYTES (64u << 10)

struct jig_git_policy {
	json_t *doc;
};

/* Strict parse: format, every subcommand an object of "operands" (bool)
 * and "options" (strings of the grammar the file's "about" gives). */
int jig_git_policy_parse(const char *buf, size_t len, struct jig_git_policy *p, struct jig_error *e);
void jig_git_policy_free(struct jig_git_policy *p);

/* What a checked request asks for. */
struct jig_git_checked {
	int sub;	    /* argv index of the subcommand (-1: `git --version`) */
	const char *cdir;   /* -C's operand (the caller checks it is inside the worktree), or NULL */
	bool network;	    /* a subcommand that reaches a remote */
	const char *remote; /* its remote operand (a remote's name or a URL), or NULL: its default */
};

/* argv[0] is the program's name ("git"). 0 and *out, or -JIG_E_USAGE with
 * one line naming the argument refused and why. */
int jig_git_check(const struct jig_git_policy *p, int argc, const char *const *argv, struct jig_git_checked *out,
		  struct jig_error *e);

/* url is one of approved's strings, exactly. */
bool jig_git_remote_approved(const json_t *approved, const char *url);

#endif
