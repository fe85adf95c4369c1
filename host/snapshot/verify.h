/* Installation verification modes (issue 7, docs/verification.md).
 *
 * Every review, Run and inspection checks that the installed files a Flow
 * uses (launcher, Bun, runtime support, HTTP worker) are the bytes the signed
 * manifest lists. How their SHA-256 is obtained is the operator's choice:
 *
 *   cached (default) reuse a stored digest only while the canonical path and
 *                    the file's device, inode, mode, owner, size and
 *                    nanosecond mtime and ctime all match; else hash
 *                    (a file changed within the last 20 ms is hashed
 *                    and its digest not stored: it could change again
 *                    within the same clock tick)
 *   strict           hash the current bytes every time, no cache
 *   fast             reuse a stored digest for the path without freshness
 *                    checks (bytes changed at the same path can keep an old
 *                    identity); a miss hashes
 *
 * The cache is operator-private (${XDG_CACHE_HOME:-~/.cache}/jig, 0700;
 * verification.cache, 0600; the operator's), holds only paths, metadata and
 * digests, is written atomically, ends with an HMAC-SHA256 of its text
 * under the operator's secret (state/state.h: a cache planted through
 * $XDG_CACHE_HOME vouches for nothing), and is ignored — with fresh
 * hashing — when unsafe, invalid or its MAC does not match. Modules are hashed as loaded (the loader hashes
 * its sealed copy), except that a root-owned module an unprivileged caller
 * loads in place is not hashed again while its fingerprint matches a stored
 * digest (decision 85); a manifest signature verified before, byte for
 * byte with the same key, is remembered here too. Packages, artifacts and
 * packets are always verified by content. */
#ifndef JIG_SNAPSHOT_VERIFY_H
#define JIG_SNAPSHOT_VERIFY_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "snapshot/snapshot.h"
#include "util/error.h"

enum jig_verification { JIG_VERIFY_CACHED = 0, JIG_VERIFY_STRICT = 1, JIG_VERIFY_FAST = 2 };

struct jig_verifier {
	enum jig_verification mode;
	/* The cache as read: lines of buf, sorted by path; and what this run
	 * stored (path -> "SHA256\tMETA"), which overrides them. */
	char *buf;
	struct jig_verifier_entry {
		const char *path, *val; /* val: "SHA256\tMETA" */
	} * arr;
	size_t n, next; /* entries; the one after the last hit */
	json_t *added;
	bool loaded, dirty, writable;
	unsigned char key[32]; /* the operator's secret: the cache's MAC (state/state.h) */
	char dir[PATH_MAX];
	char root[PATH_MAX]; /* the snapshot's canonical directory */
	struct jig_snapshot_dirmemo memo; /* the last checked parent directory */
	char note[PATH_MAX + 128]; /* why the stored cache was ignored, or "" */
	bool note_quiet; /* ...and not worth a line: another key's cache (decision 193) */
	unsigned hashed, reused;
	uint64_t hashed_bytes;
	uint64_t elapsed_ns; /* spent verifying (cache load and write included) */
};

/* The mode: --verification's value arg (NULL: not given), else
 * JIG_VERIFICATION if set and not empty, else dflt. An unknown value is a
 * usage error naming the valid ones. Nothing is read until a file is. */
int jig_verifier_init(struct jig_verifier *v, const char *arg, enum jig_verification dflt, struct jig_error *e);
/* Opens path of snapshot s (the snapshot's usual checks) and verifies its
 * bytes against the manifest by the mode. Returns the open descriptor. */
int jig_verifier_open(struct jig_verifier *v, const struct jig_snapshot *s, const char *path,
		      struct jig_error *e);
/* Verifies one listed file, stat before open: with a usable stored digest
 * the file is not opened at all. */
int jig_verifier_check_file(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			    struct jig_error *e);
/* Verifies each of paths (opened and closed). */
int jig_verifier_check(struct jig_verifier *v, const struct jig_snapshot *s, const char *const *paths, size_t n,
		       struct jig_error *e);
/* For a module loaded in place (decision 65: root's file, no write bit for
 * group or others, an unprivileged caller; only root can change that
 * inode): true when the cache holds f's manifest digest for exactly this
 * inode's fingerprint st (device, inode, mode, owner, size, nanosecond
 * mtime and ctime), under any mode but strict — the freshness check is
 * made even in fast mode. Then the loader need not hash it again. */
bool jig_verifier_known(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			const struct stat *st);
/* Records that f, with fingerprint st, was just hashed and matched. */
void jig_verifier_remember(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   const struct stat *st);
/* A memo of verified manifest signatures kept in the same cache (entries
 * "/.jig-ed25519-verified/<digest>", the digest over the key, signature
 * and signed bytes; signature.h). Not consulted in strict mode. */
struct jig_signature_memo jig_verifier_signature_memo(struct jig_verifier *v);
/* A memo of checks whose outcome depends only on the bytes a digest
 * covers: "<ns><hex digest>" entries in the same cache (ns starts and ends
 * with '/'). Not consulted or written in strict mode. */
bool jig_verifier_memo_known(struct jig_verifier *v, const char *ns, const unsigned char digest[JIG_SHA256_LEN]);
void jig_verifier_memo_remember(struct jig_verifier *v, const char *ns, const unsigned char digest[JIG_SHA256_LEN]);
/* Writes the cache if it changed (best effort) and frees. */
void jig_verifier_finish(struct jig_verifier *v);
/* {"mode", "files", "hashed", "hashed_bytes", "reused", "elapsed_ms", "cache_ignored"?} */
json_t *jig_verifier_json(const struct jig_verifier *v);

/* Every listed file's bytes (by v's verification mode; NULL: hashed) and no
 * unlisted file. */
int jig_snapshot_verify_all(const struct jig_snapshot *s, struct jig_verifier *v, struct jig_error *e);

#endif
