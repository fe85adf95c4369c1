#include "policy/grant_url.h"

#include <stdio.h>
#include <string.h>

int jig_grant_url_allowed(const char *url, const struct jig_http_url *u, char *why, size_t cap)
{
	if (strcmp(u->scheme, "https") != 0 && !(strcmp(u->scheme, "http") == 0 && strcmp(u->host, "127.0.0.1") == 0)) {
		snprintf(why, cap, "scheme %s to host %s: only https, or http to the numeric loopback 127.0.0.1", u->scheme,
			 u->host);
		return -1;
	}
	if (u->has_credentials) {
		snprintf(why, cap, "carries credentials; bind a bearer in the operator configuration instead");
		return -1;
	}
	if (u->has_fragment) {
		snprintf(why, cap, "has a fragment (#...), which is never sent");
		return -1;
	}
	if (strcmp(u->normal, url) != 0) {
		snprintf(why, cap, "is not in normal form; write it as %s", u->normal);
		return -1;
	}
	return 0;
}
