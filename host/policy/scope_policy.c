/* Scope policy, the language: strict parse, canonical form, identity, and
 * the host checks of a policy's sources (presentation: policy/scope_plan.c;
 * slots, resolve and describe: policy/scope_runtime.c). */
#include "policy/scope_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/snapshot.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

#define KIB UINT64_C(1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

/* Limit envelope bounds: below these nothing useful runs, above them a
 * typo (an extra 0) would grant the host. */
#define MEM_MIN (16 * MIB)
#define MEM_MAX (64 * GIB)
#define TASKS_MIN 4 /* bwrap, the launcher, the payload and one more */
#define TASKS_MAX 65536
#define CPU_MIN 1000	 /* 1% of one CPU */
#define CPU_MAX 6400000	 /* 64 CPUs */
#define WALL_MAX 86400000 /* one day */
#define TMPFS_MIN (4 * KIB)
#define TMPFS_MAX (16 * GIB)

/* Host paths no scope may be given, nor anything below them: the kernel's
 * and the session's live interfaces (the scope gets its own /proc and a
 * minimal /dev; /run holds the user's sockets). */
static const char *const forbidden_trees[] = {"/proc", "/sys", "/dev", "/run/user", "/var/run/user", NULL};
/* The rest of /run (and /var/run) is live session state too; an exact
 * regular file below it (a resolver's resolv.conf) may be granted: the live
 * check refuses anything else there (sockets, directories). */
static const char *const file_only_trees[] = {"/run", "/var/run", NULL};
/* Broad shared directories: refused themselves (a file or directory below
 * them may be granted exactly). */
static const char *const broad_dirs[] = {"/tmp", "/var/tmp", "/dev/shm", "/home", "/root",
					 "/var", "/etc", "/usr/local", NULL};
/* Credential variables never enter a scope's environment (seed 000:
 * raw credentials never enter a Flow, launch arguments or Plans). */
static const char *const credential_names[] = {
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "GOOGLE_API_KEY",
	"GEMINI_API_KEY", "NPM_TOKEN", "HF_TOKEN", "SSH_AUTH_SOCK", NULL};
static const char *const credential_suffixes[] = {"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD",
						  "_SECRET_KEY", NULL};

static bool is_abs_normal(const char *p)
{
	return p[0] == '/' && p[1] != '\0' && jig_path_is_normal_relative(p + 1);
}

/* a is b or an ancestor of b. */
static bool is_within(const char *b, const char *a)
{
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static int check_target(const char *what, const char *t, struct jig_error *e)
{
	if (!is_abs_normal(t))
		return jig_err(e, JIG_E_USAGE,
			       "%s \"%s\": not an absolute, normalised path of [A-Za-z0-9._+@-] components (no \"/\", \".\", \"..\", \"//\" or trailing \"/\")",
			       what, t);
	/* /.jig holds jig's own files (the launcher at /.jig/init, the runtime
	 * a catalog fragment binds below it); /.jig itself and the launcher's
	 * place are never anyone else's. */
	if (is_within(t, "/proc") || is_within(t, "/dev") || strcmp(t, "/.jig") == 0 || is_within(t, JIG_SCOPE_INIT_TARGET))
		return jig_err(e, JIG_E_USAGE,
			       "%s \"%s\": /proc, /dev and the launcher at %s are provided by jig inside every scope; choose another target",
			       what, t, JIG_SCOPE_INIT_TARGET);
	return 0;
}

/* A bind source: exact, normalised, not "/", not a live kernel/session
 * tree, not a broad shared directory, not the home directory or above. */
static int check_source(const char *what, const char *s, const char *home, struct jig_error *e)
{
	if (strcmp(s, "/") == 0)
		return jig_err(e, JIG_E_USAGE, "%s \"/\": the whole host file system is never granted; bind the exact paths the scope needs", what);
	if (!is_abs_normal(s))
		return jig_err(e, JIG_E_USAGE,
			       "%s \"%s\": not an absolute, normalised path of [A-Za-z0-9._+@-] components (no \".\", \"..\", \"//\" or trailing \"/\")",
			       what, s);
	for (const char *const *f = forbidden_trees; *f; f++)
		if (is_within(s, *f))
			return jig_err(e, JIG_E_USAGE, "%s \"%s\": %s is never granted (the scope gets its own /proc and a minimal /dev; /run and /sys are the host's live interfaces)", what, s,
				       strstr(*f, "/run") ? "/run" : *f);
	for (const char *const *f = file_only_trees; *f; f++)
		if (strcmp(s, *f) == 0)
			return jig_err(e, JIG_E_USAGE, "%s \"%s\": /run is never granted (the host's live session state); only an exact regular file below it may be", what, s);
	for (const char *const *b = broad_dirs; *b; b++)
		if (strcmp(s, *b) == 0)
			return jig_err(e, JIG_E_USAGE, "%s \"%s\": too broad; grant the exact file or directory below it", what, s);
	if (home && home[0] == '/' && strcmp(home, "/") != 0 && is_within(home, s))
		return jig_err(e, JIG_E_USAGE, "%s \"%s\": is the home directory %s or contains it; grant the exact path below it", what, s, home);
	return 0;
}

static bool valid_scope_name(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len > 32 || n[0] < 'a' || n[0] > 'z')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-'))
			return false;
	return true;
}

