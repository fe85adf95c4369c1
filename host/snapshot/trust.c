#include "trust.h"

#include <string.h>

const struct jig_trust_anchor *jig_trust_find(const char *keyid,
					      unsigned char pub[JIG_ED25519_PUB_LEN])
{
	for (size_t i = 0; i < jig_trust_anchor_count; i++) {
		char id[JIG_KEYID_HEX];
		if (jig_unhex(jig_trust_anchors[i].pub_hex, pub, JIG_ED25519_PUB_LEN) < 0)
			continue;
		jig_keyid(pub, id);
		if (strcmp(id, keyid) == 0)
			return &jig_trust_anchors[i];
	}
	return NULL;
}
