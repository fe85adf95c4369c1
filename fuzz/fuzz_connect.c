/* The CONNECT relay's request head (host/sandbox/netrelay.c,
 * jig_connect_parse): the bytes a scope sends to its proxy endpoint. */
#include <assert.h>

#include "fuzz.h"
#include "sandbox/netrelay.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 2 * JIG_NETRELAY_CONNECT_MAX_HEADER)
		return 0;
	/* The relay's buffer holds no terminator: parse the bytes as they are. */
	char *buf = malloc(n ? n : 1);
	memcpy(buf, d, n);
	char host[JIG_POLICY_MAX_ENDPOINT + 1], again[JIG_POLICY_MAX_ENDPOINT + 1];
	uint16_t port = 0, port2 = 0;
	size_t head = 0;
	enum jig_connect_parse v = jig_connect_parse(buf, n, &head, host, sizeof(host), &port);
	if (v == JIG_CONNECT_OK) {
		/* A whole head inside the bytes and the cap; its target is one the
		 * policy language accepts, and a longer read parses the same. */
		assert(head >= 4 && head <= n && head <= JIG_NETRELAY_CONNECT_MAX_HEADER);
		assert(memcmp(buf + head - 4, "\r\n\r\n", 4) == 0 && port > 0);
		char ep[JIG_POLICY_MAX_ENDPOINT + 8];
		snprintf(ep, sizeof(ep), "%s:%u", host, (unsigned)port);
		assert(jig_endpoint_split(ep, again, sizeof(again), &port2) == 0 && port2 == port && strcmp(again, host) == 0);
		size_t h2 = 0;
		assert(jig_connect_parse(buf, head, &h2, again, sizeof(again), &port2) == JIG_CONNECT_OK && h2 == head);
	} else if (v == JIG_CONNECT_MORE) {
		assert(n < JIG_NETRELAY_CONNECT_MAX_HEADER);
	} else if (v == JIG_CONNECT_TOO_LARGE) {
		assert(n >= JIG_NETRELAY_CONNECT_MAX_HEADER);
	}
	free(buf);
	return 0;
}