static bool valid_env_name(const char *n)
{
	size_t len = strlen(n);
	if (len == 0 || len > 128 || (n[0] >= '0' && n[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') ||
		      (n[i] >= '0' && n[i] <= '9') || n[i] == '_'))
			return false;
	return true;
}

bool jig_env_name_is_credential(const char *n)
{
	for (const char *const *c = credential_names; *c; c++)
		if (strcmp(n, *c) == 0)
			return true;
	size_t len = strlen(n);
	for (const char *const *s = credential_suffixes; *s; s++) {
		size_t sl = strlen(*s);
		if (len >= sl && strcmp(n + len - sl, *s) == 0)
			return true;
	}
	return false;
}

static int cmp_target(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	return strcmp(json_string_value(json_object_get(*x, "target")),
		      json_string_value(json_object_get(*y, "target")));
}

static int cmp_fd_target(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	json_int_t p = json_integer_value(json_object_get(*x, "target"));
	json_int_t q = json_integer_value(json_object_get(*y, "target"));
	return (p > q) - (p < q);
}

/* Returns a new array with arr's elements sorted by cmp. */
static json_t *sorted(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr);
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	json_t *out = json_array();
	if (!v || !out) {
		free(v);
		json_decref(out);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(arr, i);
	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	return out;
}

/* Every target (binds, tmpfs, symlinks) appears once. targets is sorted. */
static int check_unique_targets(json_t *lists[3], struct jig_error *e)
{
	size_t total = 0;
	for (int l = 0; l < 3; l++)
		total += json_array_size(lists[l]);
	const char **all = calloc(total ? total : 1, sizeof(*all));
	if (!all)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t k = 0;
	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < json_array_size(lists[l]); i++)
			all[k++] = json_string_value(json_object_get(json_array_get(lists[l], i), "target"));
	int r = 0;
	for (size_t i = 0; i < k && !r; i++)
		for (size_t j = i + 1; j < k && !r; j++)
			if (strcmp(all[i], all[j]) == 0)
				r = jig_err(e, JIG_E_USAGE, "scope policy: target \"%s\" is granted twice; each target appears once", all[i]);
	free(all);
	return r;
}

/* The three mount lists share one shape: an array of objects with a
 * "target" and one more field, checked per kind, sorted by target. */
enum mount_list { LIST_BINDS, LIST_TMPFS, LIST_SYMLINKS };

/* A runtime slot: "@NAME" (a descriptor, NAME of [a-z0-9-], at most 32)
 * or "@run/NAME" (a bind source below the per-run directory: one or two
 * components of [a-z0-9_-], at most 100 characters; no ".", so never
 * outside it). "@run/input/NAME" is one attachment of the Run. */
