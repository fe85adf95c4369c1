/* A Flow's npm dependencies (issue 16; docs/dependencies.md): its own
 * package.json and Bun's text lock, bun.lock, checked at review before
 * anything is fetched.
 *
 * Root declarations jig does not support are refused first:
 * trustedDependencies, install-time lifecycle scripts, workspaces, and any
 * dependency that is not a registry package (git, GitHub shorthand,
 * file, link, workspace, portal or a tarball URL). The lock must then be
 * complete and closed: its root workspace declares exactly the manifest's
 * dependencies, every package is one registry version with a sha512
 * integrity at a key that is a node_modules path of npm names, every
 * dependency of every package resolves inside the lock to the package it
 * names (or its npm: alias target), and every package is reached from the
 * manifest. Issue 31: the manifest's own ranges must be readable
 * (prepare/semver.h) and hold for the versions the lock pins; every patch
 * names a name@version the lock holds; a lock entry's registry is "" or a
 * tarball URL that jig_deps_check_registry then compares with the
 * configured registry's own; packages the pinned Bun skips on this host
 * (os, cpu, libc) are marked. A lock with a comment is refused as such. */
#ifndef JIG_PREPARE_DEPS_H
#define JIG_PREPARE_DEPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "flow/project.h" /* JIG_DEPS_MANIFEST, JIG_DEPS_LOCK */
#include "util/error.h"
#include "util/limits.h"


struct jig_deps {
	bool declared;	      /* the package has dependencies at all */
	bool locked;	      /* with a valid bun.lock */
	size_t n_packages;    /* in the lock */
	json_t *packages;     /* [{"path", "name", "version", "integrity", "url"?, "skipped"?}] in the lock's order;
				 url: the lock's full tarball URL (jig_deps_check_registry); skipped:
				 "os", "cpu", "libc" or "dependents" for a package the pinned Bun
				 skips on this host */
	size_t n_skipped;
	size_t n_urls;	      /* packages with a full tarball URL */
	size_t n_patches;
	json_t *patches;      /* [{"spec": "name@version", "path", "sha256"}], or NULL */
};

/* Checks the package directory pkgfd of flow (named in messages). 0 with
 * *d filled (declared false: nothing to prepare), or -JIG_E_USAGE with one
 * line naming the file, the key and what to do. */
int jig_deps_check(int pkgfd, const char *flow, struct jig_deps *d, struct jig_error *e);
/* The same, except that a package without bun.lock passes with locked
 * false (its root declarations and patches checked): for a review that
 * allows resolution. */
int jig_deps_check_unlocked(int pkgfd, const char *flow, struct jig_deps *d, struct jig_error *e);
void jig_deps_free(struct jig_deps *d);

/* Whether a lock entry's "os", "cpu" or "libc" value (a string, an array
 * of strings, or NULL) admits this host, as the pinned Bun decides. */
bool jig_deps_platform_admits(const char *key, json_t *value);

/* The configured registry's npm tarball URL for name@version:
 * REGISTRY/NAME/-/BASE-VERSION.tgz, BASE the name without its scope. */
void jig_deps_tarball_url(const char *registry, const char *name, const char *version, char *out, size_t cap);
/* Every full tarball URL of d's lock is exactly registry's own for its
 * package (jig_deps_tarball_url): 0, or -JIG_E_USAGE with one line naming
 * the package, the URL and the configured registry. */
int jig_deps_check_registry(const struct jig_deps *d, const char *flow, const char *registry, struct jig_error *e);

/* bun.lock is JSON with trailing commas: drops each comma that is followed
 * (after white space) by '}' or ']', outside strings, in place. Exposed
 * for the fuzz harness. */
void jig_deps_strip_trailing_commas(char *buf, size_t *len);

#endif
