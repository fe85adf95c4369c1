/* The snapshot manifest: every file with size and SHA-256, every module's
 * name/kind/ABI/platform, and a monotonically increasing sequence. */
#ifndef JIG_SNAPSHOT_MANIFEST_H
#define JIG_SNAPSHOT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "../util/crypto.h"
#include "../util/error.h"
#include "util/limits.h"

#define JIG_MANIFEST_FORMAT "jig-snapshot-manifest/3"

struct jig_manifest_file {
	char *path; /* normalised, relative to the snapshot directory */
	uint64_t size;
	unsigned char sha256[JIG_SHA256_LEN];
};

struct jig_manifest_module {
	char *name;
	uint32_t kind; /* enum jig_module_kind */
	uint16_t abi_major, abi_minor;
	char *platform;
	const struct jig_manifest_file *file; /* into jig_manifest.files */
};

struct jig_manifest {
	char *id;
	uint64_t sequence;
	char *platform;
	size_t nfiles;
	struct jig_manifest_file *files; /* sorted by path, unique */
	char *paths;			 /* the files' paths point into this */
	size_t nmodules;
	struct jig_manifest_module *modules;
};

/* Host platform string, e.g. "linux-x86_64". */
const char *jig_host_platform(void);

const char *jig_kind_name(uint32_t kind);
int jig_kind_parse(const char *s, uint32_t *out); /* 0 or -1 */

/* The signed manifest.json (buf, len) and the file list it pins by size and
 * SHA-256 (manifest.files: files, flen). Keeping the list out of the JSON
 * lets a 10,000-file snapshot open with one hash and a line scan. */
int jig_manifest_parse(struct jig_manifest *m, const char *buf, size_t len, const char *files,
		       size_t flen, struct jig_error *e);
/* true for manifest.json, manifest.sig and manifest.files: the top-level
 * names that describe a snapshot rather than belong to it. */
int jig_manifest_is_reserved(const char *rel);
void jig_manifest_free(struct jig_manifest *m);
const struct jig_manifest_file *jig_manifest_find_file(const struct jig_manifest *m,
							const char *path);
const struct jig_manifest_module *jig_manifest_find_module(const struct jig_manifest *m,
							    const char *name);
/* true iff s is a valid module name or snapshot id. */
int jig_name_is_valid(const char *s);

#endif
