/* Scope policy: the only input the sandbox accepts (jig-scope-policy/1).
 *
 * Parsing is strict (unknown or missing keys, duplicate keys, wrong types,
 * relative or non-normalised paths, broad grants and out-of-range limits are
 * errors, each one line naming the field). A parsed policy has one canonical
 * serialisation (sorted keys and sorted lists, compact, integers only) and
 * its SHA-256 is the policy's identity. */
#ifndef JIG_SCOPE_POLICY_H
#define JIG_SCOPE_POLICY_H

#include <jansson.h>
#include <stdio.h>

#include <jig/sandbox.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_SCOPE_POLICY_FORMAT "jig-scope-policy/1"
#define JIG_SCOPE_POLICY_MAX_BYTES (256 * 1024)

/* Limits of the policy language (documented in docs/scope-policy.md). */
#define JIG_POLICY_MAX_BINDS 64
#define JIG_POLICY_MAX_TMPFS 16
#define JIG_POLICY_MAX_SYMLINKS 32
#define JIG_POLICY_MAX_ENV 64
#define JIG_POLICY_MAX_FDS 16
#define JIG_POLICY_MAX_TARGET_FD 63
#define JIG_POLICY_MAX_ENV_VALUE 4096

/* Reserved inside every scope: where the trusted launcher is bound. */
#define JIG_SCOPE_INIT_TARGET "/.jig/init"

struct jig_scope_policy {
	json_t *doc;	 /* canonical document; strings below point into it */
	char *canonical; /* its bytes */
	char sha256[JIG_SHA256_HEX];
	const char *name;
	struct jig_scope_bind *binds;
	size_t n_binds;
	struct jig_scope_tmpfs *tmpfs;
	size_t n_tmpfs;
	struct jig_scope_symlink *symlinks;
	size_t n_symlinks;
	char **env; /* "NAME=value" */
	size_t n_env;
	struct jig_scope_fd *fds;
	size_t n_fds;
	const char *cwd;
	uint32_t network;
	struct jig_scope_limits limits;
};

/* Parses and validates; home is the caller's home directory (its grants
 * are refused), NULL for none. */
int jig_scope_policy_parse(const char *buf, size_t len, const char *home,
			   struct jig_scope_policy *p, struct jig_error *e);
int jig_scope_policy_load(const char *path, const char *home, struct jig_scope_policy *p,
			  struct jig_error *e);
void jig_scope_policy_free(struct jig_scope_policy *p);

/* Checks against the live host what a pure parse cannot: every bind
 * source exists and is its own canonical path (no symbolic link in it),
 * and every source descriptor is open. */
int jig_scope_policy_check_host(const struct jig_scope_policy *p, struct jig_error *e);

/* The permission plan: what the scope is granted, for people and tools. */
void jig_scope_plan_print(const struct jig_scope_policy *p, FILE *out);
/* The device nodes every scope has (JIG_SCOPE_DEVICES), as a JSON array. */
json_t *jig_scope_devices_json(void);
json_t *jig_scope_plan_json(const struct jig_scope_policy *p);

#endif
