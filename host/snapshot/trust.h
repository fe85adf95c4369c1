/* Trust anchors: the distributor public keys compiled into this build.
 * A local build without configured keys gets a generated development key,
 * marked as such wherever it is shown. */
#ifndef JIG_SNAPSHOT_TRUST_H
#define JIG_SNAPSHOT_TRUST_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/crypto.h"

struct jig_trust_anchor {
	const char *pub_hex; /* raw Ed25519 public key, 64 hex digits */
	bool development;
};

extern const struct jig_trust_anchor jig_trust_anchors[];
extern const size_t jig_trust_anchor_count;

/* Finds the anchor whose key id is keyid; fills pub. NULL if none. */
const struct jig_trust_anchor *jig_trust_find(const char *keyid,
					      unsigned char pub[JIG_ED25519_PUB_LEN]);

#endif
