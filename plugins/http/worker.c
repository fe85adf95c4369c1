/* jig-http-worker: performs one reviewed HTTP request (issue 6).
 *
 * Runs inside its own contained scope (host network, nothing else), started
 * by the Flow's coordinator. Its whole input is one JSON object on stdin
 * (the grant, the request, the optional bearer); its whole output is one
 * JSON object on stdout. It never reads its environment, a file other than
 * the CA files it is told about, or any configuration of libcurl's:
 *
 * The protocol (formats, fields) is the SDK's: <jig/http.h>.
 *
 * "refused": the request was never sent (it differs from the grant, its body
 * is too large) or its response was withheld (over the cap, echoes the
 * bearer). "failed": the exchange did not complete (connect, TLS, deadline).
 * The HTTP status of a response is evidence, not success. */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jig/buf.h>
#include <jig/curl_harden.h>
#include <jig/http.h>

#include "url.h"

#define INPUT_MAX (2u << 20)
#define USER_AGENT "jig-http/1"
#define HEADER_MAX (64u << 10)
#define CA_MAX (4u << 20)

/* The caps count wire bytes: there is no decoding (no Accept-Encoding), and
 * returning short ends the transfer at once (CURLE_WRITE_ERROR). */
static size_t on_body(char *d, size_t size, size_t n, void *u)
{
	return jig_buf_add(u, d, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *d, size_t size, size_t n, void *u)
{
	struct jig_buf *h = u;
	/* A new response (a 1xx, or a proxy's) starts over; only the last counts. */
	if (size * n > 5 && memcmp(d, "HTTP/", 5) == 0)
		h->len = 0;
	return jig_buf_add(h, d, size * n) == 0 ? size * n : 0;
}

static json_t *out;

static void emit(void)
{
	json_object_set_new(out, "format", json_string(JIG_HTTP_RESULT_FORMAT));
	char *s = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
	}
	free(s);
	fflush(stdout);
}

static int finish(const char *outcome, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int finish(const char *outcome, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(out, "outcome", json_string(outcome));
	json_object_set_new(out, "error", json_string(msg));
	emit();
	return 0;
}

static const char *const kept_headers[] = {"content-type", "content-length", "location", "retry-after",
					   "etag", "last-modified", "cache-control", "date", NULL};

/* The fixed list of response headers, from the raw header block of the last
 * response (names lower-cased, values trimmed, each at most 1 KiB). */
static json_t *selected_headers(const struct jig_buf *h)
{
	json_t *o = json_object();
	const char *p = h->p ? h->p : "";
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *colon = memchr(p, ':', n);
		if (colon) {
			char name[32];
			size_t nl = (size_t)(colon - p);
			if (nl < sizeof(name)) {
				for (size_t i = 0; i < nl; i++)
					name[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i]);
				name[nl] = '\0';
				for (size_t k = 0; kept_headers[k]; k++)
					if (strcmp(name, kept_headers[k]) == 0) {
						const char *v = colon + 1, *end = p + n;
						while (v < end && (*v == ' ' || *v == '\t'))
							v++;
						while (end > v && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
							end--;
						size_t vl = (size_t)(end - v) > 1024 ? 1024 : (size_t)(end - v);
						/* A non-UTF-8 value is dropped, not mangled. */
						json_t *s = json_stringn(v, vl);
						if (s)
							json_object_set_new(o, name, s);
					}
			}
		}
		p += n + (eol ? 1 : 0);
	}
	return o;
}

static char *read_all(FILE *f, size_t limit, size_t *len)
{
	struct jig_buf b = {.limit = limit};
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (jig_buf_add(&b, chunk, n) < 0) {
			free(b.p);
			return NULL;
		}
	*len = b.len;
	if (!b.p)
		b.p = calloc(1, 1);
	return b.p;
}

