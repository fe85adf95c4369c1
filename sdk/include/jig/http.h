/* The http module kind (plugins/http): one reviewed, exact HTTP request.
 *
 * The module gives the host the grant-URL rule (used at review, so that the
 * host never parses URLs itself) and ships the worker, a program the host
 * runs in its own contained scope with the host's network and nothing else:
 * JIG_HTTP_WORKER_FILE in the snapshot. The worker's stdin/stdout protocol
 * is documented in plugins/http/worker.c and docs/http.md. */
#ifndef JIG_HTTP_H
#define JIG_HTTP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_HTTP_WORKER_FILE "libexec/jig-http-worker"

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