static bool is_slot(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	bool run = strcmp(prefix, "@run/") == 0;
	if (strncmp(s, prefix, n) != 0 || !s[n] || strlen(s + n) > (run ? 100 : 32))
		return false;
	char prev = '/';
	int slashes = 0;
	for (const char *c = s + n; *c; prev = *c++) {
		if (run && *c == '/') {
			if (prev == '/' || ++slashes > 1)
				return false;
		} else if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || (run && *c == '_')))
			return false;
	}
	return prev != '/';
}

/* A session's private TMPDIR (issue 34, decision 145): exactly
 * /run/user/<caller's uid>/jig/sessions/<32 hex>/tmp, the one directory
 * below /run a writable bind may have (its own checks still apply live:
 * a directory, canonical, the caller's). */
static bool is_session_tmp(const char *s)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "/run/user/%u/jig/sessions/", (unsigned)geteuid());
	if (n < 0 || strncmp(s, head, (size_t)n) != 0)
		return false;
	s += n;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return strcmp(s + 32, "/tmp") == 0;
}

/* A bind's "write": absent or a boolean; true is a writable bind (its
 * target never below /.jig, jig's own), false is dropped so that the
 * canonical form (and the digest) of a read-only bind has one spelling. */
static int check_write(json_t *m, const char *what, const char *target, struct jig_error *e)
{
	json_t *w = json_object_get(m, "write");
	if (!w)
		return 0;
	if (!json_is_boolean(w))
		return jig_err(e, JIG_E_USAGE, "scope policy: %s.write: must be true or false", what);
	if (json_is_false(w)) {
		json_object_del(m, "write");
		return 0;
	}
	if (is_within(target, "/.jig"))
		return jig_err(e, JIG_E_USAGE, "scope policy: %s.target \"%s\": a writable bind is never below /.jig (jig's own files and the launcher)", what, target);
	const char *src = json_string_value(json_object_get(m, "source"));
	for (const char *const *f = file_only_trees; src && src[0] == '/' && !is_session_tmp(src) && *f; f++)
		if (is_within(src, *f))
			return jig_err(e, JIG_E_USAGE, "scope policy: %s.source \"%s\": /run is never granted for writing", what, src);
	return 0;
}

static int parse_mounts(json_t *root, enum mount_list kind, const char *home, unsigned flags, json_t **out,
			struct jig_error *e)
{
	static const struct {
		const char *name, *field;
		size_t max;
	} lists[] = {
		[LIST_BINDS] = {"binds", "source", JIG_POLICY_MAX_BINDS},
		[LIST_TMPFS] = {"tmpfs", "size_bytes", JIG_POLICY_MAX_TMPFS},
		[LIST_SYMLINKS] = {"symlinks", "link", JIG_POLICY_MAX_SYMLINKS},
	};
	const char *name = lists[kind].name, *field = lists[kind].field;
	json_t *arr;
	int r = jig_json_get_array(root, name, "scope policy", lists[kind].max, &arr, e);
	if (r)
		return r;
	const char *const keys[] = {"target", field, kind == LIST_BINDS ? "write" : NULL, NULL};
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *m = json_array_get(arr, i);
		char what[64], w2[80];
		snprintf(what, sizeof(what), "%s[%zu]", name, i);
		const char *target, *str = NULL;
		uint64_t size;
		if (!json_is_object(m))
			return jig_err(e, JIG_E_USAGE, "scope policy: %s: must be an object {\"target\", \"%s\"}", what, field);
		if ((r = jig_json_only_keys(m, keys, what, e)) ||
		    (r = jig_json_get_string(m, "target", what, &target, e)))
			return r;
		snprintf(w2, sizeof(w2), "%s.target", what);
		if ((r = check_target(w2, target, e)) || (kind == LIST_BINDS && (r = check_write(m, what, target, e))))
			return r;
		if (kind == LIST_TMPFS) {
			r = jig_json_get_uint(m, field, what, TMPFS_MIN, TMPFS_MAX, &size, e);
		} else if ((r = jig_json_get_string(m, field, what, &str, e)) == 0) {
			snprintf(w2, sizeof(w2), "%s.%s", what, field);
			if (kind == LIST_BINDS && str[0] == '@')
				r = (flags & JIG_POLICY_SLOTS) && is_slot(str, "@run/")
					    ? 0
					    : jig_err(e, JIG_E_USAGE, "scope policy: %s \"%s\": a runtime slot (\"@run/NAME\") only jig fills, and only in a scope it composes", w2, str);
			else if (kind == LIST_BINDS && !(json_is_true(json_object_get(m, "write")) && is_session_tmp(str)))
				r = check_source(w2, str, home, e);
			/* A link is resolved inside the scope, so it can only name
			 * what the scope already has; it still must be clean. */
			else if (!(str[0] == '/' ? is_abs_normal(str) : jig_path_is_normal_relative(str)))
				r = jig_err(e, JIG_E_USAGE, "scope policy: %s \"%s\": not a normalised path", w2, str);
		}
		if (r)
			return r;
	}
	*out = sorted(arr, cmp_target);
	return *out ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

