/* Which display requests are answered (docs/display.md, "Requests"). The
 * order is fixed: the origin rules first (no data without the exact Host,
 * at most one exact Origin, a same-origin fetch site), then the method and
 * body, then the capability for everything under /api/, then the route.
 * Every refusal of one kind is one identical answer. */
#include "display/display.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "util/crypto.h"

const char *const jig_display_headers[] = {
	"Content-Security-Policy",
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options", "nosniff",
	"Referrer-Policy", "no-referrer",
	"Cache-Control", "no-store",
	"Cross-Origin-Resource-Policy", "same-origin",
	"Cross-Origin-Opener-Policy", "same-origin",
	"X-Frame-Options", "DENY",
	NULL, NULL,
};

int jig_display_policy_init(struct jig_display_policy *p, uint16_t port, struct jig_error *e)
{
	unsigned char rnd[JIG_DISPLAY_CAP_BYTES];
	memset(p, 0, sizeof(*p));
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return jig_err(e, JIG_E_INTERNAL, "display: getrandom: %s", strerror(errno));
	jig_hex(rnd, sizeof(rnd), p->cap);
	explicit_bzero(rnd, sizeof(rnd));
	snprintf(p->host, sizeof(p->host), "127.0.0.1:%u", (unsigned)port);
	snprintf(p->origin, sizeof(p->origin), "http://127.0.0.1:%u", (unsigned)port);
	return 0;
}

/* The one value of header name, or NULL; *count says how many were sent. */
static const char *header(const struct jig_display_request *rq, const char *name, int *count)
{
	const char *v = NULL;
	*count = 0;
	for (size_t i = 0; i < rq->n_headers; i++)
		if (strcasecmp(rq->names[i], name) == 0) {
			v = rq->values[i];
			++*count;
		}
	return *count == 1 ? v : NULL;
}

/* Constant time in the value's content (its length is no secret). */
static bool same_secret(const char *got, const char *want)
{
	size_t n = strlen(want);
	if (!got || n == 0 || strlen(got) != n)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)got[i] ^ (unsigned char)want[i];
	return diff == 0;
}

static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static struct jig_display_decision refuse(unsigned status)
{
	return (struct jig_display_decision){.route = JIG_ROUTE_REFUSED, .status = status};
}

/* Host exactly once and exactly 127.0.0.1:PORT (no name, no other port or
 * address, no trailing dot, no absolute-form target); Origin at most once
 * and exact; Sec-Fetch-Site at most once, same-origin (or none for the
 * page itself). */
static unsigned origin_rules(const struct jig_display_policy *p, const struct jig_display_request *rq, bool page)
{
	int n;
	const char *host = header(rq, "Host", &n);
	if (!host || strcmp(host, p->host) != 0 || rq->target[0] != '/')
		return 421;
	const char *origin = header(rq, "Origin", &n);
	if (n > 1 || (n == 1 && strcmp(origin, p->origin) != 0))
		return 403;
	const char *site = header(rq, "Sec-Fetch-Site", &n);
	if (n > 1 || (n == 1 && strcmp(site, "same-origin") != 0 && !(page && strcmp(site, "none") == 0)))
		return 403;
	return 0;
}

struct jig_display_decision jig_display_authorize(const struct jig_display_policy *p,
						  const struct jig_display_request *rq)
{
	if (!rq->method || !rq->target || !rq->version || strcmp(rq->version, "HTTP/1.1") != 0)
		return refuse(400);
	bool get = strcmp(rq->method, "GET") == 0;
	unsigned st = origin_rules(p, rq, get && strcmp(rq->target, "/") == 0);
	if (st)
		return refuse(st);
	bool close = strcmp(rq->target, "/api/close") == 0, post = strcmp(rq->method, "POST") == 0;
	if (close ? !post : !get)
		return refuse(405);
	if (rq->has_body)
		return refuse(400);
	if (strncmp(rq->target, "/api/", 5) != 0) {
		static const char *const assets[][2] = {{"/", "index.html"}, {"/app.js", "app.js"}, {"/app.css", "app.css"}};
		for (size_t i = 0; !rq->has_query && i < sizeof(assets) / sizeof(assets[0]); i++)
			if (strcmp(rq->target, assets[i][0]) == 0)
				return (struct jig_display_decision){.route = JIG_ROUTE_ASSET, .asset = assets[i][1]};
		return refuse(404);
	}
	int n;
	if (!same_secret(header(rq, JIG_DISPLAY_CAP_HEADER, &n), p->cap))
		return refuse(401);
	if (rq->has_query)
		return refuse(404);
	if (close) {
		/* A browser always sends Origin with a POST: its absence is no browser. */
		header(rq, "Origin", &n);
		return n == 1 ? (struct jig_display_decision){.route = JIG_ROUTE_CLOSE} : refuse(403);
	}
	if (strcmp(rq->target, "/api/view") == 0)
		return (struct jig_display_decision){.route = JIG_ROUTE_VIEW};
	const char *id = rq->target + strlen("/api/artifact/");
	if (strncmp(rq->target, "/api/artifact/", 14) == 0 && is_hex64(id)) {
		struct jig_display_decision d = {.route = JIG_ROUTE_ARTIFACT};
		memcpy(d.artifact, id, 65);
		return d;
	}
	return refuse(404);
}
