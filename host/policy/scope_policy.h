/* Scope policy: the only input the sandbox accepts (jig-scope-policy/1).
 *
 * Parsing is strict (unknown or missing keys, duplicate keys, wrong types,
 * relative or non-normalised paths, broad grants and out-of-range limits are
 * errors, each one line naming the field). A parsed policy has one canonical
 * serialisation (sorted keys and sorted lists, compact, integers only) and
 * its SHA-256 is the policy's identity. */
#ifndef JIG_POLICY_SCOPE_POLICY_H
#define JIG_POLICY_SCOPE_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include <jig/sandbox.h>

#include "util/crypto.h"
#include "util/error.h"
#include "util/limits.h"

#define JIG_SCOPE_POLICY_FORMAT "jig-scope-policy/1"

/* Limits of the policy language (docs/scope-policy.md; the others are util/limits.h's). */
#define JIG_POLICY_MAX_TARGET_FD JIG_SCOPE_MAX_TARGET_FD

/* Reserved inside every scope: where the trusted launcher is bound. */
#define JIG_SCOPE_INIT_TARGET JIG_SCOPE_LAUNCHER

struct jig_scope_policy {
	json_t *doc;	 /* canonical document; strings below point into it */
	char *canonical; /* its bytes */
	char sha256[JIG_SHA256_HEX];
	const char *name;
	struct jig_scope_bind *binds; /* read-only */
	size_t n_binds;
	struct jig_scope_bind *rw_binds; /* "write": true (ABI 1.6) */
	size_t n_rw_binds;
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
	/* An exact network grant (scope_network.c): the loopback endpoints,
	 * then the proxy's, as the module's listeners; the CONNECT
	 * destinations ("host:port", canonical). */
	struct jig_scope_listener *listeners;
	size_t n_listeners, n_loopback;
	const char **connect;
	size_t n_connect;
	const char *proxy; /* "127.0.0.1:PORT" with connect entries, else NULL */
	struct jig_scope_limits limits;
	bool has_slots; /* a template: see JIG_POLICY_SLOTS */
};

/* Runtime slots are allowed: bind sources "@run/NAME" (below the per-run
 * directory) and descriptor sources "@NAME". A policy with slots is a
 * template jig composed (its digest is what a Plan pins); only
 * jig_scope_policy_resolve turns it into one that can run. */
#define JIG_POLICY_SLOTS 1u

/* Parses and validates; home is the caller's home directory (its grants
 * are refused), NULL for none. */
int jig_scope_policy_parse(const char *buf, size_t len, const char *home, unsigned flags,
			   struct jig_scope_policy *p, struct jig_error *e);
int jig_scope_policy_load(const char *path, const char *home, unsigned flags, struct jig_scope_policy *p,
			  struct jig_error *e);
void jig_scope_policy_free(struct jig_scope_policy *p);

/* Checks against the live host what a pure parse cannot: every bind
 * source exists and is its own canonical path (no symbolic link in it),
 * every writable bind's source is a directory the caller owns that neither
 * holds nor lies inside jig's own configuration, cache, state, runtime or
 * installation directories, and every source descriptor is open. */
int jig_scope_policy_check_host(const struct jig_scope_policy *p, struct jig_error *e);

/* One run's values for a template's slots: excluded runtime metadata,
 * never part of the digest (docs/catalog.md). */
struct jig_scope_slot {
	const char *name; /* "@NAME" without the "@" */
	int fd;
};
struct jig_scope_run {
	const char *run_dir; /* "@run/NAME" -> run_dir/NAME */
	const struct jig_scope_slot *slots;
	size_t n_slots;
	uint64_t wall_ms; /* the run's deadline, at most the template's; 0: the template's */
};
/* Resolves tmpl into *out, a policy that can run: parsed and live-checked
 * like any other. */
