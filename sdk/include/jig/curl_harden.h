/* Helper for jig's own scope programs that fetch with libcurl (the http
 * worker, the installer's fetcher), not part of the module ABI: the one set
 * of options that takes from libcurl everything it would otherwise decide
 * for itself. Header-only, because scope programs cannot share host code. */
#ifndef JIG_CURL_HARDEN_H
#define JIG_CURL_HARDEN_H

#include <curl/curl.h>
#include <stdbool.h>

/* One protocol (plain http only where the caller's URL check allowed a
 * loopback http URL, else https), no redirect followed, no proxy, no netrc,
 * no HSTS, no signals, the peer and its name verified. (alt-svc is off
 * unless CURLOPT_ALTSVC or _CTRL is set; this libcurl refuses _CTRL 0, so
 * neither is.) An option this libcurl refuses fails the caller (never a
 * weaker fetch): CURLE_OK, or the first refusal with *name the option. */
static inline CURLcode jig_curl_harden(CURL *c, bool plain_http, const char **name)
{
	CURLcode rc = CURLE_OK;
#define JIG_HARDEN_SET(opt, val)                                \
	do {                                                    \
		if (rc == CURLE_OK) {                           \
			rc = curl_easy_setopt(c, opt, val);     \
			*name = #opt;                           \
		}                                               \
	} while (0)
	JIG_HARDEN_SET(CURLOPT_PROTOCOLS_STR, plain_http ? "http" : "https");
	JIG_HARDEN_SET(CURLOPT_REDIR_PROTOCOLS_STR, "https");
	JIG_HARDEN_SET(CURLOPT_DEFAULT_PROTOCOL, "https");
	JIG_HARDEN_SET(CURLOPT_FOLLOWLOCATION, 0L);
	JIG_HARDEN_SET(CURLOPT_MAXREDIRS, 0L);
	JIG_HARDEN_SET(CURLOPT_PROXY, "");
	JIG_HARDEN_SET(CURLOPT_NOPROXY, "*");
	JIG_HARDEN_SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	JIG_HARDEN_SET(CURLOPT_HSTS_CTRL, 0L);
	JIG_HARDEN_SET(CURLOPT_NOSIGNAL, 1L);
	JIG_HARDEN_SET(CURLOPT_SSL_VERIFYPEER, 1L);
	JIG_HARDEN_SET(CURLOPT_SSL_VERIFYHOST, 2L);
#undef JIG_HARDEN_SET
	return rc;
}

#endif
