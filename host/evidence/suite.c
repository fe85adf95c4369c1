/* The negative suite: derived from the session's plan and the map, run by
 * jig-session-probe, its answers parsed here (pure; tests/unit/session). */
#include "evidence/evidence.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/scope_policy.h"
#include "util/crypto.h"
#include "util/limits.h"

static const char *const raw_names[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
					"SSH_AUTH_SOCK", "MORPH_API_KEY", NULL};
static const char *const cred_words[] = {"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					 "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY", "AUTH_SOCK", NULL};

static bool contains_ci(const char *s, size_t len, const char *w)
{
	size_t wl = strlen(w);
	for (size_t i = 0; i + wl <= len; i++)
		if (strncasecmp(s + i, w, wl) == 0)
			return true;
	return false;
}

bool jig_evidence_credential_name(const char *name, size_t len)
{
	for (const char *const *r = raw_names; *r; r++)
		if (strlen(*r) == len && strncasecmp(name, *r, len) == 0)
			return true;
	for (const char *const *w = cred_words; *w; w++)
		if (contains_ci(name, len, *w))
			return true;
	char n[256];
	if (len < sizeof(n)) { /* and everything the scope policy refuses as one */
		memcpy(n, name, len);
		n[len] = '\0';
		if (jig_env_name_is_credential(n))
			return true;
	}
	return len > 4 && strncasecmp(name + len - 4, "_KEY", 4) == 0;
}

void jig_evidence_suite_free(struct jig_evidence_suite *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->c[i].arg);
	free(s->c);
	memset(s, 0, sizeof(*s));
}

static int add(struct jig_evidence_suite *s, const char *id, const char *kind, bool expect_allow, const char *arg,
	       bool vacuous, struct jig_error *e)
{
	if (s->n == JIG_EVIDENCE_MAX_CHECKS)
		return jig_err(e, JIG_E_USAGE, "evidence: more than %d checks for this session", JIG_EVIDENCE_MAX_CHECKS);
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].id, id))
			return 0; /* the same target named twice is checked once */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct jig_evidence_check *c = realloc(s->c, cap * sizeof(*c));
		if (!c)
			return jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
		s->c = c;
		s->cap = cap;
	}
	struct jig_evidence_check *c = &s->c[s->n];
	memset(c, 0, sizeof(*c));
	if (strlen(id) >= sizeof(c->id) || strlen(kind) >= sizeof(c->kind) || !(c->arg = strdup(arg)))
		return jig_err(e, JIG_E_INTERNAL, "evidence: check %s cannot be recorded", id);
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->kind, sizeof(c->kind), "%s", kind);
	c->expect_allow = expect_allow;
	c->vacuous = vacuous;
	c->actual = JIG_EV_MISSING;
	s->n++;
	return 0;
}

static bool absent_on_host(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0;
}

/* A variable's check id: its name's digest, so the summary never names a
 * credential variable (the raw suite.json maps it back). */
static void env_id(const char *name, size_t len, char out[32])
{
	char hex[2 * JIG_SHA256_LEN + 1];
	jig_sha256_hex(name, len, hex);
	snprintf(out, 32, "env.%.12s", hex);
}

static int add_env(struct jig_evidence_suite *s, const char *name, size_t len, bool present, struct jig_error *e)
{
	char id[32], arg[256];
	if (len == 0 || len >= sizeof(arg))
		return 0;
	env_id(name, len, id);
	memcpy(arg, name, len);
	arg[len] = '\0';
	return add(s, id, "env", false, arg, !present, e);
}

static int env_checks(struct jig_evidence_suite *s, char *const *env, struct jig_error *e)
{
	int r = 0;
	for (size_t i = 0; env && env[i] && !r; i++) {
		const char *eq = strchr(env[i], '=');
		size_t len = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
		if (jig_evidence_credential_name(env[i], len) ||
		    (len == strlen(JIG_EVIDENCE_CANARY_VAR) && !strncmp(env[i], JIG_EVIDENCE_CANARY_VAR, len)))
			r = add_env(s, env[i], len, true, e);
	}
	for (const char *const *n = raw_names; *n && !r; n++)
		r = add_env(s, *n, strlen(*n), false, e); /* already there when the caller has it */
	return r;
}

