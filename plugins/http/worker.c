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

#include <jig/http.h>

#include "url.h"

#define INPUT_MAX (2u << 20)
#define HEADER_MAX (64u << 10)
#define CA_MAX (4u << 20)

struct buf {
	char *p;
	size_t len, cap, limit;
	bool over;
};

static int buf_add(struct buf *b, const char *d, size_t n)
{
	if (b->len + n > b->limit) {
		b->over = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 16384;
		while (c < b->len + n + 1)
			c *= 2;
		char *q = realloc(b->p, c);
		if (!q)
			return -1;
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* The caps count wire bytes: there is no decoding (no Accept-Encoding), and
 * returning short ends the transfer at once (CURLE_WRITE_ERROR). */
static size_t on_body(char *d, size_t size, size_t n, void *u)
{
	return buf_add(u, d, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *d, size_t size, size_t n, void *u)
{
	struct buf *h = u;
	/* A new response (a 1xx, or a proxy's) starts over; only the last counts. */
	if (size * n > 5 && memcmp(d, "HTTP/", 5) == 0)
		h->len = 0;
	return buf_add(h, d, size * n) == 0 ? size * n : 0;
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
static json_t *selected_headers(const struct buf *h)
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
	struct buf b = {.limit = limit};
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(&b, chunk, n) < 0) {
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

int main(void)
{
	/* libcurl reads proxies, SSLKEYLOGFILE, netrc and CURL_HOME from the
	 * environment; the scope's is empty, and so is ours from here on. */
	clearenv();
	out = json_object();
	CURL *c = NULL;
	CURLU *u = NULL;
	struct curl_slist *hdrs = NULL;
	struct buf resp = {0}, head = {.limit = HEADER_MAX}, ca = {.limit = CA_MAX};
	char *auth = NULL;
	bool curl_up = false;
	size_t inlen;
	char *in = read_all(stdin, INPUT_MAX, &inlen);
	json_error_t je;
	json_t *req = in ? json_loadb(in, inlen, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (in)
		explicit_bzero(in, inlen); /* it held the bearer */
	free(in);
	json_t *g = json_object_get(req, "grant");
	const char *gmethod = json_string_value(json_object_get(g, "method"));
	const char *gurl = json_string_value(json_object_get(g, "url"));
	const char *method = json_string_value(json_object_get(req, "method"));
	const char *url = json_string_value(json_object_get(req, "url"));
	json_t *jbody = json_object_get(req, "body"), *jbearer = json_object_get(req, "bearer");
	json_int_t max_req = json_integer_value(json_object_get(g, "max_request_bytes"));
	json_int_t max_resp = json_integer_value(json_object_get(g, "max_response_bytes"));
	json_int_t timeout = json_integer_value(json_object_get(g, "timeout_ms"));
	json_int_t ctimeout = json_integer_value(json_object_get(g, "connect_timeout_ms"));
	const char *format = json_string_value(json_object_get(req, "format"));
	if (!json_is_object(req) || !format || strcmp(format, JIG_HTTP_REQUEST_FORMAT) != 0 || !gmethod || !gurl || !method ||
	    !url || max_req <= 0 || max_resp <= 0 ||
	    timeout <= 0 || ctimeout <= 0 || (jbody && !json_is_string(jbody)) || (jbearer && !json_is_string(jbearer))) {
		finish("refused", "malformed worker input");
		goto done;
	}

	/* The request must be the grant: the same method, the same URL byte for
	 * byte, and that URL a valid grant URL in libcurl's normal form (so an
	 * alias like 127.1 or 2130706433 can never match 127.0.0.1). */
	char why[256];
	if (!known_method(gmethod) || strcmp(method, gmethod) != 0) {
		finish("refused", "method %s is not the granted %s", method, gmethod);
		goto done;
	}
	if (jig_http_url_check(url, why, sizeof(why)) < 0) {
		finish("refused", "URL %s %s", url, why);
		goto done;
	}
	if (jig_http_url_same(gurl, url) < 0) { /* so the grant's URL is valid too */
		finish("refused", "URL %s is not the granted %s", url, gurl);
		goto done;
	}
	const char *body = json_string_value(jbody);
	size_t body_len = jbody ? json_string_length(jbody) : 0;
	if (body_len > (size_t)max_req) {
		finish("refused", "request body of %zu bytes is over the grant's %lld", body_len, (long long)max_req);
		goto done;
	}
	const char *bearer = json_string_value(jbearer);
	if (bearer && (!bearer[0] || strpbrk(bearer, "\r\n") || strlen(bearer) > 4096)) {
		finish("refused", "the bound bearer is empty, too long or has a line break");
		goto done;
	}

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		finish("failed", "libcurl cannot initialise");
		goto done;
	}
	curl_up = true;
	c = curl_easy_init();
	u = curl_url();
	resp.limit = (size_t)max_resp;
	if (!c || !u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		finish("failed", "libcurl cannot take the URL");
		goto done;
	}
	bool loopback_http = strncmp(url, "http://", 7) == 0;
	/* Everything libcurl would otherwise decide for itself, decided here;
	 * an option this libcurl refuses fails the request (never a weaker one). */
	CURLcode opt_rc = CURLE_OK;
	const char *opt_name = "";
#define SET(opt, val)                                                  \
	do {                                                           \
		CURLcode c_ = curl_easy_setopt(c, opt, val);           \
		if (c_ != CURLE_OK && opt_rc == CURLE_OK)              \
			opt_rc = c_, opt_name = #opt;                  \
	} while (0)
	SET(CURLOPT_CURLU, u);
	SET(CURLOPT_PROTOCOLS_STR, loopback_http ? "http" : "https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "https");
	SET(CURLOPT_DEFAULT_PROTOCOL, "https");
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_MAXREDIRS, 0L);
	SET(CURLOPT_PROXY, "");
	SET(CURLOPT_NOPROXY, "*");
	SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	/* alt-svc: off unless CURLOPT_ALTSVC or _CTRL is set (this libcurl
	 * refuses _CTRL 0); neither is. HSTS: off, explicitly. */
	SET(CURLOPT_HSTS_CTRL, 0L);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)ctimeout);
	SET(CURLOPT_TIMEOUT_MS, (long)timeout);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_resp);
	SET(CURLOPT_USERAGENT, "jig-http/1");
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, &resp);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, &head);
	/* The trust store: the files named (the system bundle and the operator's
	 * extra CA), concatenated; otherwise libcurl's default bundle. */
	size_t k;
	json_t *cf;
	json_array_foreach(json_object_get(req, "ca_files"), k, cf) {
		FILE *f = json_is_string(cf) ? fopen(json_string_value(cf), "re") : NULL;
		size_t n = 0;
		char *d = f ? read_all(f, CA_MAX, &n) : NULL;
		if (f)
			fclose(f);
		if (!d || buf_add(&ca, d, n) < 0 || buf_add(&ca, "\n", 1) < 0) {
			free(d);
			finish("failed", "CA file %s: cannot be read (or over 4 MiB)", json_string_value(cf));
			goto done;
		}
		free(d);
	}
	const char *pem = json_string_value(json_object_get(req, "ca_pem"));
	if (pem && (buf_add(&ca, pem, strlen(pem)) < 0 || buf_add(&ca, "\n", 1) < 0)) {
		finish("failed", "the operator's CA is over 4 MiB");
		goto done;
	}
	if (ca.len) {
		struct curl_blob blob = {.data = ca.p, .len = ca.len, .flags = CURL_BLOB_COPY};
		SET(CURLOPT_CAINFO_BLOB, &blob);
	}
	/* Headers: only these. No Expect: 100-continue, no user headers. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (body)
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	if (bearer) {
		size_t al = strlen(bearer) + 32;
		auth = malloc(al);
		snprintf(auth, al, "Authorization: Bearer %s", bearer);
		hdrs = curl_slist_append(hdrs, auth);
	}
	SET(CURLOPT_HTTPHEADER, hdrs);
	if (strcmp(method, "HEAD") == 0)
		SET(CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET") != 0)
		SET(CURLOPT_CUSTOMREQUEST, method);
	if (body || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0) {
		/* No body still sends Content-Length: 0, never a chunked upload. */
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		SET(CURLOPT_POSTFIELDS, body ? body : "");
	}