int jig_scope_policy_resolve(const struct jig_scope_policy *tmpl, const struct jig_scope_run *run, const char *home,
			     struct jig_scope_policy *out, struct jig_error *e);

/* What a launch adds to a resolved policy. */
struct jig_scope_launch {
	const char *policy_sha256; /* the pinned (template) digest; NULL: the policy's own */
	int init_fd;		   /* the verified launcher */
	const char *const *argv;
	const char *hold_path;
	int abort_fd;
	const struct jig_scope_fd *fds; /* replaces the policy's (relayed streams); NULL: the policy's */
	int interrupt_fd;		/* see struct jig_scope; -1: none */
	int32_t companion_pid;		/* see struct jig_scope; 0: none */
	/* Set: hold_path is an output with hidden import stages (struct
	 * jig_scope's output_path, its size the policy's tmpfs there), its
	 * root handed to output_ready(output_ctx, fd) before the payload
	 * starts. NULL: hold_path is held as it is. */
	void (*output_ready)(void *ctx, int root_fd);
	void *output_ctx;
	/* Descriptor 0 is jig's pty slave (the "@terminal" slot): it becomes
	 * the payload's controlling terminal (ABI 1.6). */
	bool controlling_tty;
	/* The relay of the policy's network endpoints (struct jig_scope's
	 * listen_ready); jig_launch sets it (sandbox/netrelay.h). */
	void (*listen_ready)(void *ctx, uint32_t i, int fd);
	void *listen_ctx;
};
/* The one place a struct jig_scope is assembled. Points into p and l. */
int jig_scope_describe(const struct jig_scope_policy *p, const struct jig_scope_launch *l, struct jig_scope *sc,
		       struct jig_error *e);

/* The "network" of a policy document checked and canonical into *out
 * (scope_network.c), and lowered into p's network fields. */
int jig_scope_network_parse(json_t *root, json_t **out, struct jig_error *e);
int jig_scope_network_lower(struct jig_scope_policy *p, struct jig_error *e);
/* "HOST:PORT" split; host (lower case) into host[cap]. 0, or -1 when s is
 * not an endpoint the policy language accepts (HOST a DNS name or an IP
 * literal, "[...]" for IPv6; PORT 1-65535 without leading zeros). */
int jig_endpoint_split(const char *s, char *host, size_t cap, uint16_t *port);

/* Names that look like credentials (GITHUB_TOKEN, *_API_KEY, ...): never
 * in a scope's environment or a Plan. */
bool jig_env_name_is_credential(const char *name);

/* The permission plan, each line prefixed by indent. */
void jig_scope_plan_print(const struct jig_scope_policy *p, const char *indent, FILE *out);
/* What several scopes' permission plans share (their common lines: binds,
 * environment, descriptors, what is denied, ...), printed once
 * (jig_scope_common_print, returning how many lines); each scope is then
 * printed with only its other lines (jig_scope_plan_print_besides, its
 * heading naming the kind of scope whose common part it refers to). A
 * Plan's presentation only: the policies and their digests are unchanged.
 * NULL only when out of memory. */
struct jig_scope_common;
struct jig_scope_common *jig_scope_common_of(const struct jig_scope_policy *const *ps, size_t n);
size_t jig_scope_common_print(const struct jig_scope_common *c, const char *indent, FILE *out);
void jig_scope_plan_print_besides(const struct jig_scope_policy *p, const struct jig_scope_common *c, const char *kind,
				  const char *indent, FILE *out);
void jig_scope_common_free(struct jig_scope_common *c);
/* The device nodes every scope has (JIG_SCOPE_DEVICES), as a JSON array. */
json_t *jig_scope_devices_json(void);
/* The permission plan as JSON ({"schema": JIG_PERMISSION_PLAN_FORMAT, ...}). */
#define JIG_PERMISSION_PLAN_FORMAT "jig-permission-plan/1"
json_t *jig_scope_plan_json(const struct jig_scope_policy *p);

#endif
