/* The installer scope's pieces shared by a review's preparation
 * (prepare.c) and jig lock (lock.c): one Flow's preparation state, the
 * operator's registry, the scope composed from the catalog, resolution and
 * the staging of a package's manifests. Internal to host/prepare/. */
#ifndef JIG_PREPARE_INSTALLER_H
#define JIG_PREPARE_INSTALLER_H

#include <stdbool.h>

#include "prepare/deps.h"
#include "flow/project.h"
#include "policy/catalog.h"
#include "prepare/prepare.h"

/* One Flow's preparation: its private directory (run_dir, runfd), the
 * checked manifests and the installer scope's template. */
struct jig_prepare_one {
	struct jig_project *p;
	struct jig_flow *f;
	struct jig_prepare_phase *ph;
	char run_dir[64];
	int runfd;
	struct jig_deps d;
	struct jig_scope_template t;
	bool have_t;
};

/* The operator's registry (npm.json) into ph->registry, read once. */
int jig_prepare_registry_ready(struct jig_prepare_phase *ph, struct jig_error *e);
/* The installer scope of o's Flow, composed from the catalog into o->t. */
int jig_prepare_compose(struct jig_prepare_one *o, struct jig_error *e);
/* Resolution in the installer scope o->t: the pinned Bun writes bun.lock
 * from the registry's metadata (nothing installed, no script); every
 * tarball must be the registry's own, written as "", into src (0444). */
int jig_prepare_resolve(struct jig_prepare_one *o, int src, struct jig_error *e);
/* Copies rel (a regular file beneath from, at most JIG_DEPS_LOCK_MAX) to
 * the same path beneath to. */
int jig_prepare_copy_file(int from, int to, const char *rel, struct jig_error *e);
/* The checked lock of pkg staged into src as the installer gets it (each
 * configured-registry tarball URL written as ""). */
int jig_prepare_stage_lock(int pkg, int src, const struct jig_deps *d, struct jig_error *e);
/* What the installer reads of pkg, staged into src: the manifest, the
 * checked lock when keep_lock, and the manifest's patch files. */
int jig_prepare_stage_sources(struct jig_prepare_one *o, int pkg, int src, bool keep_lock, struct jig_error *e);

#endif
