#include "url.h"

#include <curl/curl.h>
#include <jig/http.h>
#include <stdio.h>
#include <string.h>

int jig_http_url_check(const char *url, char *why, size_t cap)
{
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
	char *scheme = NULL, *host = NULL, *user = NULL, *password = NULL, *fragment = NULL, *norm = NULL, *port = NULL;
	int r = -1;
	if (!u) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	/* No guessing of a scheme, no default scheme: "example.com/x" is not a URL. */
	CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		snprintf(why, cap, "not a URL libcurl accepts: %s", curl_url_strerror(uc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_PASSWORD, &password, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0);
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	if (!scheme || !host) {
		snprintf(why, cap, "needs a scheme and a host");
		goto out;
	}
	if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 && strcmp(host, "127.0.0.1") == 0)) {
		snprintf(why, cap, "scheme %s to host %s: only https, or http to the numeric loopback 127.0.0.1", scheme, host);
		goto out;
	}
	if (user || password) {
		snprintf(why, cap, "carries credentials; bind a bearer in the operator configuration instead");
		goto out;
	}
	if (fragment) {
		snprintf(why, cap, "has a fragment (#...), which is never sent");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_URL, &norm, CURLU_NO_DEFAULT_PORT) != CURLUE_OK || !norm) {
		snprintf(why, cap, "cannot be normalised");
		goto out;
	}
	if (strcmp(norm, url) != 0) {
		snprintf(why, cap, "is not in normal form; write it as %s", norm);
		goto out;
	}
	r = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(password);
	curl_free(fragment);
	curl_free(port);
	curl_free(norm);
	curl_url_cleanup(u);
	return r;
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
