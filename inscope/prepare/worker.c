/* jig-prepare-worker: one dependency preparation (issue 16;
 * docs/dependencies.md), the first process of the installer scope, run
 * during jig review only.
 *
 * stdin: {"format": "jig-prepare-request/1", "registry": URL,
 *         "packages": [{"name", "version", "integrity"}]}
 *        or, to resolve a package without a lock (jig review
 *        --allow-resolution-network), {..., "mode": "resolve"}: Bun writes
 *        /work/bun.lock from the registry's metadata, installing nothing
 * stdout: {"format": "jig-prepare-result/1", "outcome": "ok" | "refused" |
 *          "failed" | "unreachable" (the registry could not be reached or
 *          used: a fetch's transport error or non-200 answer, a failed
 *          resolution), "error"?, "fetched", "bytes"}
 *
 * It fetches every tarball the lock names, itself (libcurl: the one
 * registry, no redirects, no proxy, no netrc, 16 MiB each), and inspects
 * each with jig's own bounded reader (integrity, entry types, paths and
 * sizes against the preparation's budget) before anything unpacks it.
 * Only then does the pinned Bun install, from those inspected bytes
 * alone: runtime/install.js serves them on loopback as the registry and
 * runs `bun install --frozen-lockfile --ignore-scripts`. A request Bun
 * makes for anything else fails the preparation. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jig/buf.h>
#include <jig/curl_harden.h>

#include "prepare/protocol.h"
#include "prepare/tarball.h"

#define REQUEST_MAX (2u << 20)
#define INSTALL_RESULT_MAX (64u << 10)

static json_t *out;

static int finish(const char *outcome, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int finish(const char *outcome, const char *fmt, ...)
{
	json_object_set_new(out, "format", json_string(JIG_PREPARE_RESULT_FORMAT));
	json_object_set_new(out, "outcome", json_string(outcome));
	if (fmt) {
		char msg[768];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		json_object_set_new(out, "error", json_string(msg));
	}
	char *s = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
	if (s)
		printf("%s\n", s);
	free(s);
	fflush(stdout);
	return 0;
}

/* libcurl's write callback: returning short ends the transfer. */
static size_t on_body(char *d, size_t size, size_t n, void *u)
{
	return jig_buf_add(u, d, size * n) == 0 ? size * n : 0;
}

static char *read_fd(int fd, size_t max, size_t *len)
{
	struct jig_buf b = {.limit = max};
	char chunk[8192];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || jig_buf_add(&b, chunk, (size_t)n) < 0) {
			free(b.p);
			return NULL;
		}
	}
	*len = b.len;
	return b.p ? b.p : calloc(1, 1);
}

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 1;
}

/* The registry's tarball path of name@version: "NAME/-/BASE-VERSION.tgz",
 * BASE the name without its scope (npm's layout, and what Bun asks for). */
static void tarball_path(char *out, size_t cap, const char *name, const char *version)
{
	const char *slash = strchr(name, '/');
	snprintf(out, cap, "%s/-/%s-%s.tgz", name, slash ? slash + 1 : name, version);
}

/* One tarball: fetched whole into b (at most JIG_TARBALL_MAX), 200 only. */
static int fetch(CURL *c, const char *url, struct jig_buf *b, long timeout_ms, char *why, size_t cap)
{
	b->len = 0;
	b->limit = JIG_TARBALL_MAX;
	bool http = strncmp(url, "http://", 7) == 0;
	CURLcode rc = CURLE_OK;
#define SET(opt, val)                                           \
	do {                                                    \
		if (rc == CURLE_OK)                             \
			rc = curl_easy_setopt(c, opt, val);     \
	} while (0)
	SET(CURLOPT_URL, url);
	const char *name = ""; /* the SDK's one set: no redirect is followed */
	if (rc == CURLE_OK && (rc = jig_curl_harden(c, http, &name)) != CURLE_OK) {
		snprintf(why, cap, "this libcurl refuses %s (%s)", name, curl_easy_strerror(rc));
		return -1;
	}
	SET(CURLOPT_TIMEOUT_MS, timeout_ms);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)JIG_TARBALL_MAX);
	SET(CURLOPT_USERAGENT, JIG_PREPARE_USER_AGENT);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, b);
