/* The trusted capability catalog (jig-catalog/1, docs/catalog.md): the
 * only source of grants. It ships in the signed snapshot; named fragments
 * (read-only binds, tmpfs with a size, symlinks, environment entries,
 * descriptor slots, the network, the working directory, a limit envelope)
 * are composed, per scope kind, on an empty deny-all base into a scope
 * policy. Composition only adds what fragments list; a target, variable,
 * descriptor or setting given twice, an unknown fragment or kind is an
 * error before anything launches. Project files can only select what the
 * catalog offers (a Flow's entry, its HTTP routes' deadlines). */
#ifndef JIG_POLICY_CATALOG_H
#define JIG_POLICY_CATALOG_H

#include <jansson.h>
#include <stdint.h>

#include "policy/scope_policy.h"
#include "snapshot/snapshot.h"
#include "util/error.h"
#include "util/limits.h"

#define JIG_CATALOG_FORMAT "jig-catalog/1"
#define JIG_CATALOG_FILE "libexec/catalog.json"

struct jig_catalog {
	json_t *doc;
};

/* Strict parse; every fragment is also checked alone by the scope policy
 * rules (broad paths, credential names, ...), so a bad fragment is named. */
int jig_catalog_parse(const char *buf, size_t len, struct jig_catalog *c, struct jig_error *e);
/* The snapshot's catalog, its bytes checked against the signed manifest. */
int jig_catalog_load(const struct jig_snapshot *s, struct jig_catalog *c, struct jig_error *e);
void jig_catalog_free(struct jig_catalog *c);

/* The reviewed facts one scope is composed from. */
struct jig_scope_facts {
	const char *kind;	  /* a kind of the catalog: "flow", "http-worker" */
	const char *name;	  /* the scope's name, [a-z0-9-] */
	const char *snapshot_dir; /* "@snapshot/REL" -> snapshot_dir/REL */
	const char *entry;	  /* "@entry" in the kind's argv; NULL: none */
	uint64_t wall_ms;	  /* a reviewed deadline below the kind's ceiling; 0: the ceiling */
	const char *home;	  /* the caller's home (never granted) */
	/* "@client": the operator's client trees of an agent provider, bound
	 * read-only at their own paths (reviewed provider identity). */
	const char *const *client_trees;
	size_t n_client_trees;
	/* "@input" as the last component of a bind's source or target: the
	 * name of a reviewed attachment (a Project Command's route input). */
	const char *input;
	/* Reviewed egress (an agent provider's, issue 34): HOST:PORT entries
	 * granted through jig's CONNECT relay at JIG_EGRESS_PROXY, added to a
	 * kind whose network is "none", with the client's proxy variables. */
	const char *const *egress;
	size_t n_egress;
};

/* Where a scope with reviewed egress reaches jig's CONNECT relay. */
#define JIG_EGRESS_PROXY "127.0.0.1:3128"
#define JIG_EGRESS_PROXY_URL "http://127.0.0.1:3128"

/* A composed scope: the policy template (its digest is what the Plan
 * pins), the kind's program and held directory. */
struct jig_scope_template {
	struct jig_scope_policy policy;
	char **argv; /* NULL-terminated */
	char *hold;  /* NULL: none */
};

/* A scope's name (struct jig_scope_facts .name): prefix and at most keep
 * bytes of name, '_' as '-', so a name of [a-z0-9_] becomes [a-z0-9-] of
 * at most 32 characters (keep = 32 - the longest prefix of its callers:
 * the Plan's "command-" 24, the installer's "installer-" 22). */
#define JIG_SCOPE_NAME_KEEP_PLAN 24
#define JIG_SCOPE_NAME_KEEP_INSTALLER 22
void jig_scope_name(char *out, size_t cap, const char *prefix, const char *name, int keep);

int jig_catalog_compose(const struct jig_catalog *c, const struct jig_scope_facts *f, struct jig_scope_template *t,
			struct jig_error *e);
void jig_scope_template_free(struct jig_scope_template *t);

#endif