#undef SET
	if (opt_rc != CURLE_OK) {
		finish("failed", "this libcurl refuses %s (%s); not sent", opt_name, curl_easy_strerror(opt_rc));
		goto done;
	}

	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_off_t connect_us = 0, total_us = 0, upload = 0;
	long reqsize = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us);
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &total_us);
	curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &upload);
	curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &reqsize);
	json_object_set_new(out, "request_bytes", json_integer((json_int_t)reqsize + (json_int_t)upload));
	json_object_set_new(out, "response_bytes", json_integer((json_int_t)resp.len));
	json_object_set_new(out, "header_bytes", json_integer((json_int_t)head.len));
	json_object_set_new(out, "connect_ms", json_integer((json_int_t)(connect_us / 1000)));
	json_object_set_new(out, "total_ms", json_integer((json_int_t)(total_us / 1000)));
	if (status)
		json_object_set_new(out, "status", json_integer(status));
	if (resp.over)
		finish("refused", "the response body is over the grant's %lld bytes; cut and withheld", (long long)max_resp);
	else if (head.over)
		finish("refused", "the response headers are over %u bytes; cut and withheld", HEADER_MAX);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		finish("failed", "the deadline of %lld ms passed (connect deadline %lld ms); the exchange was cut",
		       (long long)timeout, (long long)ctimeout);
	else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CONNECT_ERROR)
		finish("failed", "TLS: %s (the server's certificate is not trusted, or the handshake failed)", curl_easy_strerror(rc));
	else if (rc != CURLE_OK)
		finish("failed", "%s", curl_easy_strerror(rc));
	else if (bearer && (memmem(resp.p ? resp.p : "", resp.len, bearer, strlen(bearer)) ||
			    memmem(head.p ? head.p : "", head.len, bearer, strlen(bearer))))
		finish("refused", "the response contains the bound bearer credential; withheld");
	else {
		char *b64 = malloc(4 * ((resp.len + 2) / 3) + 1);
		if (!b64) {
			finish("failed", "out of memory");
			goto done;
		}
		EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)(resp.p ? resp.p : ""), (int)resp.len);
		if (!resp.len)
			b64[0] = '\0';
		json_object_set_new(out, "outcome", json_string("response"));
		json_object_set_new(out, "headers", selected_headers(&head));
		json_object_set_new(out, "body_base64", json_string(b64));
		if (status >= 300 && status < 400)
			json_object_set_new(out, "redirect_not_followed", json_true());
		free(b64);
		emit();
	}
done:
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	curl_url_cleanup(u);
	free(resp.p);
	free(head.p);
	free(ca.p);
	json_decref(req);
	json_decref(out);
	if (curl_up)
		curl_global_cleanup();
	return 0;
}
