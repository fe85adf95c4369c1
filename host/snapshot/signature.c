#include "signature.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

static const char sig_prefix[] = JIG_SIG_PREFIX;

unsigned char *jig_signature_message(const char *manifest, size_t mlen, size_t *n)
{
	size_t dlen = sizeof(JIG_SIG_DOMAIN); /* includes the NUL separator */
	unsigned char *msg = malloc(dlen + mlen);
	if (!msg)
		return NULL;
	memcpy(msg, JIG_SIG_DOMAIN, dlen);
	memcpy(msg + dlen, manifest, mlen);
	*n = dlen + mlen;
	return msg;
}

int jig_signature_verify(const char *manifest, size_t mlen, const char *sig, size_t slen,
			 const struct jig_trust_anchor **anchor, char keyid[JIG_KEYID_HEX],
			 struct jig_error *e)
{
	return jig_signature_verify_memo(manifest, mlen, sig, slen, anchor, keyid, NULL, e);
}

#define MEMO_LABEL "jig-ed25519-verified/1" /* and its NUL */

/* SHA-256 of the label, the key, the signature and the message. */
static int memo_digest(const unsigned char pub[JIG_ED25519_PUB_LEN], const unsigned char raw[JIG_ED25519_SIG_LEN],
		       const unsigned char *msg, size_t n, unsigned char out[JIG_SHA256_LEN])
{
	struct jig_sha256_ctx *h = jig_sha256_begin();
	if (!h)
		return -1;
	jig_sha256_update(h, MEMO_LABEL, sizeof(MEMO_LABEL));
	jig_sha256_update(h, pub, JIG_ED25519_PUB_LEN);
	jig_sha256_update(h, raw, JIG_ED25519_SIG_LEN);
	jig_sha256_update(h, msg, n);
	jig_sha256_end(h, out);
	return 0;
}

int jig_signature_verify_memo(const char *manifest, size_t mlen, const char *sig, size_t slen,
			      const struct jig_trust_anchor **anchor, char keyid[JIG_KEYID_HEX],
			      const struct jig_signature_memo *memo, struct jig_error *e)
{
	/* Exact shape: prefix, 16 hex, space, 128 hex, newline. Nothing else. */
	const size_t want = sizeof(sig_prefix) - 1 + 16 + 1 + 128 + 1;
	char idhex[17], sighex[129];
	unsigned char raw[JIG_ED25519_SIG_LEN], pub[JIG_ED25519_PUB_LEN];
	if (slen != want || memcmp(sig, sig_prefix, sizeof(sig_prefix) - 1) != 0 ||
	    sig[want - 1] != '\n' || sig[sizeof(sig_prefix) - 1 + 16] != ' ')
		return jig_err(e, JIG_E_INTEGRITY,
			       "manifest.sig: malformed (expected one line \"jig-signature/1 ed25519 <keyid> <signature>\"); reinstall the snapshot");
	memcpy(idhex, sig + sizeof(sig_prefix) - 1, 16);
	idhex[16] = '\0';
	memcpy(sighex, sig + sizeof(sig_prefix) - 1 + 17, 128);
	sighex[128] = '\0';
	unsigned char idraw[8];
	if (jig_unhex(idhex, idraw, 8) < 0 || jig_unhex(sighex, raw, sizeof(raw)) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "manifest.sig: key id or signature is not lowercase hex");
	const struct jig_trust_anchor *a = jig_trust_find(idhex, pub);
	if (!a)
		return jig_err(e, JIG_E_INTEGRITY,
			       "manifest.sig: signed by key %s, which is not a trusted key of this jig build; install a snapshot from your distributor",
			       idhex);
	size_t n;
	jig_autofree unsigned char *msg = jig_signature_message(manifest, mlen, &n);
	if (!msg)
		return jig_err(e, JIG_E_INTERNAL, "manifest.sig: out of memory");
	unsigned char d[JIG_SHA256_LEN];
	bool keyed = memo && memo_digest(pub, raw, msg, n, d) == 0;
	if (keyed && memo->known(memo->ctx, d)) {
		*anchor = a;
		memcpy(keyid, idhex, JIG_KEYID_HEX);
		return 0;
	}
	if (!jig_ed25519_verify(pub, msg, n, raw))
		return jig_err(e, JIG_E_INTEGRITY,
			       "manifest.json: signature by key %s does not match the manifest bytes (edited after signing?); reinstall the snapshot",
			       idhex);
	if (keyed)
		memo->remember(memo->ctx, d);
	*anchor = a;
	memcpy(keyid, idhex, JIG_KEYID_HEX);
	return 0;
}
