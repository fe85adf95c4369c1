/* jig session's repository map (host/session/map.c, issue 45): the
 * operator's sessions.json is the operator's own file, but it is parsed
 * strictly and its endpoints canonicalised; the first NUL splits the input
 * into the map's bytes and one endpoint string for the endpoint check. */
#include <assert.h>

#include "fuzz.h"
#include "session/map.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > JIG_SESSIONS_MAX_BYTES)
		return 0;
	const char *a, *b;
	size_t an, bn;
	fuzz_split(d, n, &a, &an, &b, &bn);
	struct jig_session_map m = {0};
	struct jig_error e = {0};
	if (jig_session_map_parse(a, an, "sessions.json", &m, &e) == 0) {
		assert(m.doc != NULL);
		jig_session_map_free(&m);
	} else {
		assert(e.msg[0] != '\0'); /* a refusal says why */
		jig_session_map_free(&m);
	}
	char *ep = strndup(b, bn);
	bool loopback = false;
	const char *why = jig_session_endpoint_check(ep, &loopback);
	if (!why) {
		/* An accepted endpoint is canonical: HOST:PORT, no spaces, no
		 * trailing dot, and the boolean form agrees. */
		assert(strchr(ep, ':') != NULL && strchr(ep, ' ') == NULL);
		bool again = false;
		assert(jig_session_endpoint_valid(ep, &again) && again == loopback);
	}
	free(ep);
	return 0;
}
