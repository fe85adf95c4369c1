/* Reads the worker's request: one JSON object of jig-acp-request/1, every
 * key known, every field of the right type and range. Anything else is a
 * refusal before a client is started. */
#include "request.h"

#include "history.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jig/acp.h>

#define ARGV_MAX 256
#define ENV_MAX 4096

static int bad(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t cap, const char *fmt, ...)
{
	int n = snprintf(why, cap, "malformed request: ");
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < cap)
		vsnprintf(why + n, cap - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* A key is named in an error only when it is short printable ASCII. */
static const char *shown_key(const char *k)
{
	size_t n = strlen(k);
	if (n > 64)
		return "(a long key)";
	for (size_t i = 0; i < n; i++)
		if (k[i] < 0x20 || k[i] > 0x7e || k[i] == '"')
			return "(an unprintable key)";
	return k;
}

/* keys are all required; optional (NULL-terminated, may be NULL) may be there. */
static int only_keys(json_t *o, const char *where, const char *const *keys, const char *const *optional, char *why,
		     size_t cap)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		size_t i = 0, j = 0;
		while (keys[i] && strcmp(keys[i], k) != 0)
			i++;
		while (optional && optional[j] && strcmp(optional[j], k) != 0)
			j++;
		if (!keys[i] && !(optional && optional[j]))
			return bad(why, cap, "unknown key \"%s\"%s%s", shown_key(k), where[0] ? " in " : "", where);
	}
	for (size_t i = 0; keys[i]; i++)
		if (!json_object_get(o, keys[i]))
			return bad(why, cap, "\"%s\"%s%s is missing", keys[i], where[0] ? " in " : "", where);
	return 0;
}

static int read_fd(int fd, char **out, size_t *len, char *why, size_t cap)
{
	size_t n = 0, sz = 65536;
	char *b = malloc(sz);
	for (;;) {
		if (b && n == sz) {
			/* Not realloc: the old block held credential bytes and is
			 * wiped before it is freed. */
			char *q = malloc(sz * 2);
			if (q)
				memcpy(q, b, n);
			explicit_bzero(b, n);
			free(b);
			b = q;
			sz *= 2;
		}
		if (!b)
			return bad(why, cap, "out of memory");
		ssize_t r = read(fd, b + n, sz - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			explicit_bzero(b, n);
			free(b);
			return bad(why, cap, "cannot read the request: %s", strerror(err));
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > JIG_ACP_REQUEST_MAX) {
			explicit_bzero(b, n);
			free(b);
			return bad(why, cap, "the request is over %u bytes", JIG_ACP_REQUEST_MAX);
		}
	}
	*out = b;
	*len = n;
	return 0;
}

static int take_argv(struct jig_acp_request *r, json_t *a, char *why, size_t cap)
{
	size_t n = json_array_size(a);
	if (!json_is_array(a) || n == 0 || n > ARGV_MAX)
		return bad(why, cap, "argv must be an array of 1 to %d strings", ARGV_MAX);
	r->argv = calloc(n + 1, sizeof(char *));
	if (!r->argv)
		return bad(why, cap, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(a, i);
		if (!json_is_string(s))
			return bad(why, cap, "argv[%zu] is not a string", i);
		r->argv[i] = (char *)json_string_value(s);
	}
	if (r->argv[0][0] != '/')
		return bad(why, cap, "argv[0] is not an absolute path");
	return 0;
}

static int take_env(struct jig_acp_request *r, json_t *o, char *why, size_t cap)
{
	size_t n = json_object_size(o), i = 0;
	if (!json_is_object(o) || n > ENV_MAX)
		return bad(why, cap, "env must be an object of at most %d strings", ENV_MAX);
	r->envp = calloc(n + 1, sizeof(char *));
	if (!r->envp)
		return bad(why, cap, "out of memory");
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		if (!k[0] || strchr(k, '=') || !json_is_string(v))
			return bad(why, cap, "env \"%s\" is not NAME (no '=') with a string value", shown_key(k));
		if (asprintf(&r->envp[i], "%s=%s", k, json_string_value(v)) < 0) {
			r->envp[i] = NULL;
			return bad(why, cap, "out of memory");
		}
		i++;
	}
	return 0;
}

static int take_secrets(struct jig_acp_request *r, json_t *a, char *why, size_t cap)
{
	if (!json_is_array(a))
		return bad(why, cap, "secrets must be an array of strings");
	r->secrets = calloc(json_array_size(a) + 1, sizeof(char *));
	if (!r->secrets)
		return bad(why, cap, "out of memory");
	size_t i;
	json_t *s;
	json_array_foreach(a, i, s) {
		if (!json_is_string(s))
			return bad(why, cap, "secrets[%zu] is not a string", i);
		if (json_string_length(s)) /* an empty secret would match everything */
			r->secrets[r->nsecrets++] = json_string_value(s);
	}
	return 0;
}

