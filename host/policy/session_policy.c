/* The `session` kind's composition: see session_policy.h. */
#include "policy/session_policy.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"

#define UID_SLOT "/run/user/@uid/"

/* A catalog path "/run/user/@uid/REST" becomes "RUNTIME/REST", where
 * RUNTIME is the checked $XDG_RUNTIME_DIR, /run/user/<uid> (what the
 * tmpdir fact starts with). Other strings are kept. */
static json_t *fill_uid(const char *s, const char *tmpdir)
{
	const char *at = strstr(tmpdir, "/jig/sessions/");
	if (strncmp(s, UID_SLOT, strlen(UID_SLOT)) != 0 || !at)
		return json_string(s);
	char out[PATH_MAX];
	snprintf(out, sizeof(out), "%.*s/%s", (int)(at - tmpdir), tmpdir, s + strlen(UID_SLOT));
	return json_string(out);
}

static int add_bind(json_t *doc, const char *src, const char *target, bool write)
{
	json_t *b = json_pack("{s:s,s:s}", "source", src, "target", target);
	if (write)
		json_object_set_new(b, "write", json_true());
	return json_array_append_new(json_object_get(doc, "binds"), b);
}

/* The map's facts on the composed kind. A fragment that fixed the network
 * or the cwd would be widened by them: refused. */
static int add_facts(json_t *doc, const struct jig_session_facts *f, struct jig_error *e)
{
	if (strcmp(json_string_value(json_object_get(doc, "network")), "none") != 0 ||
	    strcmp(json_string_value(json_object_get(doc, "cwd")), "/") != 0)
		return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": the network and the working directory are the session's; no fragment may set them", JIG_SESSION_KIND);
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(doc, "tmpfs"), i, v)
		json_object_set_new(v, "target", fill_uid(json_string_value(json_object_get(v, "target")), f->tmpdir));
	const char *k;
	json_t *env = json_object_get(doc, "env");
	json_object_foreach(env, k, v)
		json_object_set_new(env, k, fill_uid(json_string_value(v), f->tmpdir));
	add_bind(doc, f->worktree, f->worktree, f->rw);
	/* The Git directory read-only in every mode, each path bound onto
	 * itself (a mount point: never renamed, replaced or written), over
	 * the worktree's bind (decision 210). The fault drops it: the
	 * evidence's self-test (docs/session-evidence.md). */
	for (i = 0; i < f->n_git_ro && !JIG_FAULT_FAILS("session git guard"); i++)
		add_bind(doc, f->git_ro[i], f->git_ro[i], false);
	add_bind(doc, f->state_root, f->state_root, true);
	if (f->broker_dir)
		add_bind(doc, f->broker_dir, JIG_SESSION_BROKER_TARGET, false);
	for (i = 0; i < f->n_extra; i++)
		add_bind(doc, f->extra[i].source, f->extra[i].target, false);
	json_object_set_new(doc, "cwd", json_string(f->cwd));
	json_object_set(doc, "network", f->network);
	static const char *const own[] = {"HOME", "TERM", NULL};
	for (const char *const *o = own; *o; o++)
		if (json_object_get(env, *o))
			return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": %s is the session's; no fragment may set it", JIG_SESSION_KIND, *o);
	json_object_set_new(env, "HOME", json_string(f->state_root));
	json_object_set_new(env, "TERM", json_string(f->term));
	json_object_foreach(f->map_env, k, v) {
		if (json_object_get(env, k))
			return jig_err(e, JIG_E_USAGE, "session: environment variable %s is set twice (the catalog or the map's client and provider)", k);
		json_object_set(env, k, v);
	}
	return 0;
}

/* The composed policy text (with the facts added) parsed into t, base's
 * argv moved into it; base and txt freed. r: an earlier failure. */
static int adopt(struct jig_scope_template *base, char *txt, const char *home, const char *what, int r,
		 struct jig_scope_template *t, struct jig_error *e)
{
	struct jig_error inner = {0};
	if (!r && (!txt || jig_scope_policy_parse(txt, strlen(txt), home, JIG_POLICY_SLOTS, &t->policy, &inner) < 0))
		r = jig_err(e, inner.code ? inner.code : JIG_E_INTERNAL, "%s: %s", what, txt ? inner.msg : "out of memory");
	free(txt);
	if (!r) {
		t->argv = base->argv;
		base->argv = NULL;
	}
	jig_scope_template_free(base);
	return r;
}

int jig_session_compose(const struct jig_catalog *c, const struct jig_session_facts *f, struct jig_scope_template *t,
			struct jig_error *e)
{
	struct jig_scope_facts sf = {.kind = JIG_SESSION_KIND, .name = f->name, .snapshot_dir = f->snapshot_dir,
				     .entry = f->program, .home = f->home, .client_trees = f->trees, .n_client_trees = f->n_trees};
	struct jig_scope_template base;
	int r = jig_catalog_compose(c, &sf, &base, e);
	if (r)
		return r;
	json_t *doc = json_deep_copy(base.policy.doc);
	r = doc ? add_facts(doc, f, e) : jig_err(e, JIG_E_INTERNAL, "out of memory");
	char *txt = r ? NULL : json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	memset(t, 0, sizeof(*t));
	char what[256];
	snprintf(what, sizeof(what), "session %s", f->name);
	return adopt(&base, txt, f->home, what, r, t, e);
}

