/* http: the grant-URL rule for review; the worker is jig-http-worker. */
#include <jig/http.h>
#include <jig/module.h>

#include "url.h"

static int http_url_check(void *state, const char *url, char *why, size_t cap)
{
	(void)state;
	return jig_http_url_check(url, why, cap) == 0 ? JIG_MOD_OK : JIG_MOD_EINVAL;
}

static const struct jig_http_ops ops = {
	.struct_size = sizeof(struct jig_http_ops),
	.url_check = http_url_check,
};

JIG_MODULE_DEFINE(.name = "http", .kind = JIG_KIND_HTTP, .ops_size = sizeof(ops), .version = JIG_VERSION,
		  .ops = &ops);