static int known_method(const char *m)
{
	static const char *const ok[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", NULL};
	for (size_t i = 0; ok[i]; i++)
		if (strcmp(m, ok[i]) == 0)
			return 1;
	return 0;
}

/* The worker's input: the grant and the request (pointers into req). */
struct job {
	json_t *req;
	const char *gmethod, *gurl, *method, *url, *body, *bearer;
	size_t body_len;
	json_int_t max_req, max_resp, timeout, ctimeout;
};

/* One exchange's libcurl state; opt_rc and opt_name keep the first option
 * this libcurl refused. */
struct exchange {
	CURL *c;
	CURLU *u;
	struct curl_slist *hdrs;
	struct jig_buf resp, head, ca;
	char *auth;
	CURLcode opt_rc;
	const char *opt_name;
};

#define SET(x, opt, val)                                               \
	do {                                                           \
		CURLcode c_ = curl_easy_setopt((x)->c, opt, val);      \
		if (c_ != CURLE_OK && (x)->opt_rc == CURLE_OK)         \
			(x)->opt_rc = c_, (x)->opt_name = #opt;        \
	} while (0)

/* The protocol's fields (<jig/http.h>), and no others: the input cannot
 * carry a header, a proxy, a retry, an option or code of anyone's into
 * the worker. The key of the first unknown field, or NULL. */
static const char *unknown_field(json_t *req)
{
	static const char *const top[] = {"format", "grant", "method", "url", "body", "bearer", "ca_files", "ca_pem", NULL};
	static const char *const grant[] = {"method", "url", "max_request_bytes", "max_response_bytes", "timeout_ms",
					    "connect_timeout_ms", NULL};
	const char *k;
	json_t *v;
	json_object_foreach(req, k, v) {
		size_t i = 0;
		while (top[i] && strcmp(k, top[i]) != 0)
			i++;
		if (!top[i])
			return k;
	}
	json_object_foreach(json_object_get(req, "grant"), k, v) {
		size_t i = 0;
		while (grant[i] && strcmp(k, grant[i]) != 0)
			i++;
		if (!grant[i])
			return k;
	}
	return NULL;
}

/* Reads stdin into j: 0, or -1 once finish() has reported. */
static int read_request(struct job *j)
{
	size_t inlen;
	char *in = read_all(stdin, INPUT_MAX, &inlen);
	json_error_t je;
	j->req = in ? json_loadb(in, inlen, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (in)
		explicit_bzero(in, inlen); /* it held the bearer */
	free(in);
	json_t *req = j->req, *g = json_object_get(req, "grant");
	j->gmethod = json_string_value(json_object_get(g, "method"));
	j->gurl = json_string_value(json_object_get(g, "url"));
	j->method = json_string_value(json_object_get(req, "method"));
	j->url = json_string_value(json_object_get(req, "url"));
	json_t *jbody = json_object_get(req, "body"), *jbearer = json_object_get(req, "bearer");
	j->max_req = json_integer_value(json_object_get(g, "max_request_bytes"));
	j->max_resp = json_integer_value(json_object_get(g, "max_response_bytes"));
	j->timeout = json_integer_value(json_object_get(g, "timeout_ms"));
	j->ctimeout = json_integer_value(json_object_get(g, "connect_timeout_ms"));
	const char *format = json_string_value(json_object_get(req, "format"));
	if (!json_is_object(req) || !format || strcmp(format, JIG_HTTP_REQUEST_FORMAT) != 0 || !j->gmethod || !j->gurl ||
	    !j->method || !j->url || j->max_req <= 0 || j->max_resp <= 0 || j->timeout <= 0 || j->ctimeout <= 0 ||
	    (jbody && !json_is_string(jbody)) || (jbearer && !json_is_string(jbearer)))
		return finish("refused", "malformed worker input"), -1;
	const char *bad = unknown_field(req);
	if (bad)
		return finish("refused", "unknown field \"%.40s\" in the worker's input; only the protocol's fields are read; not sent",
			      bad), -1;
	j->body = json_string_value(jbody);
	j->body_len = jbody ? json_string_length(jbody) : 0;
	j->bearer = json_string_value(jbearer);
	return 0;
}

/* The request must be the grant: the same method, the same URL byte for
 * byte, and that URL a valid grant URL in libcurl's normal form (so an
 * alias like 127.1 or 2130706433 can never match 127.0.0.1). 0, or -1
 * once finish() has reported. */
static int check_grant(const struct job *j)
{
	char why[256];
	if (!known_method(j->gmethod) || strcmp(j->method, j->gmethod) != 0)
		return finish("refused", "method %s is not the granted %s", j->method, j->gmethod), -1;
	if (jig_http_url_check(j->url, why, sizeof(why)) < 0)
		return finish("refused", "URL %s %s", j->url, why), -1;
	if (jig_http_url_same(j->gurl, j->url) < 0) /* so the grant's URL is valid too */
		return finish("refused", "URL %s is not the granted %s", j->url, j->gurl), -1;
	if (j->body_len > (size_t)j->max_req)
		return finish("refused", "request body of %zu bytes is over the grant's %lld", j->body_len,
			      (long long)j->max_req), -1;
	const char *b = j->bearer;
	if (b && (!b[0] || strpbrk(b, "\r\n") || strlen(b) > 4096))
		return finish("refused", "the bound bearer is empty, too long or has a line break"), -1;
	return 0;
}

/* Everything libcurl would otherwise decide for itself, decided here (the
 * SDK's one set, <jig/curl_harden.h>, then this request's deadlines, caps
 * and callbacks). 0, or -1 once finish() has reported. */
static int set_options(struct exchange *x, const struct job *j)
{
	x->c = curl_easy_init();
	x->u = curl_url();
	x->resp.limit = (size_t)j->max_resp;
	if (!x->c || !x->u || curl_url_set(x->u, CURLUPART_URL, j->url, 0) != CURLUE_OK)
		return finish("failed", "libcurl cannot take the URL"), -1;
	SET(x, CURLOPT_CURLU, x->u);
	const char *name = "";
	CURLcode rc = jig_curl_harden(x->c, strncmp(j->url, "http://", 7) == 0, &name);
	if (rc != CURLE_OK && x->opt_rc == CURLE_OK)
		x->opt_rc = rc, x->opt_name = name;
	SET(x, CURLOPT_CONNECTTIMEOUT_MS, (long)j->ctimeout);
	SET(x, CURLOPT_TIMEOUT_MS, (long)j->timeout);
	SET(x, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)j->max_resp);
	SET(x, CURLOPT_USERAGENT, USER_AGENT);
	SET(x, CURLOPT_WRITEFUNCTION, on_body);
	SET(x, CURLOPT_WRITEDATA, &x->resp);
	SET(x, CURLOPT_HEADERFUNCTION, on_header);
	SET(x, CURLOPT_HEADERDATA, &x->head);
	return 0;
}

/* The trust store: the files named (the system bundle and the operator's
 * extra CA), concatenated; otherwise libcurl's default bundle. 0, or -1
 * once finish() has reported. */
static int trust_store(struct exchange *x, json_t *req)
{
	size_t k;
	json_t *cf;
	json_array_foreach(json_object_get(req, "ca_files"), k, cf) {
		FILE *f = json_is_string(cf) ? fopen(json_string_value(cf), "re") : NULL;
		size_t n = 0;
		char *d = f ? read_all(f, CA_MAX, &n) : NULL;
		if (f)
			fclose(f);
		if (!d || jig_buf_add(&x->ca, d, n) < 0 || jig_buf_add(&x->ca, "\n", 1) < 0) {
			free(d);
			return finish("failed", "CA file %s: cannot be read (or over 4 MiB)", json_string_value(cf)), -1;
		}
		free(d);
	}
	const char *pem = json_string_value(json_object_get(req, "ca_pem"));
	if (pem && (jig_buf_add(&x->ca, pem, strlen(pem)) < 0 || jig_buf_add(&x->ca, "\n", 1) < 0))
		return finish("failed", "the operator's CA is over 4 MiB"), -1;
	if (x->ca.len) {
		struct curl_blob blob = {.data = x->ca.p, .len = x->ca.len, .flags = CURL_BLOB_COPY};
		SET(x, CURLOPT_CAINFO_BLOB, &blob);
	}
	return 0;
}

/* Headers: only these. No Expect: 100-continue, no user headers. Then the
 * method and the body. */
static void set_message(struct exchange *x, const struct job *j)
{
	x->hdrs = curl_slist_append(x->hdrs, "Expect:");
	if (j->body)
		x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
	if (j->bearer) {
		size_t al = strlen(j->bearer) + 32;
		x->auth = malloc(al);
		snprintf(x->auth, al, "Authorization: Bearer %s", j->bearer);
		x->hdrs = curl_slist_append(x->hdrs, x->auth);
	}
	SET(x, CURLOPT_HTTPHEADER, x->hdrs);
	const char *m = j->method;
	if (strcmp(m, "HEAD") == 0)
		SET(x, CURLOPT_NOBODY, 1L);
	else if (strcmp(m, "GET") != 0)
		SET(x, CURLOPT_CUSTOMREQUEST, m);
	if (j->body || strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0) {
		/* No body still sends Content-Length: 0, never a chunked upload. */
		SET(x, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body_len);
		SET(x, CURLOPT_POSTFIELDS, j->body ? j->body : "");
	}
}
#undef SET

/* The response as the result shows it: the selected headers and the body
 * in base64. */
static void answer(const struct exchange *x, long status)
{
	char *b64 = malloc(4 * ((x->resp.len + 2) / 3) + 1);
	if (!b64) {
		finish("failed", "out of memory");
		return;
	}
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)(x->resp.p ? x->resp.p : ""), (int)x->resp.len);
	if (!x->resp.len)
		b64[0] = '\0';
	json_object_set_new(out, "outcome", json_string("response"));
	json_object_set_new(out, "headers", selected_headers(&x->head));
	json_object_set_new(out, "body_base64", json_string(b64));
	if (status >= 300 && status < 400)
		json_object_set_new(out, "redirect_not_followed", json_true());
	free(b64);
	emit();
}

