/* A registry tarball. An input starting "sha" is the integrity, a NUL,
 * then the tarball: the integrity's own parsing is fuzzed. Any other
 * input is the tarball, and the harness supplies the matching integrity,
 * so every such input reaches libarchive and the entry checks. */
#include <nettle/base64.h>
#include <nettle/sha2.h>

#include "fuzz.h"
#include "prepare/tarball.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct jig_tarball_budget b = {JIG_PREPARED_FILES_MAX, JIG_PREPARED_BYTES_MAX};
	struct jig_error e = {0};
	if (n >= 3 && memcmp(d, "sha", 3) == 0) {
		const char *a, *t;
		size_t an, tn;
		fuzz_split(d, n, &a, &an, &t, &tn);
		char *integ = fuzz_cstr(a, an);
		jig_tarball_inspect(t, tn, integ, "fuzz@1.0.0", &b, &e);
		free(integ);
		return 0;
	}
	uint8_t h[SHA512_DIGEST_SIZE];
	struct sha512_ctx c;
	sha512_init(&c);
	sha512_update(&c, n, d);
	sha512_digest(&c, sizeof(h), h);
	char integ[7 + BASE64_ENCODE_RAW_LENGTH(SHA512_DIGEST_SIZE) + 1] = "sha512-";
	base64_encode_raw(integ + 7, sizeof(h), h);
	integ[sizeof(integ) - 1] = '\0';
	jig_tarball_inspect(d, n, integ, "fuzz@1.0.0", &b, &e);
	return 0;
}
