/* The exact URL of an HTTP grant (issue 6): https, or http only to the
 * numeric loopback address 127.0.0.1; no credentials in the URL, no
 * fragment; and written in the normal form libcurl gives it, so that forms
 * curl would rewrite ("127.1", "2130706433", "0x7f.1", "localhost", an
 * upper-case scheme, a default port) never match a grant by accident. */
#ifndef JIG_HTTP_URL_H
#define JIG_HTTP_URL_H

#include <stddef.h>

/* 0 if url is one the worker will send: the same rule the host applies to
 * grants, checked again by the worker itself (it never sends plaintext off
 * the loopback); else -1 with why set (one line). */
int jig_http_url_check(const char *url, char *why, size_t cap);

struct jig_http_url;
/* Parses url into out (libcurl's reading and normal form): 0, or -1 with
 * why set. The module's url_parse; the grant rule is the host's. */
int jig_http_url_parse(const char *url, struct jig_http_url *out, char *why, size_t cap);

/* 0 if request is byte for byte the granted URL (both already checked). */
int jig_http_url_same(const char *grant, const char *request);

#endif