static int path_checks(struct jig_evidence_suite *s, const struct jig_evidence_inputs *in, struct jig_error *e)
{
	char id[65];
	int r = add(s, "worktree.read", "read", true, in->worktree, false, e);
	if (!r)
		r = add(s, "worktree.write", "write", in->worktree_rw, in->worktree, false, e);
	for (size_t i = 0; i < in->n_siblings && !r; i++) {
		snprintf(id, sizeof(id), "sibling.%zu.read", i + 1);
		r = add(s, id, "read", false, in->siblings[i], absent_on_host(in->siblings[i]), e);
	}
	if (!r && in->tmpdir)
		r = add(s, "tmpdir.exact", "tmpdir", true, in->tmpdir, false, e);
	if (!r && in->decoy_tmpdir)
		r = add(s, "tmpdir.other.read", "read", false, in->decoy_tmpdir, absent_on_host(in->decoy_tmpdir), e);
	if (!r && in->decoy_tmpdir)
		r = add(s, "tmpdir.other.write", "write", false, in->decoy_tmpdir, absent_on_host(in->decoy_tmpdir), e);
	for (size_t i = 0; i < in->n_markers && !r; i++) {
		snprintf(id, sizeof(id), "marker.%zu.read", i + 1);
		r = add(s, id, "read", false, in->markers[i], absent_on_host(in->markers[i]), e);
	}
	for (size_t i = 0; i < in->n_private_dirs && !r; i++) {
		snprintf(id, sizeof(id), "private.%zu.read", i + 1);
		r = add(s, id, "read", false, in->private_dirs[i], absent_on_host(in->private_dirs[i]), e);
	}
	return r;
}

/* The Git directory's class (decision 213): every write Git would later
 * read as configuration or run is refused inside the scope, and a nested
 * repository the probe plants (an rw worktree cannot refuse it) is gone as
 * a repository once the session ends. */
static int git_checks(struct jig_evidence_suite *s, const struct jig_evidence_inputs *in, struct jig_error *e)
{
	char id[65], arg[4200];
	const char *c = in->git_common;
	snprintf(arg, sizeof(arg), "%s/config", c);
	int r = add(s, "git.config.write", "write", false, arg, absent_on_host(arg), e);
	snprintf(arg, sizeof(arg), "%s/hooks/jig-evidence-hook", c);
	if (!r)
		r = add(s, "git.hooks.create", "create", false, arg, false, e);
	snprintf(arg, sizeof(arg), "%s/commondir", c);
	if (!r)
		r = add(s, "git.commondir.create", "create", false, arg, false, e);
	snprintf(arg, sizeof(arg), "%s/info/attributes.jig-evidence", c);
	if (!r)
		r = add(s, "git.info.create", "create", false, arg, false, e);
	for (size_t i = 0; i < in->n_git_modules && !r; i++) {
		snprintf(id, sizeof(id), "git.module.%zu.config.write", i + 1);
		snprintf(arg, sizeof(arg), "%s/config", in->git_modules[i]);
		if (!(r = add(s, id, "write", false, arg, absent_on_host(arg), e))) {
			snprintf(id, sizeof(id), "git.module.%zu.hooks.create", i + 1);
			snprintf(arg, sizeof(arg), "%s/hooks/jig-evidence-hook", in->git_modules[i]);
			r = add(s, id, "create", false, arg, false, e);
		}
	}
	for (size_t i = 0; i < in->n_git_worktrees && !r; i++) {
		snprintf(id, sizeof(id), "git.worktree.%zu.write", i + 1);
		r = add(s, id, "write", false, in->git_worktrees[i], false, e);
	}
	if (!r && in->git_dotgit)
		r = add(s, "git.dotgit.rename", "rename", false, in->git_dotgit, false, e);
	if (!r && in->git_dotgit)
		r = add(s, "git.dotgit.write", "write", false, in->git_dotgit, false, e);
	if (!r && in->git_nest && in->worktree_rw)
		r = add(s, "git.nested.create", "nest", true, in->git_nest, false, e);
	if (!r && in->git_nest && in->worktree_rw)
		r = add(s, JIG_EVIDENCE_NESTED_KEPT, "host", false, in->git_nest, false, e);
	return r;
}

static bool granted(const unsigned *ports, size_t n, unsigned p)
{
	for (size_t i = 0; i < n; i++)
		if (ports[i] == p)
			return true;
	return false;
}

static int net_checks(struct jig_evidence_suite *s, const struct jig_evidence_inputs *in, struct jig_error *e)
{
	char id[65], arg[320];
	int r = 0;
	for (size_t i = 0; i < in->n_loopback && !r; i++) {
		snprintf(id, sizeof(id), "loopback.%u.tcp", in->loopback[i]);
		snprintf(arg, sizeof(arg), "127.0.0.1:%u", in->loopback[i]);
		r = add(s, id, "tcp", true, arg, false, e);
	}
	for (size_t i = 0; i < in->n_decoy_ports && !r; i++) {
		if (granted(in->loopback, in->n_loopback, in->decoy_ports[i]))
			continue;
		snprintf(id, sizeof(id), "loopback.%u.tcp", in->decoy_ports[i]);
		snprintf(arg, sizeof(arg), "127.0.0.1:%u", in->decoy_ports[i]);
		r = add(s, id, "tcp", false, arg, false, e);
	}
	for (size_t i = 0; in->proxy && i < in->n_connect && !r; i++) {
		snprintf(id, sizeof(id), "connect.%zu", i + 1);
		snprintf(arg, sizeof(arg), "%s>%s", in->proxy, in->connect[i]);
		if (!(r = add(s, id, "connect", true, arg, false, e))) {
			/* the granted host on another port: a name-and-port rule refuses it */
			const char *colon = strrchr(in->connect[i], ':');
			unsigned port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
			snprintf(id, sizeof(id), "connect.%zu.other-port", i + 1);
			snprintf(arg, sizeof(arg), "%s>%.*s:%u", in->proxy, colon ? (int)(colon - in->connect[i]) : 0,
				 in->connect[i], port == 65535 ? 1 : port + 1);
			r = add(s, id, "connect", false, arg, false, e);
		}
	}
	if (!r && in->proxy) {
		snprintf(arg, sizeof(arg), "%s>jig-evidence.invalid:443", in->proxy);
		r = add(s, "connect.other-host", "connect", false, arg, false, e);
	}
	return r;
}

