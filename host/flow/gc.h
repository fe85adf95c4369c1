/* jig gc (issue 35; docs/flow-format.md "Reclaiming the store"): explicit
 * reclamation of a project's Package/0 store (<project>/.jig/store).
 *
 * Kept is everything the roots reference: the current admission's Plan
 * (.jig/admission.json naming .jig/admitted/<plan>.json) and every retained
 * Run record below .jig/runs/. A root references an artifact by its
 * digest: every 64-hex string in it that names a package manifest
 * (store/packages/<d>.json) or a blob keeps it; a kept package keeps its
 * blobs and its prepared record (store/prepared/package-<d>.json), whose
 * tree and sources are kept packages too; a reuse record
 * (store/prepared/identity-*.json) is kept while its tree is. Everything
 * else in the store is freed, and so are temporary files a crashed capture
 * left. A root that cannot be read, or a kept manifest that cannot, frees
 * nothing (fail closed).
 *
 * Concurrency (decision 166): every command that opens a project holds a
 * shared flock on its .jig directory for as long as it has it open
 * (flow/project.c); gc takes the exclusive lock without waiting, and while
 * any review, run or lock holds the project it frees nothing and says so. */
#ifndef JIG_FLOW_GC_H
#define JIG_FLOW_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_GC_HISTORY_DIR "runs" /* run/history.h JIG_HISTORY_DIR: jig why's last Runs */

struct jig_gc_counts {
	size_t packages, blobs, records, temporary;
	uint64_t bytes;
};

struct jig_gc_result {
	char plan_sha256[JIG_SHA256_HEX]; /* the admitted Plan kept, "" when none */
	size_t roots;			  /* the admission and the retained Run records read */
	struct jig_gc_counts freed, kept;
};

/* Reclaims the store of the project at path (dry_run: frees nothing, says
 * what it would). 0, or a negative code with one line in *e. */
int jig_store_gc(const char *path, bool dry_run, struct jig_gc_result *res, struct jig_error *e);

#endif
