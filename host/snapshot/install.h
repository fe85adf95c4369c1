/* Distributor side: create, sign and install snapshots. */
#ifndef JIG_SNAPSHOT_INSTALL_H
#define JIG_SNAPSHOT_INSTALL_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

struct jig_create_module {
	const char *name, *kind, *path;
	unsigned abi_major, abi_minor;
};

/* Writes <dir>/manifest.json listing every regular file under dir. */
int jig_snapshot_create(const char *dir, const char *id, uint64_t sequence, const char *platform,
			const struct jig_create_module *mods, size_t nmods, struct jig_error *e);
/* Writes <dir>/manifest.sig with the private key at key_path. */
int jig_snapshot_sign(const char *dir, const char *key_path, char keyid_out[17],
		      struct jig_error *e);
/* Verifies dir, copies it into <prefix>/lib/jig/snapshots/.staging-<id>,
 * verifies the copy, renames it into place, records the accepted sequence
 * and switches <prefix>/lib/jig/current by atomic rename. */
int jig_snapshot_install(const char *dir, const char *prefix, struct jig_error *e);

#endif