static int parse_env(json_t *root, json_t **out, struct jig_error *e)
{
	json_t *env = json_object_get(root, "env");
	if (!json_is_object(env))
		return jig_err(e, JIG_E_USAGE, "scope policy: \"env\" must be an object of NAME: \"value\" (the scope's whole environment)");
	if (json_object_size(env) > JIG_POLICY_MAX_ENV)
		return jig_err(e, JIG_E_USAGE, "scope policy: \"env\" has %zu variables; at most %d", json_object_size(env), JIG_POLICY_MAX_ENV);
	const char *k;
	json_t *v;
	json_object_foreach(env, k, v) {
		if (!valid_env_name(k))
			return jig_err(e, JIG_E_USAGE, "scope policy: env name \"%s\": must match [A-Za-z_][A-Za-z0-9_]*", k);
		if (jig_env_name_is_credential(k))
			return jig_err(e, JIG_E_USAGE, "scope policy: env \"%s\": credentials never enter a scope's environment; jig brokers them outside the scope", k);
		if (!json_is_string(v))
			return jig_err(e, JIG_E_USAGE, "scope policy: env \"%s\": value must be a string", k);
		size_t len = json_string_length(v);
		if (len > JIG_POLICY_MAX_ENV_VALUE || strlen(json_string_value(v)) != len)
			return jig_err(e, JIG_E_USAGE, "scope policy: env \"%s\": value longer than %d bytes or contains NUL", k, JIG_POLICY_MAX_ENV_VALUE);
	}
	*out = json_incref(env);
	return 0;
}

static int parse_fds(json_t *root, unsigned flags, json_t **out, struct jig_error *e)
{
	json_t *arr;
	int r = jig_json_get_array(root, "descriptors", "scope policy", JIG_POLICY_MAX_FDS, &arr, e);
	if (r)
		return r;
	static const char *const keys[] = {"source", "target", NULL};
	bool seen_t[JIG_POLICY_MAX_TARGET_FD + 1] = {0};
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *d = json_array_get(arr, i);
		char what[64];
		snprintf(what, sizeof(what), "descriptors[%zu]", i);
		uint64_t s, t;
		if (!json_is_object(d))
			return jig_err(e, JIG_E_USAGE, "scope policy: %s: must be an object {\"source\", \"target\"}", what);
		const char *slot = json_string_value(json_object_get(d, "source"));
		if (slot && !((flags & JIG_POLICY_SLOTS) && is_slot(slot, "@")))
			return jig_err(e, JIG_E_USAGE, "scope policy: %s.source \"%s\": a runtime slot (\"@NAME\") only jig fills, and only in a scope it composes", what, slot);
		if ((r = jig_json_only_keys(d, keys, what, e)) ||
		    (!slot && (r = jig_json_get_uint(d, "source", what, 0, 1023, &s, e))) ||
		    (r = jig_json_get_uint(d, "target", what, 0, JIG_POLICY_MAX_TARGET_FD, &t, e)))
			return r;
		if (seen_t[t])
			return jig_err(e, JIG_E_USAGE, "scope policy: %s: target descriptor %u is given twice", what, (unsigned)t);
		seen_t[t] = true;
	}
	*out = sorted(arr, cmp_fd_target);
	return *out ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

