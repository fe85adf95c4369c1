/* Dependency preparation (issue 16; docs/dependencies.md): during jig
 * review only, a Flow's npm dependencies are installed by the pinned Bun in
 * the installer scope from tarballs jig fetched and inspected itself, and
 * the prepared node_modules is captured into Package/0. The record ties the
 * Flow's captured package to that tree, so the Plan (at review and at every
 * Run) names it without any network. */
#ifndef JIG_PREPARE_PREPARE_H
#define JIG_PREPARE_PREPARE_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "flow/prepared.h"
#include "flow/project.h"
#include "policy/catalog.h"
#include "sandbox/door.h"
#include "snapshot/snapshot.h"
#include "snapshot/verify.h"
#include "util/limits.h"

#define JIG_PREPARE_WORKER_FILE "libexec/jig-prepare-worker"
#define JIG_RUNTIME_INSTALL "libexec/runtime/install.js"
#define JIG_NPM_CONFIG_FORMAT "jig-npm/1"
#define JIG_NPM_DEFAULT_REGISTRY "https://registry.npmjs.org/"

struct jig_prepare_phase {
	const struct jig_snapshot *snapshot;
	struct jig_verifier *verifier;
	struct jig_sandbox sandbox; /* opened on the first preparation that launches */
	bool have_sandbox;
	int init_fd;
	char registry[1024];
	bool have_registry; /* read from the operator's npm.json */
	bool allow_resolution; /* jig review --allow-resolution-network */
	/* The operator's warning before resolution's requests are made
	 * (only host/cli prints): a text of several lines, no "jig: " and
	 * no final newline. */
	void (*warn)(const char *text);
	struct timespec deadline; /* of the whole phase */
	unsigned launched;
	uint64_t bytes;
};

int jig_prepare_phase_begin(struct jig_prepare_phase *ph, const struct jig_snapshot *s, struct jig_verifier *v,
			    struct jig_error *e);
void jig_prepare_phase_end(struct jig_prepare_phase *ph);

/* Prepares the dependencies of every Flow of p (captured already) that
 * declares them: checks the captured package.json and bun.lock, reuses a
 * preparation of the same sources and installer, or runs one. Then the
 * record for the Flow's package is in the store. */
int jig_prepare_project(struct jig_project *p, struct jig_prepare_phase *ph, struct jig_error *e);

/* What jig lock is about to run, shown before it runs: policy is the very
 * installer scope launched. */
struct jig_lock_plan {
	const char *flow, *dir, *registry;
	const struct jig_scope_policy *policy;
	bool refresh;		 /* the project's bun.lock passed review's checks: Bun refreshes it */
	char replaced_why[768]; /* it exists but did not: why (it is resolved anew) */
};
/* Shows the Plan; a non-zero return (e set) refuses before anything runs. */
typedef int (*jig_lock_show)(const struct jig_lock_plan *pl, void *arg, struct jig_error *e);
struct jig_lock_result {
	size_t packages, bytes;
	bool changed, refreshed;
};

/* Resolves Flow f's npm dependencies (its package.json, declared patches
 * and, when it passes review's checks, its bun.lock, read from the project
 * beneath its root) with the pinned Bun in the installer scope composed
 * from the catalog against the operator's registry (scripts off, nothing
 * installed), shows the Plan, checks the resolved lock as review checks a
 * supplied one, and replaces only <package>/bun.lock with it (atomically).
 * The store is not touched. */
int jig_prepare_lock(struct jig_project *p, struct jig_flow *f, struct jig_prepare_phase *ph, jig_lock_show show, void *arg,
		     struct jig_lock_result *res, struct jig_error *e);

#endif
