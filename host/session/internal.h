/* struct jig_session, shared by the session room's files (not an API). */
#ifndef JIG_SESSION_INTERNAL_H
#define JIG_SESSION_INTERNAL_H

#include <limits.h>
#include <stdbool.h>

#include "policy/catalog.h"
#include "policy/session_policy.h"
#include "session/git.h"
#include "session/map.h"
#include "session/runtime.h"
#include "session/session.h"
#include "snapshot/snapshot.h"
#include "snapshot/verify.h"

#define JIG_SESSION_POLICY_FORMAT "jig-session-policy/1"
#define JIG_SESSION_PLAN_FORMAT "jig-session-plan/1"
/* The trusted launcher (flow/plan.h's JIG_SCOPE_INIT_FILE; session does not use flow). */
#define JIG_SESSION_INIT_FILE "libexec/jig-scope-init"
#define JIG_SESSION_PROXY "127.0.0.1:3128" /* the CONNECT relay inside the scope (a remote provider) */

struct jig_session {
	struct jig_session_map map;
	struct jig_session_where w;
	struct jig_session_git git; /* the Git directory's protection, from the map's root (git.h) */
	unsigned high_risk;
	struct jig_verifier v;
	struct jig_snapshot snap;
	bool snap_open, v_open;
	struct jig_catalog cat;
	char manifest_sha256[JIG_SHA256_HEX], catalog_sha256[JIG_SHA256_HEX], identity[JIG_SHA256_HEX];
	char runtime[PATH_MAX], tmpdir[PATH_MAX], broker_dir[PATH_MAX], state_root[PATH_MAX], term[64], name[40];
	char home[PATH_MAX];		   /* the password database's, physical */
	char state_rel[PATH_MAX];	   /* state_root below home */
	bool loopback;
	const char **trees; /* the client's trees and config */
	size_t n_trees;
	json_t *env, *network, *argv; /* argv: the program, its command's args, the provider's, the agent's */
	struct jig_session_facts facts;
	struct jig_scope_template t;
	json_t *doc; /* the canonical per-launch policy */
	char *canonical;
	char sha256[JIG_SHA256_HEX];
};

/* Composes s->facts (and extra) into s->t, the canonical policy and its
 * digest: the policy a launch uses is always the one composed now. */
int jig_session_build(struct jig_session *s, struct jig_error *e);

#endif
