/* manifest.sig: one line, "jig-signature/1 ed25519 <keyid> <signature>\n",
 * a detached Ed25519 signature over JIG_SIG_DOMAIN followed by the exact
 * manifest bytes (bytes, never re-serialised JSON). */
#ifndef JIG_SNAPSHOT_SIGNATURE_H
#define JIG_SNAPSHOT_SIGNATURE_H

#include <stddef.h>

#include "../util/crypto.h"
#include "../util/error.h"
#include "trust.h"
#include "util/limits.h"

#define JIG_SIG_DOMAIN "jig-snapshot-manifest/1" /* followed by one NUL byte */

/* Verifies sig against the compiled-in trust anchors. */
int jig_signature_verify(const char *manifest, size_t mlen, const char *sig, size_t slen,
			 const struct jig_trust_anchor **anchor, char keyid[JIG_KEYID_HEX],
			 struct jig_error *e);
/* A memo of Ed25519 verifications that succeeded (issue 14, decision 85),
 * keyed by the SHA-256 of everything the verification reads: a label, the
 * trusted public key, the 64 signature bytes and the signed message. The
 * same inputs give the same answer, so a hit stands for the verification;
 * any other byte (manifest, signature or key) is another key, a miss. */
struct jig_signature_memo {
	void *ctx;
	int (*known)(void *ctx, const unsigned char digest[JIG_SHA256_LEN]);
	void (*remember)(void *ctx, const unsigned char digest[JIG_SHA256_LEN]);
};
/* jig_signature_verify, with the same format, key id and trust checks
 * every time; memo (may be NULL) stands in only for the Ed25519 step. */
int jig_signature_verify_memo(const char *manifest, size_t mlen, const char *sig, size_t slen,
			      const struct jig_trust_anchor **anchor, char keyid[JIG_KEYID_HEX],
			      const struct jig_signature_memo *memo, struct jig_error *e);
#define JIG_SIG_PREFIX "jig-signature/1 ed25519 "
/* The signed bytes: the domain string, then the manifest. Caller frees. */
unsigned char *jig_signature_message(const char *manifest, size_t mlen, size_t *n);
/* Signs with a private key file; *out is the signature file's text
 * (distributor side: host/snapshot/install.c, not linked into jig). */
int jig_signature_make(const char *manifest, size_t mlen, const char *key_path, char **out,
		       char keyid[JIG_KEYID_HEX], struct jig_error *e);

#endif