int jig_evidence_suite_build(struct jig_evidence_suite *s, const struct jig_evidence_inputs *in, struct jig_error *e)
{
	memset(s, 0, sizeof(*s));
	if (!in->worktree || !in->worktree[0])
		return jig_err(e, JIG_E_INTERNAL, "evidence: the session's plan names no worktree");
	int r = path_checks(s, in, e);
	if (!r)
		r = env_checks(s, in->caller_env, e);
	if (!r)
		r = net_checks(s, in, e);
	if (!r && in->git_common)
		r = git_checks(s, in, e);
	if (r)
		jig_evidence_suite_free(s);
	return r;
}

char **jig_evidence_argv(const struct jig_evidence_suite *s, const char *prog)
{
	char **v = calloc(s->n + 2, sizeof(*v));
	if (!v || !(v[0] = strdup(prog))) {
		free(v);
		return NULL;
	}
	for (size_t i = 0, k = 1; i < s->n; i++) {
		const struct jig_evidence_check *c = &s->c[i];
		if (!strcmp(c->kind, "host"))
			continue; /* jig answers it, after the probe */
		size_t len = strlen(c->kind) + strlen(c->id) + strlen(c->arg) + 16;
		if (!(v[k] = malloc(len))) {
			jig_evidence_argv_free(v);
			return NULL;
		}
		snprintf(v[k++], len, "%s:%s:%s:%s", c->kind, c->expect_allow ? "allow" : "deny", c->id, c->arg);
	}
	return v;
}

void jig_evidence_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static const char *outcome_name(int a)
{
	static const char *const names[] = {"allow", "deny", "error", "missing"};
	return a >= 0 && a <= JIG_EV_MISSING ? names[a] : "error";
}

json_t *jig_evidence_suite_json(const struct jig_evidence_suite *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->n; i++) {
		const struct jig_evidence_check *c = &s->c[i];
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s}", "id", c->id, "kind", c->kind,
						       "expected", c->expect_allow ? "allow" : "deny", "target", c->arg,
						       "vacuous", c->vacuous, "actual", outcome_name(c->actual), "why",
						       c->why)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

bool jig_evidence_check_passed(const struct jig_evidence_check *c)
{
	return c->actual == (c->expect_allow ? JIG_EV_ALLOW : JIG_EV_DENY);
}

size_t jig_evidence_failed(const struct jig_evidence_suite *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += !jig_evidence_check_passed(&s->c[i]);
	return n;
}

static int parse_line(struct jig_evidence_suite *s, const char *line, size_t len, size_t lineno, struct jig_error *e)
{
	json_error_t je;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return 0; /* not the probe's (kept in the raw evidence, never counted) */
	const char *id = NULL, *expected = NULL, *actual = NULL, *why = "";
	int r = 0;
	if (json_object_get(o, "done")) {
		json_decref(o);
		return 0;
	}
	if (json_unpack(o, "{s:s, s:s, s:s, s?s}", "id", &id, "expected", &expected, "actual", &actual, "why", &why))
		r = jig_err(e, JIG_E_INTEGRITY, "evidence: the probe's line %zu is not a check result", lineno);
	struct jig_evidence_check *c = NULL;
	for (size_t i = 0; !r && i < s->n && !c; i++)
		if (!strcmp(s->c[i].id, id))
			c = &s->c[i];
	if (!r && (!c || c->actual != JIG_EV_MISSING))
		r = jig_err(e, JIG_E_INTEGRITY, "evidence: the probe's line %zu answers a check %s", lineno,
			    c ? "already answered" : "the suite did not ask");
	if (!r && strcmp(expected, c->expect_allow ? "allow" : "deny"))
		r = jig_err(e, JIG_E_INTEGRITY, "evidence: the probe's line %zu changed check %s's expectation", lineno, c->id);
	if (!r) {
		c->actual = !strcmp(actual, "allow") ? JIG_EV_ALLOW : !strcmp(actual, "deny") ? JIG_EV_DENY : JIG_EV_ERROR;
		snprintf(c->why, sizeof(c->why), "%s", why);
		for (char *p = c->why; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				*p = '_';
	}
	json_decref(o);
	return r;
}

int jig_evidence_parse(struct jig_evidence_suite *s, const char *out, size_t len, struct jig_error *e)
{
	size_t lineno = 0;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(out + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (out + off)) : len - off;
		int r = parse_line(s, out + off, l, ++lineno, e);
		if (r)
			return r;
		off += l + 1;
	}
	return 0;
}