static int take_expect(struct jig_acp_request *r, json_t *o, char *why, size_t cap)
{
	if (!json_is_object(o))
		return bad(why, cap, "expect must be an object");
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		if (strcmp(k, "name") != 0 && strcmp(k, "version") != 0)
			return bad(why, cap, "unknown key \"%s\" in expect", shown_key(k));
		if (!json_is_string(v))
			return bad(why, cap, "expect.%s is not a string", k);
	}
	r->expect_name = json_string_value(json_object_get(o, "name"));
	r->expect_version = json_string_value(json_object_get(o, "version"));
	return 0;
}

static int take_prompt(struct jig_acp_request *r, json_t *a, char *why, size_t cap)
{
	if (!json_is_array(a) || json_array_size(a) == 0)
		return bad(why, cap, "prompt must be a non-empty array of ACP content blocks");
	size_t i;
	json_t *b;
	json_array_foreach(a, i, b)
		if (!json_is_object(b) || !json_is_string(json_object_get(b, "type")))
			return bad(why, cap, "prompt[%zu] is not an ACP content block", i);
	r->prompt = a;
	return 0;
}

static int take_limits(struct jig_acp_request *r, json_t *o, char *why, size_t cap)
{
	/* The ranges keep every sum of times and every buffer sane. */
	static const struct {
		const char *key;
		int64_t min, max;
		size_t off;
	} lim[] = {
		{"deadline_ms", 1, 86400000, offsetof(struct jig_acp_limits, deadline_ms)},
		{"cancel_grace_ms", 0, 600000, offsetof(struct jig_acp_limits, cancel_grace_ms)},
		{"exit_grace_ms", 0, 600000, offsetof(struct jig_acp_limits, exit_grace_ms)},
		{"max_line_bytes", 256, 64 << 20, offsetof(struct jig_acp_limits, max_line_bytes)},
		{"max_messages", 1, 100000000, offsetof(struct jig_acp_limits, max_messages)},
		{"max_transcript_bytes", 0, 64 << 20, offsetof(struct jig_acp_limits, max_transcript_bytes)},
	};
	static const char *const keys[] = {"deadline_ms", "cancel_grace_ms", "exit_grace_ms", "max_line_bytes",
					   "max_messages", "max_transcript_bytes", NULL};
	if (!json_is_object(o))
		return bad(why, cap, "limits must be an object");
	if (only_keys(o, "limits", keys, NULL, why, cap) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		json_t *v = json_object_get(o, lim[i].key);
		json_int_t x = json_integer_value(v);
		if (!json_is_integer(v) || x < lim[i].min || x > lim[i].max)
			return bad(why, cap, "limits.%s must be an integer from %lld to %lld", lim[i].key,
				   (long long)lim[i].min, (long long)lim[i].max);
		*(int64_t *)((char *)&r->limits + lim[i].off) = (int64_t)x;
	}
	return 0;
}

/* "history": {"dir", "max_bytes"} and "restore": {"session_id", "path",
 * "rollout"} (which needs history). */
static int take_history(struct jig_acp_request *r, json_t *h, json_t *re, char *why, size_t cap)
{
	static const char *const hkeys[] = {"dir", "max_bytes", NULL}, *const rkeys[] = {"session_id", "path", "rollout", NULL};
	if (!h && re)
		return bad(why, cap, "restore needs history");
	if (!h)
		return 0;
	if (!json_is_object(h) || only_keys(h, "history", hkeys, NULL, why, cap) < 0)
		return bad(why, cap, "history must be {\"dir\", \"max_bytes\"}");
	const char *dir = json_string_value(json_object_get(h, "dir"));
	json_t *max = json_object_get(h, "max_bytes");
	if (!dir || !jig_acp_history_path_ok(dir))
		return bad(why, cap, "history.dir must be a relative path of plain names");
	if (!json_is_integer(max) || json_integer_value(max) < 1 || json_integer_value(max) > (16 << 20))
		return bad(why, cap, "history.max_bytes must be an integer from 1 to %d", 16 << 20);
	for (size_t i = 0; r->envp[i]; i++)
		if (strncmp(r->envp[i], "HOME=", 5) == 0)
			r->home = r->envp[i] + 5;
	if (!r->home || r->home[0] != '/')
		return bad(why, cap, "history needs an absolute HOME in env");
	r->history_dir = dir;
	r->history_max = json_integer_value(max);
	if (!re)
		return 0;
	if (!json_is_object(re) || only_keys(re, "restore", rkeys, NULL, why, cap) < 0)
		return bad(why, cap, "restore must be {\"session_id\", \"path\", \"rollout\"}");
	r->restore_id = json_string_value(json_object_get(re, "session_id"));
	r->restore_path = json_string_value(json_object_get(re, "path"));
	r->restore_rollout = json_object_get(re, "rollout");
	if (!r->restore_id || !jig_acp_history_id_ok(r->restore_id))
		return bad(why, cap, "restore.session_id must be 1-128 of [A-Za-z0-9._-]");
	const char *base = r->restore_path ? strrchr(r->restore_path, '/') : NULL;
	base = base ? base + 1 : r->restore_path;
	size_t bl = base ? strlen(base) : 0, il = strlen(r->restore_id);
	if (!r->restore_path || !jig_acp_history_path_ok(r->restore_path) || bl < 8 + il + 7 ||
	    strncmp(base, "rollout-", 8) != 0 || strcmp(base + bl - 6, ".jsonl") != 0 || base[bl - 7 - il] != '-' ||
	    strncmp(base + bl - 6 - il, r->restore_id, il) != 0)
		return bad(why, cap, "restore.path must be a relative path ending in rollout-…-SESSIONID.jsonl");
	if (!json_is_string(r->restore_rollout) || (int64_t)json_string_length(r->restore_rollout) > r->history_max)
		return bad(why, cap, "restore.rollout must be a string of at most history.max_bytes");
	return 0;
}

