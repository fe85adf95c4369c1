/* The http module kind (plugins/http): one reviewed, exact HTTP request.
 *
 * The module gives the host the grant-URL rule (used at review, so that the
 * host never parses URLs itself) and ships the worker, a program the host
 * runs in its own contained scope with the host's network and nothing else:
 * JIG_HTTP_WORKER_FILE in the snapshot.
 *
 * The worker's protocol (versioned; a worker refuses another format):
 *
 *   stdin, one JSON object, JIG_HTTP_REQUEST_FORMAT:
 *     {"format", "grant": {"method", "url", "max_request_bytes",
 *      "max_response_bytes", "timeout_ms", "connect_timeout_ms"},
 *      "method", "url", "body"?: JSON text, "bearer"?: token,
 *      "ca_files"?: [paths of the trust store], "ca_pem"?: PEM text}
 *   stdout, one JSON object, JIG_HTTP_RESULT_FORMAT:
 *     {"format", "outcome": "response", "status", "headers": {fixed list},
 *      "body_base64", "request_bytes", "response_bytes", "header_bytes",
 *      "connect_ms", "total_ms", "redirect_not_followed"?}
 *   | {"format", "outcome": "refused" | "failed", "error": one line, counts...}
 *
 * docs/http.md describes what each outcome means. */
#ifndef JIG_HTTP_H
#define JIG_HTTP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_HTTP_WORKER_FILE "libexec/jig-http-worker"
#define JIG_HTTP_REQUEST_FORMAT "jig-http-request/1"
#define JIG_HTTP_RESULT_FORMAT "jig-http-result/1"

/* A URL as libcurl reads it: the module canonicalises, the host decides
 * which URLs may be granted (host policy, docs/http.md). */
struct jig_http_url {
	uint32_t struct_size; /* set by the host */
	char scheme[16];      /* lower case */
	char host[256];	      /* as libcurl normalises it */
	uint32_t has_credentials; /* user or password present */
	uint32_t has_fragment;
	char normal[2100]; /* libcurl's normal form, without a default port */
};

struct jig_http_ops {
	uint32_t struct_size;
	/* Retired (was the grant rule, now host policy): NULL. */
	void *retired_url_check;
	/* Parses url (at most 2048 bytes of printable ASCII) into *out:
	 * JIG_MOD_OK, or JIG_MOD_EINVAL with a one-line reason in why. */
	int (*url_parse)(void *state, const char *url, struct jig_http_url *out, char *why, size_t cap);
	void *reserved[7];
};

#ifdef __cplusplus
}
#endif

#endif
