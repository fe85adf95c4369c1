/* The repository's Git metadata in a session (docs/session.md, "The Git
 * directory"; decisions 210-214).
 *
 * Read-only in every mode: the Git common directory (with it every
 * modules/ and worktrees/ entry, hooks, config, commondir), the worktree's
 * own .git entry (bound onto itself, so it is a mount point the agent can
 * neither rename nor replace) and, in rw, every nested .git found under
 * the worktree at launch (and the Git directories they name inside it).
 * Resolved from trusted facts only: the map's root and worktree; a gitfile
 * or commondir is followed only where it stays inside the map root's own
 * .git directory, anything else refuses the launch with one line.
 *
 * What mounts cannot stop (a new nested .git, a changed .gitmodules,
 * .gitattributes, .envrc or .env) is found when the session ends: the
 * launch's snapshot of those names against a second walk; a .git the
 * agent created or replaced is renamed to .git.jig-quarantined (Git no
 * longer sees a repository there) and each finding is one stderr line. */
#ifndef JIG_SESSION_GIT_H
#define JIG_SESSION_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

/* At most this many paths bound read-only for Git (the policy holds at
 * most JIG_POLICY_MAX_BINDS binds in all); more refuses the launch. */
#define JIG_SESSION_GIT_MAX_RO 24
/* The walk of an rw worktree (launch and end): entries and depth. Past
 * either the launch is refused (nothing could be promised at its end). */
#define JIG_SESSION_GIT_WALK_MAX 500000
#define JIG_SESSION_GIT_WALK_DEPTH 64
#define JIG_SESSION_GIT_QUARANTINE ".git.jig-quarantined"

struct jig_session_git_ent {
	char *rel; /* below the worktree */
	dev_t dev;
	ino_t ino;
	mode_t mode;
	off_t size;
	long long mtime_ns, ctime_ns;
};

struct jig_session_git {
	char worktree[4096];
	char common_dir[4096];
	char *ro[JIG_SESSION_GIT_MAX_RO]; /* bound read-only onto themselves, sorted, none inside another */
	size_t n_ro;
	bool walked; /* rw: seen holds the launch's snapshot */
	struct jig_session_git_ent *seen;
	size_t n_seen, cap_seen;
};

/* The protected set for the map's root and the session's worktree (both
 * physical, from the map); where_common is what where.c read from the
 * repository's files: it must be the trusted common directory, else the
 * launch is refused. rw: the worktree is walked (nested .git entries
 * bound, the watched names snapshot). */
int jig_session_git_resolve(struct jig_session_git *g, const char *root, const char *worktree, const char *where_common,
			    bool rw, struct jig_error *e);
/* After the scope has ended (nothing of the agent runs): a second walk
 * against the launch's snapshot; one line on err per finding, a new or
 * replaced .git quarantined. The number of findings (0 when not walked). */
size_t jig_session_git_end(const struct jig_session_git *g, FILE *err);
void jig_session_git_free(struct jig_session_git *g);

#endif
