/* Operator configuration of the HTTP effect (docs/http.md): bearer
 * bindings and an extra CA file, in ${XDG_CONFIG_HOME:-~/.config}/jig/http.json,
 * which must be the operator's and not readable by anyone else. Read afresh
 * for every request, so that revoking a binding stops the next request.
 * Never in the project, the Plan, a record or a log. */
#ifndef JIG_EFFECTS_BINDINGS_H
#define JIG_EFFECTS_BINDINGS_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

#define JIG_HTTP_CONFIG_FORMAT "jig-http-config/1"

struct jig_http_binding {
	char *bearer;  /* NULL: none bound (the request goes without one) */
	char *ca_file; /* absolute path of the operator's extra CA, or NULL */
	json_t *body_schema; /* the operator's own Schema/0 for the body, or NULL */
};

/* Looks up the binding of (flow, route). A binding that names another URL
 * than the grant's, or is revoked, refuses the request (-JIG_E_USAGE); so
 * does an unsafe, malformed or unreadable configuration. No file (ENOENT):
 * no bindings. */
int jig_http_binding_get(const char *flow, const char *route, const char *url, struct jig_http_binding *b,
			 struct jig_error *e);
/* Wipes the bearer and frees. */
void jig_http_binding_free(struct jig_http_binding *b);

#endif
