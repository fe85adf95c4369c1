/* The session's command broker (Slice 4A; docs/session.md "Git through
 * jig"): a Unix socket in jig's per-launch directory
 * ~/.local/state/jig/sessions/<id>/broker (0700; a bind source is never
 * below /run), bound read-only into the agent's scope at /.jig/broker; the
 * scope's `git` and `ssh`
 * on PATH are jig's shim (inscope/broker-shim), which sends argv, its cwd
 * and its descriptors 0, 1 and 2 (SCM_RIGHTS) and waits for an exit
 * status. The broker is a child of the jig session process, outside the
 * scope, for the session's life: every request field is capped, checked
 * against the snapshot's git command policy and the map's approved
 * remotes, and the pinned /usr/bin/git runs with jig's environment and
 * configuration on the agent's descriptors. `ssh` is refused. */
#ifndef JIG_SESSION_BROKER_H
#define JIG_SESSION_BROKER_H

#include <sys/types.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_BROKER_PROTO "jig-broker/1"
#define JIG_BROKER_MAX_REQ (64u << 10) /* the whole request: its fields below, NUL-separated */
#define JIG_BROKER_MAX_ARGS 256
#define JIG_BROKER_REFUSED 126 /* the exit status of a refused request */
#define JIG_BROKER_GIT "/usr/bin/git"
#define JIG_BROKER_MAX_REMOTES 32 /* approved local remotes bound into the git scope */

struct jig_session;

struct jig_broker {
	pid_t pid; /* -1: not running */
	char dir[4096];
	char git_sha256[JIG_SHA256_HEX];
	char git_copy[4096]; /* the pinned git's private copy: what every request runs */
};

/* The session's broker directory with the launch's id (0700, created with
 * its missing parents, each the caller's and no link), its socket "sock"
 * and Git's global configuration "gitconfig"; the policy read from the
 * signed snapshot; the pinned git opened and hashed; the broker forked.
 * First the directories of sessions that are gone (no runtime directory
 * left after the runtime sweep) are removed.
 * -code with e, nothing left running. */
int jig_broker_start(struct jig_broker *b, const struct jig_session *s, const char *id, struct jig_error *e);
/* The pinned git's SHA-256 (hex) as it is now, or "" when it cannot be read. */
void jig_broker_git_sha256(char out[JIG_SHA256_HEX]);
/* Where the broker keeps the session's private copy of the pinned git
 * (decision 312): <sessions>/<id>/git, beside (never inside) the broker
 * directory the agent's scope sees (broker_dir: the session's broker
 * directory with the JIG_SESSION_ID_SLOT; id may be the slot itself, as
 * in the Plan). -1: does not fit. */
int jig_broker_git_copy_path(const char *broker_dir, const char *id, char *out, size_t cap);
/* Ends the broker and every request it serves, and removes its directory.
 * Idempotent. */
void jig_broker_stop(struct jig_broker *b);

#endif
