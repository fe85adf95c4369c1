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

struct jig_http_ops {
	uint32_t struct_size;
	/* JIG_MOD_OK if url is a valid grant URL (https, or http to the numeric
	 * loopback 127.0.0.1; no credentials or fragment) written in libcurl's
	 * normal form; else JIG_MOD_EINVAL with a one-line reason in why. */
	int (*url_check)(void *state, const char *url, char *why, size_t cap);
	void *reserved[8];
};

#ifdef __cplusplus
}
#endif

#endif
