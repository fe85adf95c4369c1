/* The `session` scope kind's composition (docs/session.md): the catalog's
 * `session` kind, plus what the trusted repository map names for this
 * session: the client's trees and reviewed configuration read-only, the
 * worktree as mapped, the client's isolated state root writable as HOME,
 * one private TMPDIR (a size-bounded tmpfs at the session's exact runtime
 * path), the environment allowlist and the provider's network. The
 * template holds "@session" where the per-launch id goes: excluded
 * runtime metadata, never in the digest. */
#ifndef JIG_POLICY_SESSION_POLICY_H
#define JIG_POLICY_SESSION_POLICY_H

#include <jansson.h>
#include <stdbool.h>

#include "policy/catalog.h"
#include "util/error.h"

#define JIG_SESSION_KIND "session"
#define JIG_SESSION_GIT_KIND "session-git" /* the brokered git's scope (decision 222) */
#define JIG_SESSION_ID_SLOT "@session"
#define JIG_SESSION_BROKER_TARGET "/.jig/broker" /* where the scope's git and ssh shim finds the broker's socket */

struct jig_session_facts {
	const char *name;	  /* the scope's name */
	const char *snapshot_dir; /* "@snapshot/REL" */
	const char *home;	  /* the caller's home (never granted) */
	const char *program;	  /* the client's command[0] ("@entry") */
	const char *const *trees; /* the client's trees and reviewed config, read-only at their own paths */
	size_t n_trees;
	const char *worktree;	/* bound at its own path, writable iff rw */
	bool rw;
	const char *const *git_ro; /* the Git directory and .git entries: read-only at their own paths, every mode */
	size_t n_git_ro;
	const char *cwd;
	const char *state_root;	  /* writable, HOME */
	const char *tmpdir;	  /* ".../jig/sessions/@session/tmp" */
	const char *broker_dir;	  /* "~/.local/state/jig/sessions/@session/broker": the broker's socket, read-only at
				     JIG_SESSION_BROKER_TARGET; NULL: none */
	const char *term;	  /* TERM */
	json_t *map_env;	  /* the map's non-secret environment (client, then provider) */
	json_t *network;	  /* "none" or the exact-network object */
	const struct jig_scope_bind *extra; /* read-only binds a launch adds (the evidence probe) */
	size_t n_extra;
};

/* The template (slots: "@terminal" descriptors, "@session" in paths). */
int jig_session_compose(const struct jig_catalog *c, const struct jig_session_facts *f, struct jig_scope_template *t,
			struct jig_error *e);
/* "@session" made id: still a template for its descriptor slots. out's
 * argv and hold are tmpl's, borrowed: free only out->policy. */
int jig_session_instance(const struct jig_scope_template *tmpl, const char *id, const char *home,
			 struct jig_scope_template *out, struct jig_error *e);

/* The session's brokered git (issue 45, decision 222): the catalog's
 * "session-git" kind with the worktree and its Git directory bound at
 * their own paths (writable as the session's mode: the Git directory is
 * read-only only in the agent's scope), each of remotes (approved local
 * remotes, NULL-terminated; NULL: none) writable, cwd the request's. */
struct jig_session_git_facts {
	const char *name, *snapshot_dir, *home;
	const char *worktree, *git_dir, *cwd;
	bool rw;
	const char *const *remotes;
	/* An SSH request (decision 236): its exact network (NULL: "none"),
	 * its read-only binds (jig's ssh configuration, the operator's
	 * known_hosts, the context's agent socket) and ssh allowed. */
	json_t *network;
	const struct jig_scope_bind *ro;
	size_t n_ro;
	bool ssh;
	/* An HTTPS request (decision 291): https allowed, and jig's git
	 * configuration for the map's HTTPS hosts https_aliases (n_https of
	 * https_hosts, contexts.<c>.https_hosts) added to the scope's
	 * environment (GIT_CONFIG_COUNT, KEY_n, VALUE_n; never git's argv). */
	bool https;
	json_t *https_hosts;
	const char *const *https_aliases;
	size_t n_https;
	/* The pinned git's private copy (decision 312): bound read-only over
	 * /usr/bin/git and /usr/lib/git-core/git (when there), so the git that
	 * runs is the bytes that were hashed. NULL: none. */
	const char *git_copy;
};
/* Where the brokered git reaches jig's CONNECT relay inside its own network
 * namespace (decision 310): git's http.proxy, ssh's ProxyCommand
 * (JIG_GIT_CONNECT, the snapshot's libexec/connect) asks it for exactly the
 * approved HOST:PORT; the scope's network grant is those and nothing else. */
#define JIG_GIT_PROXY "127.0.0.1:3128"
#define JIG_GIT_CONNECT "/.jig/connect/jig-connect"
/* Where the git scope finds an HTTPS host's files: /<alias> below each. */
#define JIG_HTTPS_CA_TARGET "/.jig/https-ca"	     /* the operator's CA file, read-only */
#define JIG_HTTPS_CRED_TARGET "/.jig/https-credential" /* the operator's credential file, read-only */
/* jig's git configuration for the HTTPS hosts aliases (n of them, of
 * hosts) into env (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<i>,
 * GIT_CONFIG_VALUE_<i>). -1: does not fit. */
int jig_session_https_git_env(json_t *hosts, const char *const *aliases, size_t n, json_t *env);
int jig_session_git_compose(const struct jig_catalog *c, const struct jig_session_git_facts *f, struct jig_scope_template *t,
			    struct jig_error *e);

#endif