/* Sends the request and reports: the sizes and times always, then the
 * response, or why it was withheld or failed. */
static void perform(struct exchange *x, const struct job *j)
{
	CURLcode rc = curl_easy_perform(x->c);
	long status = 0;
	curl_off_t connect_us = 0, total_us = 0, upload = 0;
	long reqsize = 0;
	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->c, CURLINFO_CONNECT_TIME_T, &connect_us);
	curl_easy_getinfo(x->c, CURLINFO_TOTAL_TIME_T, &total_us);
	curl_easy_getinfo(x->c, CURLINFO_SIZE_UPLOAD_T, &upload);
	curl_easy_getinfo(x->c, CURLINFO_REQUEST_SIZE, &reqsize);
	json_object_set_new(out, "request_bytes", json_integer((json_int_t)reqsize + (json_int_t)upload));
	json_object_set_new(out, "response_bytes", json_integer((json_int_t)x->resp.len));
	json_object_set_new(out, "header_bytes", json_integer((json_int_t)x->head.len));
	json_object_set_new(out, "connect_ms", json_integer((json_int_t)(connect_us / 1000)));
	json_object_set_new(out, "total_ms", json_integer((json_int_t)(total_us / 1000)));
	if (status)
		json_object_set_new(out, "status", json_integer(status));
	const char *bearer = j->bearer;
	if (x->resp.over)
		finish("refused", "the response body is over the grant's %lld bytes; cut and withheld", (long long)j->max_resp);
	else if (x->head.over)
		finish("refused", "the response headers are over %u bytes; cut and withheld", HEADER_MAX);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		finish("failed", "the deadline of %lld ms passed (connect deadline %lld ms); the exchange was cut",
		       (long long)j->timeout, (long long)j->ctimeout);
	else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CONNECT_ERROR)
		finish("failed", "TLS: %s (the server's certificate is not trusted, or the handshake failed)", curl_easy_strerror(rc));
	else if (rc != CURLE_OK)
		finish("failed", "%s", curl_easy_strerror(rc));
	else if (bearer && (memmem(x->resp.p ? x->resp.p : "", x->resp.len, bearer, strlen(bearer)) ||
			    memmem(x->head.p ? x->head.p : "", x->head.len, bearer, strlen(bearer))))
		finish("refused", "the response contains the bound bearer credential; withheld");
	else
		answer(x, status);
}

