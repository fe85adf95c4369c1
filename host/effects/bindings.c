/* Operator bindings for the HTTP effect. */
#include "effects/bindings.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/schema0.h"
#include "config/config.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

#define CONFIG_MAX (64 * 1024)

int jig_http_binding_get(const char *flow, const char *route, const char *url, struct jig_http_binding *b,
			 struct jig_error *e)
{
	memset(b, 0, sizeof(*b));
	char what[PATH_MAX + 16];
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_config_read("http.json", CONFIG_MAX, JIG_CONFIG_SECRET, what, sizeof(what), &buf, &len, e);
	if (r == JIG_CONFIG_ABSENT)
		return 0;
	if (r)
		return r;
	json_t *doc = NULL, *bindings = NULL, *hit = NULL;
	const char *format;
	static const char *const keys[] = {"format", "ca_file", "bindings", NULL};
	static const char *const bkeys[] = {"flow", "route", "url", "bearer", "revoked", "body_schema", NULL};
	if ((r = jig_json_parse_secret_object(buf, len, what, &doc, e)) || (r = jig_json_only_keys(doc, keys, what, e)) ||
	    (r = jig_json_get_string(doc, "format", what, &format, e)))
		goto out;
	if (strcmp(format, JIG_HTTP_CONFIG_FORMAT) != 0) {
		r = jig_err(e, JIG_E_USAGE, "%s: format \"%.40s\" is not " JIG_HTTP_CONFIG_FORMAT, what, format);
		goto out;
	}
	json_t *ca = json_object_get(doc, "ca_file");
	if (ca && (!json_is_string(ca) || json_string_value(ca)[0] != '/')) {
		r = jig_err(e, JIG_E_USAGE, "%s: ca_file must be an absolute path", what);
		goto out;
	}
	if (json_object_get(doc, "bindings") && (r = jig_json_get_array(doc, "bindings", what, 256, &bindings, e)))
		goto out;
	size_t i;
	json_t *v;
	json_array_foreach(bindings, i, v) {
		char w[PATH_MAX + 64];
		snprintf(w, sizeof(w), "%s: bindings[%zu]", what, i);
		const char *bf, *br, *bu;
		if (!json_is_object(v)) {
			r = jig_err(e, JIG_E_USAGE, "%s: must be an object", w);
			goto out;
		}
		if ((r = jig_json_only_keys(v, bkeys, w, e)) || (r = jig_json_get_string(v, "flow", w, &bf, e)) ||
		    (r = jig_json_get_string(v, "route", w, &br, e)) || (r = jig_json_get_string(v, "url", w, &bu, e)))
			goto out;
		json_t *bearer = json_object_get(v, "bearer"), *revoked = json_object_get(v, "revoked");
		if ((bearer && (!json_is_string(bearer) || !json_string_length(bearer))) || (revoked && !json_is_boolean(revoked))) {
			r = jig_err(e, JIG_E_USAGE, "%s: bearer must be a non-empty string and revoked a boolean", w);
			goto out;
		}
		json_t *schema = json_object_get(v, "body_schema");
		struct jig_error se = {0};
		if (schema && jig_schema0_check(schema, &se) < 0) {
			r = jig_err(e, JIG_E_USAGE, "%s: body_schema: %s", w, se.msg);
			goto out;
		}
		if (strcmp(bf, flow) == 0 && strcmp(br, route) == 0) {
			if (hit) {
				r = jig_err(e, JIG_E_USAGE, "%s: flow %s route %s is bound twice", what, flow, route);
				goto out;
			}
			hit = v;
		}
	}
	if (hit) {
		if (json_is_true(json_object_get(hit, "revoked"))) {
			r = jig_err(e, JIG_E_USAGE, "the operator revoked the binding of route %s (%s); not sent", route, what);
			goto out;
		}
		if (strcmp(json_string_value(json_object_get(hit, "url")), url) != 0) {
			r = jig_err(e, JIG_E_USAGE, "the operator bound route %s to another URL than the granted %s; its bearer goes nowhere else, not sent", route, url);
			goto out;
		}
		json_t *bearer = json_object_get(hit, "bearer");
		if (bearer && !(b->bearer = strdup(json_string_value(bearer))))
			r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		b->body_schema = json_incref(json_object_get(hit, "body_schema"));
	}
	if (!r && ca && !(b->ca_file = strdup(json_string_value(ca))))
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
out:
	explicit_bzero(buf, len);
	json_decref(doc); /* jansson's copies of the token are freed, not wiped */
	if (r)
		jig_http_binding_free(b);
	return r;
}

void jig_http_binding_free(struct jig_http_binding *b)
{
	if (b->bearer) {
		explicit_bzero(b->bearer, strlen(b->bearer));
		free(b->bearer);
	}
	free(b->ca_file);
	json_decref(b->body_schema);
	memset(b, 0, sizeof(*b));
}
