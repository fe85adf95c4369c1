/* Unit tests trust only the test-only fixture key (tests/fixtures/keys). */
#include "snapshot/trust.h"

const struct jig_trust_anchor jig_trust_anchors[] = {
	{JIG_TEST_PUBKEY, true},
};
const size_t jig_trust_anchor_count = 1;