static int check(struct jig_acp_request *r, char *why, size_t cap)
{
	static const char *const keys[] = {"format", "argv", "env", "secrets", "cwd", "expect", "prompt", "limits", NULL};
	static const char *const optional[] = {"session_meta", "model", "auth_method", "history", "restore", NULL};
	json_t *d = r->doc;
	const char *format = json_string_value(json_object_get(d, "format"));
	if (!format || strcmp(format, JIG_ACP_REQUEST_FORMAT) != 0)
		return bad(why, cap, "format is not \"%s\"", JIG_ACP_REQUEST_FORMAT);
	if (only_keys(d, "", keys, optional, why, cap) < 0)
		return -1;
	r->cwd = json_string_value(json_object_get(d, "cwd"));
	if (!r->cwd || r->cwd[0] != '/')
		return bad(why, cap, "cwd is not an absolute path");
	json_t *model = json_object_get(d, "model");
	if (model && (!json_is_string(model) || !json_string_length(model)))
		return bad(why, cap, "model must be a non-empty string");
	r->model = json_string_value(model);
	json_t *auth = json_object_get(d, "auth_method");
	if (auth && (!json_is_string(auth) || !json_string_length(auth)))
		return bad(why, cap, "auth_method must be a non-empty string");
	r->auth_method = json_string_value(auth);
	r->session_meta = json_object_get(d, "session_meta");
	if (r->session_meta && !json_is_object(r->session_meta))
		return bad(why, cap, "session_meta must be an object");
	if (take_argv(r, json_object_get(d, "argv"), why, cap) < 0 || take_env(r, json_object_get(d, "env"), why, cap) < 0 ||
	    take_secrets(r, json_object_get(d, "secrets"), why, cap) < 0 ||
	    take_expect(r, json_object_get(d, "expect"), why, cap) < 0 ||
	    take_prompt(r, json_object_get(d, "prompt"), why, cap) < 0 ||
	    take_limits(r, json_object_get(d, "limits"), why, cap) < 0 ||
	    take_history(r, json_object_get(d, "history"), json_object_get(d, "restore"), why, cap) < 0)
		return -1;
	return 0;
}

int jig_acp_request_read(struct jig_acp_request *out, int fd, char *why, size_t cap)
{
	*out = (struct jig_acp_request){0};
	char *in = NULL;
	size_t len = 0;
	if (read_fd(fd, &in, &len, why, cap) < 0)
		return -1;
	json_error_t je;
	out->doc = json_loadb(in, len, JSON_REJECT_DUPLICATES, &je);
	explicit_bzero(in, len); /* it held the credential */
	free(in);
	/* jansson's message quotes the input near the error; the position is
	 * enough and never shows a credential. */
	if (!out->doc)
		return bad(why, cap, "not one JSON object (line %d, column %d)", je.line, je.column);
	if (!json_is_object(out->doc))
		return bad(why, cap, "not a JSON object");
	return check(out, why, cap);
}

static void wipe(json_t *s)
{
	if (json_is_string(s))
		explicit_bzero((char *)json_string_value(s), json_string_length(s));
}

void jig_acp_request_free(struct jig_acp_request *r)
{
	for (size_t i = 0; r->envp && r->envp[i]; i++) {
		explicit_bzero(r->envp[i], strlen(r->envp[i]));
		free(r->envp[i]);
	}
	free(r->envp);
	free(r->argv);
	free(r->secrets);
	if (json_is_object(r->doc)) {
		const char *k;
		json_t *v;
		size_t i;
		json_object_foreach(json_object_get(r->doc, "env"), k, v)
			wipe(v);
		json_array_foreach(json_object_get(r->doc, "secrets"), i, v)
			wipe(v);
	}
	json_decref(r->doc);
	*r = (struct jig_acp_request){0};
}