static void exchange_free(struct exchange *x)
{
	if (x->auth) {
		explicit_bzero(x->auth, strlen(x->auth));
		free(x->auth);
	}
	curl_slist_free_all(x->hdrs);
	curl_easy_cleanup(x->c);
	curl_url_cleanup(x->u);
	free(x->resp.p);
	free(x->head.p);
	free(x->ca.p);
}

/* read the request → check it against the grant → libcurl's options → the
 * trust store → headers and body → perform and report. */
int main(void)
{
	/* libcurl reads proxies, SSLKEYLOGFILE, netrc and CURL_HOME from the
	 * environment; the scope's is empty, and so is ours from here on. */
	clearenv();
	out = json_object();
	struct job j = {0};
	struct exchange x = {.head = {.limit = HEADER_MAX}, .ca = {.limit = CA_MAX}, .opt_name = ""};
	bool curl_up = false;
	if (read_request(&j) < 0 || check_grant(&j) < 0)
		goto done;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		finish("failed", "libcurl cannot initialise");
		goto done;
	}
	curl_up = true;
	if (set_options(&x, &j) < 0 || trust_store(&x, j.req) < 0)
		goto done;
	set_message(&x, &j);
	if (x.opt_rc != CURLE_OK)
		finish("failed", "this libcurl refuses %s (%s); not sent", x.opt_name, curl_easy_strerror(x.opt_rc));
	else
		perform(&x, &j);
done:
	exchange_free(&x);
	json_decref(j.req);
	json_decref(out);
	if (curl_up)
		curl_global_cleanup();
	return 0;
}