static int parse_limits(json_t *root, struct jig_scope_limits *l, struct jig_error *e)
{
	json_t *lim = json_object_get(root, "limits");
	if (!json_is_object(lim))
		return jig_err(e, JIG_E_USAGE, "scope policy: \"limits\" must be an object {memory_bytes, tasks, cpu_quota_us, wall_ms}");
	static const char *const keys[] = {"memory_bytes", "tasks", "cpu_quota_us", "wall_ms", NULL};
	uint64_t m, t, c, w;
	int r;
	if ((r = jig_json_only_keys(lim, keys, "limits", e)) ||
	    (r = jig_json_get_uint(lim, "memory_bytes", "limits", MEM_MIN, MEM_MAX, &m, e)) ||
	    (r = jig_json_get_uint(lim, "tasks", "limits", TASKS_MIN, TASKS_MAX, &t, e)) ||
	    (r = jig_json_get_uint(lim, "cpu_quota_us", "limits", CPU_MIN, CPU_MAX, &c, e)) ||
	    (r = jig_json_get_uint(lim, "wall_ms", "limits", JIG_SCOPE_WALL_MIN_MS, WALL_MAX, &w, e)))
		return r;
	*l = (struct jig_scope_limits){.memory_bytes = m, .tasks = (uint32_t)t, .cpu_quota_us = (uint32_t)c, .wall_ms = w};
	return 0;
}

static int lower(struct jig_scope_policy *p, struct jig_error *e)
{
	json_t *d = p->doc;
	json_t *binds = json_object_get(d, "binds"), *tmpfs = json_object_get(d, "tmpfs");
	json_t *links = json_object_get(d, "symlinks"), *env = json_object_get(d, "env");
	json_t *fds = json_object_get(d, "descriptors");
	size_t nb = json_array_size(binds);
	for (size_t i = 0; i < nb; i++)
		p->n_rw_binds += json_is_true(json_object_get(json_array_get(binds, i), "write"));
	p->n_binds = nb - p->n_rw_binds;
	p->n_tmpfs = json_array_size(tmpfs);
	p->n_symlinks = json_array_size(links);
	p->n_env = json_object_size(env);
	p->n_fds = json_array_size(fds);
	p->binds = calloc(p->n_binds + 1, sizeof(*p->binds));
	p->rw_binds = calloc(p->n_rw_binds + 1, sizeof(*p->rw_binds));
	p->tmpfs = calloc(p->n_tmpfs + 1, sizeof(*p->tmpfs));
	p->symlinks = calloc(p->n_symlinks + 1, sizeof(*p->symlinks));
	p->env = calloc(p->n_env + 1, sizeof(*p->env));
	p->fds = calloc(p->n_fds + 1, sizeof(*p->fds));
	if (!p->binds || !p->rw_binds || !p->tmpfs || !p->symlinks || !p->env || !p->fds)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0, ro = 0, rw = 0; i < nb; i++) {
		json_t *b = json_array_get(binds, i);
		struct jig_scope_bind *to = json_is_true(json_object_get(b, "write")) ? &p->rw_binds[rw++] : &p->binds[ro++];
		to->source = json_string_value(json_object_get(b, "source"));
		p->has_slots |= to->source[0] == '@';
		to->target = json_string_value(json_object_get(b, "target"));
	}
	for (size_t i = 0; i < p->n_tmpfs; i++) {
		json_t *t = json_array_get(tmpfs, i);
		p->tmpfs[i].target = json_string_value(json_object_get(t, "target"));
		p->tmpfs[i].size_bytes = (uint64_t)json_integer_value(json_object_get(t, "size_bytes"));
	}
	for (size_t i = 0; i < p->n_symlinks; i++) {
		json_t *s = json_array_get(links, i);
		p->symlinks[i].target = json_string_value(json_object_get(s, "target"));
		p->symlinks[i].link = json_string_value(json_object_get(s, "link"));
	}
	/* Environment in sorted name order, as in the canonical form. */
	void *it = json_object_iter(env);
	const char **names = calloc(p->n_env + 1, sizeof(*names));
	if (!names)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; it; it = json_object_iter_next(env, it))
		names[i++] = json_object_iter_key(it);
	for (size_t i = 0; i < p->n_env; i++)
		for (size_t j = i + 1; j < p->n_env; j++)
			if (strcmp(names[j], names[i]) < 0) {
				const char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < p->n_env; i++) {
		const char *v = json_string_value(json_object_get(env, names[i]));
		size_t n = strlen(names[i]) + strlen(v) + 2;
		if (!(p->env[i] = malloc(n))) {
			free(names);
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
		}
		snprintf(p->env[i], n, "%s=%s", names[i], v);
	}
	free(names);
	for (size_t i = 0; i < p->n_fds; i++) {
		json_t *f = json_array_get(fds, i);
		json_t *src = json_object_get(f, "source");
		p->fds[i].source = json_is_integer(src) ? (int)json_integer_value(src) : -1;
		p->has_slots |= json_is_string(src);
		p->fds[i].target = (int)json_integer_value(json_object_get(f, "target"));
	}
	p->name = json_string_value(json_object_get(d, "scope"));
	p->cwd = json_string_value(json_object_get(d, "cwd"));
	return jig_scope_network_lower(p, e);
}

