/* The display module kind (plugins/display): the mechanism of the
 * read-only local web display (`--display web`, docs/display.md).
 *
 * The module owns an HTTP/1.1 server (libmicrohttpd) on 127.0.0.1 at a
 * port the kernel picks, with the bounds the host gives it, and the fixed
 * bundled page (index.html, app.js, app.css) compiled into the module's
 * signed bytes. It decides nothing: every complete request is handed to
 * the host's handler exactly as the parser saw it (method, the request
 * target without percent-decoding, every header in order, whether a query
 * or a body came with it), and the host's answer is sent with the host's
 * fixed response headers added. The module never logs a request.
 *
 * Added in SDK 1.3. */
#ifndef JIG_DISPLAY_H
#define JIG_DISPLAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct jig_display_request {
	uint32_t struct_size;
	const char *method;  /* as received */
	const char *target;  /* the path as received, not percent-decoded, without the query */
	const char *version; /* "HTTP/1.1" */
	uint32_t has_query;  /* the target had a query ("?...") */
	uint32_t has_body;   /* Content-Length > 0 or Transfer-Encoding was sent */
	size_t n_headers;
	const char *const *names; /* every header, in order, duplicates kept */
	const char *const *values;
};

/* Filled by the host's handler. The module copies body, then calls
 * release(ctx, body) when it is set. */
struct jig_display_response {
	uint32_t struct_size;
	uint32_t status;
	const char *content_type; /* NULL: no Content-Type (e.g. 204) */
	const void *body;
	size_t len;
	void (*release)(void *ctx, const void *body);
};

typedef void (*jig_display_handler)(void *ctx, const struct jig_display_request *rq,
				    struct jig_display_response *rs);

struct jig_display_config {
	uint32_t struct_size;
	uint32_t max_clients;         /* open connections; one more is closed at once */
	uint32_t max_request_bytes;   /* request line + headers (larger: 414/431 by the parser) */
	uint32_t idle_timeout_s;      /* no byte read or written for this long: closed */
	uint32_t request_deadline_ms; /* a request's head must arrive within this of the connection's
					 start or its previous response: else closed */
	uint32_t drain_ms; /* stop: answers in flight get this long to finish */
	/* Added to every response the handler makes: name/value pairs, NULL-ended. */
	const char *const *headers;
	jig_display_handler handler;
	void *ctx;
};

struct jig_display_ops {
	uint32_t struct_size;
	/* Listens on 127.0.0.1:0 and serves until stop. *port: the port bound.
	 * JIG_MOD_OK, or an error with a one-line reason in why. */
	int (*start)(void *state, const struct jig_display_config *c, void **server, uint16_t *port, char *why,
		     size_t cap);
	/* Stops accepting, lets answers in flight finish within drain_ms, then
	 * closes every connection; no handler runs after it. */
	void (*stop)(void *state, void *server);
	/* The bundled asset name ("index.html", "app.js", "app.css"): its bytes
	 * and media type, or JIG_MOD_EINVAL for any other name. */
	int (*asset)(void *state, const char *name, const void **bytes, size_t *len, const char **media_type);
	void *reserved[6];
};

#ifdef __cplusplus
}
#endif

#endif
