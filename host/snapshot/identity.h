/* The launch identity: what a Plan binds about the installed snapshot.
 * SHA-256 of canonical JSON {format, snapshot, sequence, manifest_sha256,
 * files: {path: sha256}} over exactly the files (modules, helpers, runtime)
 * the Plan uses. A Run whose installed snapshot yields another identity is
 * refused and asks for a new review. */
#ifndef JIG_SNAPSHOT_IDENTITY_H
#define JIG_SNAPSHOT_IDENTITY_H

#include "snapshot.h"

#define JIG_IDENTITY_FORMAT "jig-launch-identity/1"

/* paths: manifest file paths (order and duplicates do not matter). */
int jig_launch_identity(const struct jig_snapshot *s, const char *const *paths, size_t npaths,
			char out_hex[JIG_SHA256_HEX], struct jig_error *e);

#endif
