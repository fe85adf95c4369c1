/* jig session: every check before a launch (session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/internal.h"
#include "session/places.h"
#include "session/httpschain.h"
#include "session/sshchain.h"
#include "snapshot/identity.h"
#include "util/fileio.h"
#include "util/json.h"

extern char **environ;

/* Environment selectors in the caller's environment: a map, catalog,
 * provider or model chosen by a variable is refused, never followed. */
static int check_caller_env(struct jig_error *e)
{
	static const char *const prefixes[] = {"JIG_SESSION", "JIG_CATALOG", "JIG_PROVIDER", "JIG_MODEL", "JIG_MAP", NULL};
	for (char **v = environ; v && *v; v++)
		for (const char *const *p = prefixes; *p; p++)
			if (strncmp(*v, *p, strlen(*p)) == 0)
				return jig_err(e, JIG_E_USAGE, "session: %.*s in the environment is refused; the repository map and the catalog are not chosen by variables",
					       (int)strcspn(*v, "="), *v);
	return 0;
}

static const char *term_of_caller(char *out, size_t cap)
{
	const char *t = getenv("TERM");
	size_t n = t ? strlen(t) : 0;
	if (n == 0 || n >= cap || strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-_") != n)
		t = "dumb";
	snprintf(out, cap, "%s", t);
	return out;
}

/* The client: its program within its trees, each config path present. */
static int client_facts(struct jig_session *s, struct jig_error *e)
{
	json_t *c = s->w.client, *v;
	const char *prog = json_string_value(json_array_get(json_object_get(c, "command"), 0));
	size_t nt = json_array_size(json_object_get(c, "trees")), nc = json_array_size(json_object_get(c, "config")), i;
	bool inside = false;
	if (!(s->trees = calloc(nt + nc + 1, sizeof(*s->trees))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	json_array_foreach(json_object_get(c, "trees"), i, v) {
		const char *t = json_string_value(v);
		size_t n = strlen(t);
		inside |= strncmp(prog, t, n) == 0 && prog[n] == '/';
		s->trees[s->n_trees++] = t;
	}
	if (!inside)
		return jig_err(e, JIG_E_USAGE, "client \"%s\": its command %s is not inside one of its trees; refused", s->w.client_id, prog);
	json_array_foreach(json_object_get(c, "config"), i, v) {
		struct stat st;
		if (lstat(json_string_value(v), &st) < 0 || S_ISLNK(st.st_mode))
			return jig_err(e, JIG_E_USAGE, "client \"%s\": reviewed config %s: %s; refused", s->w.client_id, json_string_value(v),
				       S_ISLNK(st.st_mode) ? "a symbolic link" : strerror(errno));
		s->trees[s->n_trees++] = json_string_value(v);
	}
	return 0;
}

/* The program's argv after its path: the command's, the provider's, the
 * agent's (each agent argument free of the client's own selectors). */
static int argv_facts(struct jig_session *s, char *const *agent, struct jig_error *e)
{
	json_t *sel = json_object_get(s->w.client, "selectors"), *v;
	const char *extra[64];
	size_t n = 0, i;
	json_array_foreach(sel, i, v) extra[n++] = json_string_value(v);
	s->argv = json_array();
	json_array_foreach(json_object_get(s->w.client, "command"), i, v)
		if (i > 0)
			json_array_append(s->argv, v);
	json_t *pargs = json_object_get(s->w.provider, "args");
	if (pargs)
		json_array_extend(s->argv, pargs);
	for (size_t k = 0; agent && agent[k]; k++) {
		const char *hit = jig_session_selector(agent[k], extra, n);
		if (hit)
			return jig_err(e, JIG_E_USAGE, "session: agent argument \"%.64s\" selects a provider, model or configuration (%s); only the repository map selects them", agent[k], hit);
		json_array_append_new(s->argv, json_string(agent[k]));
	}
	return 0;
}

/* The map's environment (client, then provider) and the provider's network. */
static int env_network(struct jig_session *s, struct jig_error *e)
{
	const char *ep = json_string_value(json_object_get(s->w.provider, "endpoint")), *k;
	json_t *v;
	jig_session_endpoint_valid(ep, &s->loopback);
	s->env = json_object();
	json_object_update(s->env, json_object_get(s->w.client, "env") ? json_object_get(s->w.client, "env") : s->env);
	json_object_foreach(json_object_get(s->w.provider, "env"), k, v) {
		if (json_object_get(s->env, k))
			return jig_err(e, JIG_E_USAGE, "%s: providers.%s.env.%s: also set by its client", s->map.what, s->w.provider_id, k);
		json_object_set(s->env, k, v);
	}
	if (s->loopback) {
		s->network = json_pack("{s:[s]}", "loopback", ep);
		return 0;
	}
	s->network = json_pack("{s:[s],s:s}", "connect", ep, "proxy", JIG_SESSION_PROXY);
	static const char *const proxy_vars[] = {"HTTPS_PROXY", "https_proxy", NULL};
	for (const char *const *p = proxy_vars; *p; p++) {
		if (json_object_get(s->env, *p))
			return jig_err(e, JIG_E_USAGE, "%s: %s is jig's (the CONNECT relay of a remote provider)", s->map.what, *p);
		json_object_set_new(s->env, *p, json_string("http://" JIG_SESSION_PROXY));
	}
	return 0;
}

static int open_snapshot(struct jig_session *s, struct jig_error *e)
{
	char libdir[PATH_MAX];
	int r = jig_verifier_init(&s->v, NULL, JIG_VERIFY_CACHED, e);
	if (r)
		return r;
	s->v_open = true;
	struct jig_signature_memo memo = jig_verifier_signature_memo(&s->v);
	if ((r = jig_snapshot_default_libdir(libdir, sizeof(libdir), e)) ||
	    (r = jig_snapshot_open_installed_memo(&s->snap, libdir, &memo, e)))
		return r;
	s->snap_open = true;
	s->snap.verifier = &s->v;
	if ((r = jig_catalog_load(&s->snap, &s->cat, e)))
		return r;
	static const char *const used[] = {JIG_CATALOG_FILE, JIG_SESSION_INIT_FILE};
	if ((r = jig_launch_identity(&s->snap, used, 2, s->identity, e)))
		return r;
	jig_hex(s->snap.manifest_sha256, JIG_SHA256_LEN, s->manifest_sha256);
	const struct jig_manifest_file *cf = jig_manifest_find_file(&s->snap.m, JIG_CATALOG_FILE);
	if (cf)
		jig_hex(cf->sha256, JIG_SHA256_LEN, s->catalog_sha256);
	return 0;
}

static int where_facts(struct jig_session *s, const struct jig_session_request *rq, struct jig_error *e)
{
	char cwd[PATH_MAX];
	int r;
	if (!rq->cwd && !getcwd(cwd, sizeof(cwd)))
		return jig_err(e, JIG_E_USAGE, "session: the working directory: %s", strerror(errno));
	if ((r = jig_runtime_dir(s->runtime, sizeof(s->runtime), e)) || (r = jig_session_map_load(&s->map, e)) ||
	    (r = jig_session_map_resolve(&s->map, rq->cwd ? rq->cwd : cwd, &s->w, e)) ||
	    (r = jig_session_map_provider(&s->map, rq->provider, &s->w, e)))
		return r;
	if (snprintf(s->tmpdir, sizeof(s->tmpdir), "%s/jig/sessions/" JIG_SESSION_ID_SLOT "/tmp", s->runtime) >= (int)sizeof(s->tmpdir))
		return jig_err(e, JIG_E_USAGE, "session: $XDG_RUNTIME_DIR is too long");
	/* The broker's socket directory: jig's own, under the caller's home
	 * (a bind source is never below /run); "@session" made the launch's id. */
	const char *home = jig_caller_home();
	if (!home || home[0] != '/' ||
	    snprintf(s->broker_dir, sizeof(s->broker_dir), "%s/.local/state/jig/sessions/" JIG_SESSION_ID_SLOT "/broker", home) >=
		    (int)sizeof(s->broker_dir))
		return jig_err(e, JIG_E_USAGE, "session: your account's home directory (passwd) is missing or too long; the broker's socket is below it");
	/* jig-sessions/, beside jig's own state: a writable bind never lies
	 * inside jig's own directories (decision 145; decision 135). One per
	 * repository (its root's digest), below the password database's home,
	 * never $XDG_STATE_HOME (decision 216). */
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(s->w.root, strlen(s->w.root), d);
	jig_hex(d, 16, hex);
	if ((r = jig_session_home(s->home, sizeof(s->home), e)))
		return r;
	if (snprintf(s->state_rel, sizeof(s->state_rel), JIG_SESSION_STATE_DIR "/%s/%s/%s", s->w.context, s->w.client_id, hex) >=
		    (int)sizeof(s->state_rel) ||
	    snprintf(s->state_root, sizeof(s->state_root), "%s/%s", s->home, s->state_rel) >= (int)sizeof(s->state_root))
		return jig_err(e, JIG_E_USAGE, "session: the home directory %s is too long", s->home);
	const char *mine[] = {s->w.root, s->w.worktree, s->w.common_dir, NULL};
	if ((r = jig_session_outside_repositories(json_object_get(s->map.doc, "repositories"), mine, s->state_root, "the state root", e)))
		return r;
	jig_scope_name(s->name, sizeof(s->name), "session-", s->w.repo_id, JIG_SCOPE_NAME_KEEP_PLAN);
	return 0;
}

int jig_session_prepare(const struct jig_session_request *rq, struct jig_session **out, struct jig_error *e)
{
	struct jig_session *s = calloc(1, sizeof(*s));
	if (!s)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	s->high_risk = rq->high_risk;
	int r = check_caller_env(e);
	if (!r)
		r = where_facts(s, rq, e);
	if (!r)
		r = jig_session_git_resolve(&s->git, s->w.root, s->w.worktree, s->w.common_dir, s->w.rw, e);
	/* The SSH chain's checks (decision 235): a missing, stale, foreign or
	 * substituted agent socket, or one without an approved key, refuses
	 * here, so a dry run says what the launch would (checked again then,
	 * and before each SSH request). */
	struct jig_ssh_chain ssh;
	if (!r)
		r = jig_ssh_chain_start(&ssh, s->map.doc, s->w.repo, s->w.context, NULL, e);
	/* The HTTPS chain's (decision 290): each host on loopback, its CA and
	 * credential files the operator's (checked again before each request). */
	if (!r)
		r = jig_https_chain_check(s->map.doc, s->w.repo, s->w.context, e);
	if (!r && !(r = client_facts(s, e)) && !(r = argv_facts(s, rq->agent_args, e)) && !(r = env_network(s, e)))
		r = open_snapshot(s, e);
	if (!r) {
		s->facts = (struct jig_session_facts){
			.name = s->name, .snapshot_dir = s->snap.dirpath, .home = jig_caller_home(),
			.program = json_string_value(json_array_get(json_object_get(s->w.client, "command"), 0)),
			.trees = s->trees, .n_trees = s->n_trees, .worktree = s->w.worktree, .rw = s->w.rw,
			.git_ro = (const char *const *)s->git.ro, .n_git_ro = s->git.n_ro, .cwd = s->w.cwd, .state_root = s->state_root, .tmpdir = s->tmpdir, .broker_dir = s->broker_dir,
			.term = term_of_caller(s->term, sizeof(s->term)), .map_env = s->env, .network = s->network};
		r = jig_session_build(s, e);
	}
	if (r) {
		jig_session_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void jig_session_free(struct jig_session *s)
{
	if (!s)
		return;
	jig_scope_template_free(&s->t);
	json_decref(s->doc);
	free(s->canonical);
	json_decref(s->env);
	json_decref(s->network);
	json_decref(s->argv);
	free(s->trees);
	jig_catalog_free(&s->cat);
	if (s->snap_open)
		jig_snapshot_close(&s->snap);
	if (s->v_open)
		jig_verifier_finish(&s->v);
	jig_session_map_free(&s->map);
	jig_session_git_free(&s->git);
	free(s);
}

const char *jig_session_policy_sha256(const struct jig_session *s)
{
	return s->sha256;
}

const char *jig_session_policy_canonical(const struct jig_session *s)
{
	return s->canonical;
}
