/* A URL as the HTTP module reads it (libcurl's parser) and the host's
 * grant rule over the result. */
#include <jig/http.h>

#include "policy/grant_url.h"
#include "fuzz.h"
#include "url.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 4096)
		return 0;
	char *s = fuzz_cstr(d, n), why[512];
	struct jig_http_url u = {.struct_size = sizeof(u)};
	if (jig_http_url_check(s, why, sizeof(why)) == 0 && jig_http_url_parse(s, &u, why, sizeof(why)) == 0)
		jig_grant_url_allowed(s, &u, why, sizeof(why));
	free(s);
	return 0;
}