int jig_scope_policy_parse(const char *buf, size_t len, const char *home, unsigned flags,
			   struct jig_scope_policy *p, struct jig_error *e)
{
	memset(p, 0, sizeof(*p));
	json_t *root = NULL;
	int r = jig_json_parse_object(buf, len, "scope policy", &root, e);
	if (r)
		return jig_json_usage(r, e);
	static const char *const keys[] = {"format", "scope", "binds", "tmpfs", "symlinks", "env",
					   "descriptors", "cwd", "network", "limits", NULL};
	const char *format, *scope, *cwd;
	json_t *net = NULL, *binds = NULL, *tmpfs = NULL, *links = NULL, *env = NULL, *fds = NULL;
	struct jig_scope_limits lim;
	if ((r = jig_json_only_keys(root, keys, "scope policy", e)) ||
	    (r = jig_json_get_string(root, "format", "scope policy", &format, e)))
		goto out;
	if (strcmp(format, JIG_SCOPE_POLICY_FORMAT) != 0) {
		r = jig_err(e, JIG_E_USAGE, "scope policy: format \"%s\" is not %s", format, JIG_SCOPE_POLICY_FORMAT);
		goto out;
	}
	if ((r = jig_json_get_string(root, "scope", "scope policy", &scope, e)))
		goto out;
	if (!valid_scope_name(scope)) {
		r = jig_err(e, JIG_E_USAGE, "scope policy: scope \"%s\": 1-32 characters of [a-z0-9-], starting with a letter", scope);
		goto out;
	}
	if ((r = jig_json_get_string(root, "cwd", "scope policy", &cwd, e)))
		goto out;
	if (strcmp(cwd, "/") != 0 && !is_abs_normal(cwd)) {
		r = jig_err(e, JIG_E_USAGE, "scope policy: cwd \"%s\": not an absolute, normalised path", cwd);
		goto out;
	}
	if ((r = jig_scope_network_parse(root, &net, e)))
		goto out;
	if ((r = parse_mounts(root, LIST_BINDS, home, flags, &binds, e)) ||
	    (r = parse_mounts(root, LIST_TMPFS, home, flags, &tmpfs, e)) ||
	    (r = parse_mounts(root, LIST_SYMLINKS, home, flags, &links, e)) || (r = parse_env(root, &env, e)) ||
	    (r = parse_fds(root, flags, &fds, e)) || (r = parse_limits(root, &lim, e)))
		goto out;
	json_t *lists[3] = {binds, tmpfs, links};
	if ((r = check_unique_targets(lists, e)))
		goto out;
	p->doc = json_pack("{s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:s,s:O,s:{s:I,s:I,s:I,s:I}}", "format", format,
			   "scope", scope, "binds", binds, "tmpfs", tmpfs, "symlinks", links, "env", env,
			   "descriptors", fds, "cwd", cwd, "network", net, "limits", "memory_bytes",
			   (json_int_t)lim.memory_bytes, "tasks", (json_int_t)lim.tasks, "cpu_quota_us",
			   (json_int_t)lim.cpu_quota_us, "wall_ms", (json_int_t)lim.wall_ms);
	if (!p->doc || !(p->canonical = jig_json_canonical(p->doc))) {
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		goto out;
	}
	jig_sha256_hex(p->canonical, strlen(p->canonical), p->sha256);
	p->limits = lim;
	r = lower(p, e);
out:
	json_decref(net);
	json_decref(binds);
	json_decref(tmpfs);
	json_decref(links);
	json_decref(env);
	json_decref(fds);
	json_decref(root);
	if (r)
		jig_scope_policy_free(p);
	return jig_json_usage(r, e); /* bad policy input is usage */
}

