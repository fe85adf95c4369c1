#include "url.h"

#include <curl/curl.h>
#include <jig/http.h>
#include <stdio.h>
#include <string.h>

/* The worker's own check of what it will send: libcurl's reading of the
 * URL (jig_http_url_parse), then the same rule the host applies to grants
 * (host/policy/grant_url.c; unit.grant_url proves the two agree). */
int jig_http_url_check(const char *url, char *why, size_t cap)
{
	struct jig_http_url u = {.struct_size = sizeof(u)};
	if (jig_http_url_parse(url, &u, why, cap) < 0)
		return -1;
	if (strcmp(u.scheme, "https") != 0 && !(strcmp(u.scheme, "http") == 0 && strcmp(u.host, "127.0.0.1") == 0))
		snprintf(why, cap, "scheme %s to host %s: only https, or http to the numeric loopback 127.0.0.1", u.scheme, u.host);
	else if (u.has_credentials)
		snprintf(why, cap, "carries credentials; bind a bearer in the operator configuration instead");
	else if (u.has_fragment)
		snprintf(why, cap, "has a fragment (#...), which is never sent");
	else if (strcmp(u.normal, url) != 0)
		snprintf(why, cap, "is not in normal form; write it as %s", u.normal);
	else
		return 0;
	return -1;
}

int jig_http_url_same(const char *grant, const char *request)
{
	return strcmp(grant, request) == 0 ? 0 : -1;
}

int jig_http_url_parse(const char *url, struct jig_http_url *out, char *why, size_t cap)
{
	uint32_t size = out->struct_size;
	memset(out, 0, sizeof(*out));
	out->struct_size = size;
	if (strlen(url) > 2048) {
		snprintf(why, cap, "longer than 2048 bytes");
		return -1;
	}
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) {
			snprintf(why, cap, "contains a space, control or non-ASCII byte; percent-encode it");
			return -1;
		}
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *user = NULL, *password = NULL, *fragment = NULL, *norm = NULL;
	int r = -1;
	CURLUcode uc = u ? curl_url_set(u, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
	if (uc != CURLUE_OK) {
		snprintf(why, cap, "not a URL libcurl accepts: %s", curl_url_strerror(uc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_PASSWORD, &password, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0);
	if (!scheme || !host || curl_url_get(u, CURLUPART_URL, &norm, CURLU_NO_DEFAULT_PORT) != CURLUE_OK || !norm ||
	    strlen(scheme) >= sizeof(out->scheme) || strlen(host) >= sizeof(out->host) || strlen(norm) >= sizeof(out->normal)) {
		snprintf(why, cap, "needs a scheme and a host and must fit");
		goto out;
	}
	snprintf(out->scheme, sizeof(out->scheme), "%s", scheme);
	snprintf(out->host, sizeof(out->host), "%s", host);
	snprintf(out->normal, sizeof(out->normal), "%s", norm);
	out->has_credentials = user || password;
	out->has_fragment = fragment != NULL;
	r = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(password);
	curl_free(fragment);
	curl_free(norm);
	curl_url_cleanup(u);
	return r;
}