#undef SET
	if (rc == CURLE_OK)
		rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_WRITE_ERROR || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(why, cap, "larger than %u MiB as fetched", JIG_TARBALL_MAX >> 20);
		return -1;
	}
	if (rc != CURLE_OK)
		snprintf(why, cap, "%s", curl_easy_strerror(rc));
	else if (status != 200)
		snprintf(why, cap, "the registry answered HTTP %ld", status);
	else
		return 0;
	return -2; /* the registry could not be reached or used: "unreachable" */
}

static int write_all(const char *path, const void *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	const char *p = d;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return close(fd);
}

/* Runs install.js under the pinned Bun: the index of inspected tarballs
 * on its stdin, its one-line result on a pipe. */
static json_t *install(const char *bun, const char *script, const char *request, char *why, size_t cap)
{
	int in[2], res[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0) {
		snprintf(why, cap, "pipe: %s", strerror(errno));
		return NULL;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(res[1], 1);
		/* Bun gets this scope's environment, the catalog's installer-work
		 * fragment as the Plan shows it (issue 32), nothing added here. */
		char *const argv[] = {(char *)bun, (char *)script, NULL};
		execv(bun, argv);
		_exit(127);
	}
	close(in[0]);
	close(res[1]);
	if (pid < 0) {
		close(in[1]);
		close(res[0]);
		snprintf(why, cap, "fork: %s", strerror(errno));
		return NULL;
	}
	size_t n = strlen(request);
	bool wrote = write(in[1], request, n) == (ssize_t)n;
	close(in[1]);
	size_t len = 0;
	char *text = read_fd(res[0], INSTALL_RESULT_MAX, &len);
	close(res[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	json_t *r = text && wrote ? json_loadb(text, len, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	free(text);
	if (!json_is_object(r)) {
		json_decref(r);
		r = NULL;
		snprintf(why, cap, "the installer gave no result (%s %d)", WIFSIGNALED(st) ? "signal" : "exit status",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
	return r;
}

/* Resolution: Bun writes /work/bun.lock from the registry's metadata. */
static int resolve(const char *bun, const char *script, const char *registry)
{
	json_t *rreq = json_pack("{s:s,s:s,s:s}", "format", JIG_INSTALL_REQUEST_FORMAT, "mode", "resolve", "registry", registry);
	char *rtext = rreq ? json_dumps(rreq, JSON_COMPACT) : NULL;
	json_decref(rreq);
	char why[512] = "";
	json_t *r = rtext ? install(bun, script, rtext, why, sizeof(why)) : NULL;
	free(rtext);
	if (!r)
		return finish("failed", "%s", why[0] ? why : "out of memory");
	json_int_t code = json_integer_value(json_object_get(r, "exit"));
	const char *err = json_string_value(json_object_get(r, "stderr"));
	if (!json_is_integer(json_object_get(r, "exit")) || code != 0)
		finish("unreachable", "bun install --lockfile-only exited %d: %.500s", (int)code, err ? err : "");
	else
		finish("ok", NULL);
	json_decref(r);
	return 0;
}

/* Fetches and inspects every package's tarball into dir: the index of
 * registry paths Bun may ask for, or NULL once finish() has reported. */
static json_t *fetch_all(json_t *pkgs, const char *registry, const char *dir, const struct timespec *deadline)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		finish("failed", "libcurl cannot initialise");
		return NULL;
	}
	CURL *c = curl_easy_init();
	struct jig_tarball_budget budget = {.files = JIG_PREPARED_FILES_MAX, .bytes = JIG_PREPARED_BYTES_MAX};
	struct jig_buf b = {0};
	json_t *index = json_object();
	size_t i;
	json_t *p;
	uint64_t fetched_bytes = 0;
	int failed = 0;
	size_t rlen = strlen(registry);
	const char *sep = rlen && registry[rlen - 1] == '/' ? "" : "/";
	json_array_foreach(pkgs, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *version = json_string_value(json_object_get(p, "version"));
		const char *integrity = json_string_value(json_object_get(p, "integrity"));
		char what[300], rel[600], url[2048], why[512], file[640];
		struct jig_error e = {0};
		failed = 1;
		if (!c || !name || !version || !integrity || strlen(name) > 214 || strlen(version) > 64) {
			finish("failed", "malformed request (package %zu)", i);
			break;
		}
		snprintf(what, sizeof(what), "%s@%s", name, version);
		tarball_path(rel, sizeof(rel), name, version);
		snprintf(url, sizeof(url), "%s%s%s", registry, sep, rel);
		snprintf(file, sizeof(file), "%s/%zu.tgz", dir, i);
		int got = fetch(c, url, &b, ms_left(deadline), why, sizeof(why));
		if (got < 0)
			finish(got == -2 ? "unreachable" : "failed", "%s: fetching %s: %s", what, url, why);
		else if (jig_tarball_inspect(b.p, b.len, integrity, what, &budget, &e) < 0)
			finish("refused", "%s", e.msg);
		else if (write_all(file, b.p, b.len) < 0)
			finish("failed", "%s: %s", file, strerror(errno));
		else
			failed = 0;
		if (failed)
			break;
		fetched_bytes += b.len;
		/* Bun asks for a scoped package's tarball with its "/" as is or
		 * escaped; both lead to these bytes, nothing else does. */
		char key[640];
		snprintf(key, sizeof(key), "/%s", rel);
		json_object_set_new(index, key, json_string(file));
		char *slash = name[0] == '@' ? strchr(key + 1, '/') : NULL;
		if (slash) {
			char esc[700];
			snprintf(esc, sizeof(esc), "%.*s%%2f%s", (int)(slash - key), key, slash + 1);
			json_object_set_new(index, esc, json_string(file));
		}
	}
	free(b.p);
	if (c)
		curl_easy_cleanup(c);
	curl_global_cleanup();
	json_object_set_new(out, "fetched", json_integer((json_int_t)json_array_size(pkgs)));
	json_object_set_new(out, "bytes", json_integer((json_int_t)fetched_bytes));
	if (failed) {
		json_decref(index);
		return NULL;
	}
	return index;
}

int main(int argc, char **argv)
{
	const char *bun = "/.jig/bun", *script = "/.jig/runtime/install.js", *scratch = "/scratch";
	for (int i = 1; i + 1 < argc; i += 2) { /* the catalog's argv; the tests' own paths */
		if (strcmp(argv[i], "--bun") == 0)
			bun = argv[i + 1];
		else if (strcmp(argv[i], "--install-js") == 0)
			script = argv[i + 1];
		else if (strcmp(argv[i], "--scratch") == 0)
			scratch = argv[i + 1];
	}
	out = json_object();
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	/* The scope's own deadline (at most 60 s from before this started) is
	 * the hard one, and fires first: jig's message then names it. */
	deadline.tv_sec += 70;
	size_t len = 0;
	char *text = read_fd(0, REQUEST_MAX, &len);
	json_t *req = text ? json_loadb(text, len, 0, NULL) : NULL;
	free(text);
	const char *format = json_string_value(json_object_get(req, "format"));
	const char *registry = json_string_value(json_object_get(req, "registry"));
	const char *mode = json_string_value(json_object_get(req, "mode"));
	json_t *pkgs = json_object_get(req, "packages");
	if (!format || strcmp(format, JIG_PREPARE_REQUEST_FORMAT) != 0 || !registry || !json_is_array(pkgs) ||
	    (strncmp(registry, "https://", 8) != 0 && strncmp(registry, "http://", 7) != 0))
		return finish("failed", "malformed request");
	if (mode && strcmp(mode, "resolve") == 0)
		return resolve(bun, script, registry);
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/tarballs", scratch);
	if (mkdir(dir, 0700) < 0)
		return finish("failed", "%s: %s", dir, strerror(errno));
	json_t *index = fetch_all(pkgs, registry, dir, &deadline);
	if (!index)
		return 0;
	json_t *ireq = json_pack("{s:s,s:o}", "format", JIG_INSTALL_REQUEST_FORMAT, "tarballs", index);
	char *itext = ireq ? json_dumps(ireq, JSON_COMPACT) : NULL;
	json_decref(ireq);
	char why[512] = "";
	json_t *r = itext ? install(bun, script, itext, why, sizeof(why)) : NULL;
	free(itext);
	json_decref(req);
	if (!r)
		return finish("failed", "%s", why[0] ? why : "out of memory");
	json_int_t code = json_integer_value(json_object_get(r, "exit"));
	json_t *unexpected = json_object_get(r, "unexpected");
	const char *err = json_string_value(json_object_get(r, "stderr"));
	if (json_array_size(unexpected))
		finish("refused", "the installer asked the registry for something jig did not fetch (not in the lock, or skipped for this platform): %.200s",
		       json_string_value(json_array_get(unexpected, 0)));
	else if (!json_is_integer(json_object_get(r, "exit")) || code != 0)
		finish("failed", "bun install exited %d: %.500s", (int)code, err ? err : "");
	else
		finish("ok", NULL);
	json_decref(r);
	return 0;
}
