/* The operator's agent providers (issue 15, docs/agents.md), read from
 * ${XDG_CONFIG_HOME:-~/.config}/jig/agents.json (the operator's, mode
 * 0600, not a link): the client's command, the read-only trees it needs,
 * its non-secret environment, the version it must report, and where its
 * credential comes from. The Plan pins a provider's identity (client,
 * command, the digest of every file the command names, version,
 * environment, the credential's variable name, model); the credential is
 * read only per turn (effects/agents.c). */
#ifndef JIG_CONFIG_AGENT_CONFIG_H
#define JIG_CONFIG_AGENT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/limits.h"

#define JIG_AGENTS_CONFIG_FORMAT "jig-agents/1"

struct jig_agent_provider {
	char *id;
	char *client;  /* "acp": a generic ACP client; "claude-code", "codex", "pi": with jig's profile */
	json_t *command; /* [absolute path, args...] */
	json_t *trees;	 /* absolute host paths, bound read-only at their own paths */
	json_t *env;	 /* non-secret client environment {NAME: value} */
	char *version;	 /* the version the client must report (agentInfo) */
	char *model_env; /* the variable that carries the route's model, or NULL */
	char *credential_env;	/* the variable the credential is projected into, or NULL */
	char *credential;	/* only with the secret (jig_agent_provider_get(..., true, ...)) */
	json_t *profile; /* jig's profile for the client {env, args, session_meta?, auth_method?, select_model, pi_args?}, or NULL */
	json_t *pi_command; /* client "pi": Pi's command [absolute paths], started by jig's launcher; else NULL */
	char *pi_models;    /* client "pi": the path of Pi's models.json; else NULL */
	/* "egress": the HOST:PORT the client may reach, only through jig's
	 * CONNECT relay (its scope then has a private network namespace, not
	 * the host's: docs/agents.md, issue 34); NULL: the host network. */
	json_t *egress;
};

/* Reads the operator's provider id. An unsafe (owner, mode, link) or
 * malformed file, a missing file or an unknown id refuses (-JIG_E_USAGE).
 * With secret, also reads the credential (value or file). */
int jig_agent_provider_get(const char *id, bool secret, struct jig_agent_provider *p, struct jig_error *e);
/* Wipes the credential and frees. */
void jig_agent_provider_free(struct jig_agent_provider *p);

/* The provider identity the Plan pins for a route: every non-secret fact
 * of the provider plus the digest of each file its command names, and the
 * model. Hashes the files now. */
int jig_agent_identity(const struct jig_agent_provider *p, const char *model, json_t **out, struct jig_error *e);
/* The variables the client gets from the provider (its env, its profile's,
 * model_env, the credential's) may not replace the provider scope's own
 * (scope_env, the composed policy's): the Plan prints those as the
 * client's. */
int jig_agent_env_fits(const struct jig_agent_provider *p, json_t *scope_env, struct jig_error *e);
/* Where a current identity differs from the reviewed one: one line naming
 * the first difference, or NULL when equal. */
const char *jig_agent_identity_diff(json_t *reviewed, json_t *now, char *buf, size_t cap);

#endif