int jig_scope_policy_load(const char *path, const char *home, unsigned flags, struct jig_scope_policy *p,
			  struct jig_error *e)
{
	jig_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: cannot open the scope policy: %s", path, strerror(errno));
	jig_autofree char *buf = malloc(JIG_SCOPE_POLICY_MAX_BYTES + 1);
	if (!buf)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, JIG_SCOPE_POLICY_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return jig_err(e, JIG_E_USAGE, "%s: cannot read the scope policy: %s", path, strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > JIG_SCOPE_POLICY_MAX_BYTES)
			return jig_err(e, JIG_E_USAGE, "%s: the scope policy is larger than %d bytes", path,
				       JIG_SCOPE_POLICY_MAX_BYTES);
	}
	struct jig_error inner = {0};
	int r = jig_scope_policy_parse(buf, len, home, flags, p, &inner);
	if (r)
		return jig_err(e, inner.code, "%s: %s", path, inner.msg);
	return 0;
}

void jig_scope_policy_free(struct jig_scope_policy *p)
{
	if (p->env)
		for (size_t i = 0; i < p->n_env; i++)
			free(p->env[i]);
	free(p->env);
	free(p->binds);
	free(p->rw_binds);
	free(p->tmpfs);
	free(p->symlinks);
	free(p->fds);
	free(p->listeners);
	free(p->connect);
	free(p->canonical);
	json_decref(p->doc);
	memset(p, 0, sizeof(*p));
}

/* The directories of jig's own trust and state: the operator's
 * configuration, the verification cache, state and data (both where the
 * XDG variables point and their defaults below the caller's home), the
 * runtime directory, and the installation with its snapshot. A writable
 * bind never holds one of them nor lies inside one. */
static int jig_own_dirs(char dirs[][PATH_MAX], size_t cap)
{
	static const char *const xdg[][2] = {{"XDG_CONFIG_HOME", ".config"}, {"XDG_CACHE_HOME", ".cache"},
					     {"XDG_STATE_HOME", ".local/state"}, {"XDG_DATA_HOME", ".local/share"}};
	const char *home = jig_caller_home(), *rt = getenv("XDG_RUNTIME_DIR");
	size_t n = 0;
	for (size_t i = 0; i < sizeof(xdg) / sizeof(xdg[0]) && n + 2 <= cap; i++) {
		if (jig_user_dir(xdg[i][0], xdg[i][1], dirs[n], PATH_MAX) == 0)
			n++;
		if (home && home[0] == '/' && snprintf(dirs[n], PATH_MAX, "%s/%s/jig", home, xdg[i][1]) < PATH_MAX)
			n++;
	}
	if (n < cap && rt && rt[0] == '/' && snprintf(dirs[n], PATH_MAX, "%s/jig", rt) < PATH_MAX)
		n++;
	struct jig_error ignored;
	if (n < cap && jig_snapshot_default_libdir(dirs[n], PATH_MAX, &ignored) == 0)
		n++;
	/* Where they really are, when they exist. */
	for (size_t i = 0, k = n; i < k && n < cap; i++)
		if (realpath(dirs[i], dirs[n]) && strcmp(dirs[n], dirs[i]) != 0)
			n++;
	return (int)n;
}

