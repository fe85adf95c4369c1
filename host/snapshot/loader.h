/* Verified module loading. The bytes are copied from one O_NOFOLLOW fd into
 * a sealed memfd, hashed there and compared with the signed manifest; only
 * then is that same memfd handed to dlopen. What was hashed is what runs,
 * whatever happens to the file on disk meanwhile. An unprivileged caller
 * loading a file root owns and no one else may write skips the copy: the
 * file is hashed in place and that same open file is loaded — no one but
 * root (trusted) can change it (decision 65). */
#ifndef JIG_SNAPSHOT_LOADER_H
#define JIG_SNAPSHOT_LOADER_H

#include <jig/module.h>

#include "snapshot.h"

struct jig_module_handle {
	void *dl;
	const struct jig_module *desc;
	const struct jig_manifest_module *entry;
	void *state;
	struct jig_host_api api;
	unsigned char sha256[JIG_SHA256_LEN];
};

/* Stage 1: checks and hashes the module's bytes; returns a sealed memfd,
 * or the open file itself when it cannot change under this caller. */
int jig_module_verified_fd(const struct jig_snapshot *s, const struct jig_manifest_module *mm,
			   struct jig_error *e);
/* Stage 2: dlopen of that memfd, descriptor checks, init. Takes fd. */
int jig_module_load_fd(const struct jig_snapshot *s, const struct jig_manifest_module *mm,
		       int memfd, struct jig_module_handle *h, struct jig_error *e);
/* Both stages. kind 0 accepts the manifest's kind. */
int jig_module_load(const struct jig_snapshot *s, const char *name, uint32_t kind,
		    struct jig_module_handle *h, struct jig_error *e);
void jig_module_unload(struct jig_module_handle *h);

#endif