static int instance_policy(const struct jig_scope_policy *tmpl, const char *id, const char *home,
			   struct jig_scope_policy *out, struct jig_error *e)
{
	static const char pat[] = "/jig/sessions/" JIG_SESSION_ID_SLOT "/";
	size_t n = strlen(tmpl->canonical), cap = n + 64 * 8 + 1, o = 0;
	char *buf = malloc(cap);
	if (!buf)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (const char *s = tmpl->canonical; *s;) {
		if (strncmp(s, pat, sizeof(pat) - 1) == 0 && o + strlen(id) + 32 < cap) {
			o += (size_t)snprintf(buf + o, cap - o, "/jig/sessions/%s/", id);
			s += sizeof(pat) - 1;
		} else if (o + 1 < cap)
			buf[o++] = *s++;
		else {
			free(buf);
			return jig_err(e, JIG_E_INTERNAL, "session %s: the instance does not fit", tmpl->name);
		}
	}
	buf[o] = '\0';
	int r = jig_scope_policy_parse(buf, o, home, JIG_POLICY_SLOTS, out, e);
	free(buf);
	return r;
}

int jig_session_instance(const struct jig_scope_template *tmpl, const char *id, const char *home,
			 struct jig_scope_template *out, struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	int r = instance_policy(&tmpl->policy, id, home, &out->policy, e);
	if (!r) {
		out->argv = tmpl->argv;
		out->hold = tmpl->hold;
	}
	return r;
}

/* One GIT_CONFIG_KEY_<k>/VALUE_<k> pair. */
static int put(json_t *env, size_t *k, const char *key, const char *value)
{
	char kn[32], vn[32];
	snprintf(kn, sizeof(kn), "GIT_CONFIG_KEY_%zu", *k);
	snprintf(vn, sizeof(vn), "GIT_CONFIG_VALUE_%zu", *k);
	(*k)++;
	return json_object_set_new(env, kn, json_string(key)) | json_object_set_new(env, vn, json_string(value));
}

int jig_session_https_git_env(json_t *hosts, const char *const *aliases, size_t n, json_t *env)
{
	size_t k = 0;
	int r = 0;
	/* For every URL: verification on, jig's CONNECT relay as the proxy
	 * (the scope's only route, decision 310), no cookies, no helper but
	 * jig's (an empty helper resets the list). No CA path: each host's
	 * own CA file by its URL alone (decision 311; a CA path would make
	 * every bound CA trusted for every host of the command). */
	r |= put(env, &k, "protocol.https.allow", "always");
	r |= put(env, &k, "http.sslVerify", "true");
	r |= put(env, &k, "http.proxy", "http://" JIG_GIT_PROXY);
	r |= put(env, &k, "http.cookieFile", "");
	r |= put(env, &k, "http.emptyAuth", "false");
	r |= put(env, &k, "credential.helper", "");
	r |= put(env, &k, "credential.interactive", "never");
	for (size_t i = 0; i < n; i++) {
		json_t *h = json_object_get(hosts, aliases[i]);
		const char *host = json_string_value(json_object_get(h, "host"));
		char url[400], key[480], val[480];
		snprintf(url, sizeof(url), "https://%s:%lld/", host, (long long)json_integer_value(json_object_get(h, "port")));
		snprintf(key, sizeof(key), "http.%s.sslCAInfo", url);
		snprintf(val, sizeof(val), JIG_HTTPS_CA_TARGET "/%s", aliases[i]);
		r |= put(env, &k, key, val);
		if (!json_object_get(h, "credential"))
			continue;
		snprintf(key, sizeof(key), "credential.%s.helper", url);
		snprintf(val, sizeof(val), "!f() { test \"$1\" = get && cat " JIG_HTTPS_CRED_TARGET "/%s; }; f", aliases[i]);
		r |= put(env, &k, key, val);
	}
	char count[16];
	snprintf(count, sizeof(count), "%zu", k);
	r |= json_object_set_new(env, "GIT_CONFIG_COUNT", json_string(count));
	return r ? -1 : 0;
}

int jig_session_git_compose(const struct jig_catalog *c, const struct jig_session_git_facts *f, struct jig_scope_template *t,
			    struct jig_error *e)
{
	struct jig_scope_facts sf = {.kind = JIG_SESSION_GIT_KIND, .name = f->name, .snapshot_dir = f->snapshot_dir, .home = f->home};
	struct jig_scope_template base;
	memset(t, 0, sizeof(*t));
	int r = jig_catalog_compose(c, &sf, &base, e);
	if (r)
		return r;
	json_t *doc = json_deep_copy(base.policy.doc);
	r = doc ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (doc) {
		add_bind(doc, f->worktree, f->worktree, f->rw);
		add_bind(doc, f->git_dir, f->git_dir, f->rw);
		for (size_t i = 0; f->remotes && f->remotes[i]; i++)
			add_bind(doc, f->remotes[i], f->remotes[i], true);
		for (size_t i = 0; i < f->n_ro; i++)
			add_bind(doc, f->ro[i].source, f->ro[i].target, false);
		if (f->git_copy) {
			add_bind(doc, f->git_copy, "/usr/bin/git", false);
			if (access("/usr/lib/git-core/git", F_OK) == 0) /* what git runs for its own subcommands */
				add_bind(doc, f->git_copy, "/usr/lib/git-core/git", false);
		}
		if (f->network)
			json_object_set(doc, "network", f->network);
		json_t *env = json_object_get(doc, "env");
		if (f->ssh || f->https)
			json_object_set_new(env, "GIT_ALLOW_PROTOCOL",
					    json_string(f->ssh && f->https ? "file:ssh:https" : f->ssh ? "file:ssh" : "file:https"));
		if (f->https && jig_session_https_git_env(f->https_hosts, f->https_aliases, f->n_https, env) < 0)
			r = jig_err(e, JIG_E_USAGE, "the session's git scope: jig's HTTPS configuration for git does not fit");
		json_object_set_new(doc, "cwd", json_string(f->cwd));
	}
	char *txt = doc && !r ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return adopt(&base, txt, f->home, "the session's git scope", r, t, e);
}
