/* Which URLs an HTTP grant may name (host policy; the http module only
 * reads URLs, libcurl's way): https, or http to the numeric loopback
 * 127.0.0.1 only; no credentials, no fragment; and written exactly in the
 * normal form libcurl gives it, so that forms curl would rewrite
 * ("127.1", "2130706433", "0x7f.1", "localhost", an upper-case scheme, a
 * default port) never match a grant by accident. */
#ifndef JIG_POLICY_GRANT_URL_H
#define JIG_POLICY_GRANT_URL_H

#include <stddef.h>

#include <jig/http.h>

/* 0 if url, read by the module as u, may be granted; else -1 with a
 * one-line reason in why. */
int jig_grant_url_allowed(const char *url, const struct jig_http_url *u, char *why, size_t cap);

#endif
