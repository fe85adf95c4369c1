/* http: canonicalises URLs for the host (which decides what may be
 * granted); the worker is jig-http-worker. */
#include <jig/http.h>
#include <jig/module.h>

#include "url.h"

static int http_url_parse(void *state, const char *url, struct jig_http_url *out, char *why, size_t cap)
{
	(void)state;
	if (!out || out->struct_size < sizeof(*out))
		return JIG_MOD_EINVAL;
	return jig_http_url_parse(url, out, why, cap) == 0 ? JIG_MOD_OK : JIG_MOD_EINVAL;
}

static const struct jig_http_ops ops = {
	.struct_size = sizeof(struct jig_http_ops),
	.url_parse = http_url_parse,
};

JIG_MODULE_DEFINE(.name = "http", .kind = JIG_KIND_HTTP, .ops_size = sizeof(ops), .version = JIG_VERSION,
		  .ops = &ops);