/* A mount point strictly below dir (bind mounts are recursive: what is
 * mounted there would be reachable too), from /proc/self/mountinfo (its
 * fifth field; "\040"-style escapes never match a normalised prefix but
 * the ones they belong to). 1: one found (in at), 0: none, -1: unreadable. */
static int mount_below(const char *dir, char *at, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char line[8192];
	size_t n = strlen(dir);
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *save = NULL, *fld = strtok_r(line, " ", &save);
		for (int i = 0; fld && i < 4; i++)
			fld = strtok_r(NULL, " ", &save);
		if (fld && strncmp(fld, dir, n) == 0 && fld[n] == '/') {
			snprintf(at, cap, "%s", fld);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* A writable bind's source (already canonical): a directory of the
 * caller's, one file system (no mount below it), apart from jig's own
 * directories. */
static int check_rw_source(const char *s, struct jig_error *e)
{
	struct stat st;
	if (lstat(s, &st) < 0)
		return jig_err(e, JIG_E_USAGE, "writable bind source %s: %s", s, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "writable bind source %s: not a directory; only a directory is bound for writing", s);
	if (st.st_uid != geteuid())
		return jig_err(e, JIG_E_USAGE, "writable bind source %s: owned by uid %u, not the caller (%u)", s,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	char at[PATH_MAX];
	int m = mount_below(s, at, sizeof(at));
	if (m != 0)
		return jig_err(e, JIG_E_USAGE, "writable bind source %s: %s%s; a writable bind is one file system, bind the mount itself if it is meant", s,
			       m < 0 ? "cannot read /proc/self/mountinfo" : "another file system is mounted below it at ", m < 0 ? "" : at);
	char dirs[12][PATH_MAX];
	int n = is_session_tmp(s) ? 0 : jig_own_dirs(dirs, 12);
	for (int i = 0; i < n; i++)
		if (is_within(s, dirs[i]) || is_within(dirs[i], s))
			return jig_err(e, JIG_E_USAGE, "writable bind source %s: %s jig's own directory %s; never granted for writing", s,
				       is_within(s, dirs[i]) ? "is inside" : "holds", dirs[i]);
	return 0;
}

/* A bind source is its own canonical path; below /run only a file. */
static int check_live_source(const char *s, bool write, struct jig_error *e)
{
	char real[PATH_MAX];
	if (!realpath(s, real))
		return jig_err(e, JIG_E_USAGE, "bind source %s: %s", s, strerror(errno));
	if (strcmp(real, s) != 0)
		return jig_err(e, JIG_E_USAGE,
			       "bind source %s: resolves to %s through a symbolic link; grant the real path (and add a symlink entry if the scope needs the name)",
			       s, real);
	struct stat st;
	for (const char *const *f = file_only_trees; *f && !(write && is_session_tmp(s)); f++)
		if (is_within(s, *f) && (stat(s, &st) < 0 || !S_ISREG(st.st_mode)))
			return jig_err(e, JIG_E_USAGE, "bind source %s: below %s only an exact regular file may be granted", s, *f);
	return write ? check_rw_source(s, e) : 0;
}

int jig_scope_policy_check_host(const struct jig_scope_policy *p, struct jig_error *e)
{
	int r;
	for (size_t i = 0; i < p->n_rw_binds; i++)
		if (p->rw_binds[i].source[0] != '@' && (r = check_live_source(p->rw_binds[i].source, true, e)))
			return r;
	for (size_t i = 0; i < p->n_binds; i++) {
		const char *s = p->binds[i].source;
		if (s[0] == '@')
			continue;
		if ((r = check_live_source(s, false, e)))
			return r;
	}
	if (p->has_slots)
		return jig_err(e, JIG_E_USAGE, "scope %s has runtime slots (\"@...\"); only jig fills them, when it runs the scope it composed", p->name);
	for (size_t i = 0; i < p->n_fds; i++)
		if (fcntl(p->fds[i].source, F_GETFD) < 0)
			return jig_err(e, JIG_E_USAGE, "descriptor %d (for target %d) is not open", p->fds[i].source, p->fds[i].target);
	return 0;
}
