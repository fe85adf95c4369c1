/* jig session's pure parts (issue 34): the command line's refusals, the
 * repository map's strict parse, the resolution of a working directory to
 * its mapped repository (files only, no git), and the session kind's
 * composition: the same facts give byte-identical canonical policy, and
 * a catalog fragment, the mode, the network or the worktree change it;
 * the per-launch id is outside the template. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/session_policy.h"
#include "session/map.h"
#include "session/places.h"
#include "session/session.h"

static char dir[128];

/* --- the command line ---------------------------------------------------------------- */

static int parse(const char *line, struct jig_session_args *a, struct jig_error *e)
{
	static char buf[512];
	static char *argv[32];
	snprintf(buf, sizeof(buf), "%s", line);
	int argc = 0;
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	memset(e, 0, sizeof(*e));
	return jig_session_parse_args(argc, argv, a, e);
}

static void args_refused(const char *line, const char *needle)
{
	struct jig_session_args a;
	struct jig_error e;
	assert_int_equal(parse(line, &a, &e), -JIG_E_USAGE);
	if (!strstr(e.msg, needle))
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", line, e.msg, needle);
}

static void command_line(void **state)
{
	(void)state;
	struct jig_session_args a;
	struct jig_error e;
	assert_int_equal(parse("--provider local --dry-run --json --docker --voice -- --verbose x", &a, &e), 0);
	assert_string_equal(a.rq.provider, "local");
	assert_true(a.dry_run && a.json);
	assert_int_equal(a.rq.high_risk, JIG_SESSION_HR_DOCKER | JIG_SESSION_HR_VOICE);
	assert_string_equal(a.rq.agent_args[0], "--verbose");
	assert_string_equal(a.rq.agent_args[1], "x");
	assert_null(a.rq.agent_args[2]);
	assert_int_equal(parse("", &a, &e), 0);
	assert_null(a.rq.provider);
	assert_null(a.rq.agent_args);
	args_refused("--provider a --provider b", "given twice");
	args_refused("--provider=a", "--provider=ID is refused");
	args_refused("--provider", "needs a provider id");
	args_refused("-- --provider a", "--provider after \"--\"");
	args_refused("-- --model x", "(--model)");
	args_refused("-- --model=x", "(--model)");
	args_refused("-- -m x", "(-m)");
	args_refused("-- -mx", "(-m)");
	args_refused("-- --profile p", "(--profile)");
	args_refused("-- -c k=v", "(-c)");
	args_refused("-- --config=k=v", "(--config)");
	args_refused("--env A=1", "--env is refused");
	args_refused("--env=A=1", "--env is refused");
	args_refused("--yolo", "unknown argument");
	/* A client's own selectors are added from the map. */
	const char *extra[] = {"--agent-model"};
	assert_string_equal(jig_session_selector("--agent-model=big", extra, 1), "--agent-model");
	assert_null(jig_session_selector("--agent-models", extra, 1));
	assert_null(jig_session_selector("--verbose", extra, 1));
	assert_string_equal(jig_session_high_risk_name(JIG_SESSION_HR_MAINTENANCE), "maintenance");
}

/* --- the map -------------------------------------------------------------------------- */

static char *map_text(const char *edit_key, const char *edit)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"format\":\"jig-sessions/1\","
		 "\"clients\":{\"fake\":{\"command\":[\"%s/client/agent\"],\"trees\":[\"%s/client\"]%s}},"
		 "\"providers\":{\"local\":{\"client\":\"fake\",\"endpoint\":\"%s\"},\"other\":{\"client\":\"fake\",\"endpoint\":\"api.example.com:443\"}},"
		 "\"repositories\":{\"repo\":{\"root\":\"%s/repo\",\"worktrees\":[\"%s/repo-wt\"],\"mode\":\"%s\",\"context\":\"personal\","
		 "\"default_provider\":%s,\"providers\":[\"local\",\"other\"]%s}}}",
		 dir, dir, edit_key && strcmp(edit_key, "client") == 0 ? edit : "",
		 edit_key && strcmp(edit_key, "endpoint") == 0 ? edit : "127.0.0.1:1234", dir, dir,
		 edit_key && strcmp(edit_key, "mode") == 0 ? edit : "ro",
		 edit_key && strcmp(edit_key, "default") == 0 ? edit : "\"local\"",
		 edit_key && strcmp(edit_key, "repo") == 0 ? edit : "");
	return buf;
}

static void map_refused(const char *key, const char *edit, const char *needle)
{
	struct jig_session_map m;
	struct jig_error e = {0};
	const char *t = map_text(key, edit);
	assert_true(jig_session_map_parse(t, strlen(t), "sessions.json", &m, &e) < 0);
	if (!strstr(e.msg, needle))
		fail_msg("%s=%s: \"%s\" lacks \"%s\"", key, edit, e.msg, needle);
}

static void map_parse(void **state)
{
	(void)state;
	struct jig_session_map m;
	struct jig_error e = {0};
	const char *t = map_text(NULL, NULL);
	assert_int_equal(jig_session_map_parse(t, strlen(t), "sessions.json", &m, &e), 0);
	assert_int_equal(strlen(m.sha256), 64);
	jig_session_map_free(&m);
	/* No "worktrees": the root alone (once). */
	const char *alone = "{\"format\":\"jig-sessions/1\",\"clients\":{\"c\":{\"command\":[\"/x/a\"],\"trees\":[\"/x\"]}},"
			    "\"providers\":{\"p\":{\"client\":\"c\",\"endpoint\":\"127.0.0.1:1\"}},"
			    "\"repositories\":{\"r\":{\"root\":\"/r\",\"mode\":\"ro\",\"context\":\"work\",\"providers\":[\"p\"]}}}";
	if (jig_session_map_parse(alone, strlen(alone), "sessions.json", &m, &e) < 0)
		fail_msg("a map without worktrees: %s", e.msg);
	jig_session_map_free(&m);
	map_refused("client", ",\"x\":1", "clients.fake");
	map_refused("client", ",\"env\":{\"OPENAI_API_KEY\":\"k\"}", "credential-like");
	map_refused("client", ",\"env\":{\"GH_TOKEN\":\"k\"}", "credential-like");
	map_refused("client", ",\"env\":{\"HOME\":\"/x\"}", "set by jig");
	map_refused("client", ",\"config\":[\"rel\"]", "config[0]: an absolute");
	map_refused("client", ",\"selectors\":[\"model\"]", "selectors[0]");
	map_refused("endpoint", "localhost:1234", "providers.local.endpoint");
	map_refused("endpoint", "127.0.0.2:1234", "providers.local.endpoint");
	map_refused("endpoint", "127.0.0.1:0", "providers.local.endpoint");
	map_refused("endpoint", "127.0.0.1:70000", "providers.local.endpoint");
	map_refused("endpoint", "127.0.0.1", "providers.local.endpoint");
	map_refused("mode", "write", "repositories.repo.mode");
	map_refused("default", "\"nope\"", "not one of its approved providers");
	map_refused("repo", ",\"capabilities\":[\"docker\"]", "capabilities");
	map_refused("repo", ",\"extra\":true", "repositories.repo");
	const char *bad[] = {"", "{}", "[]", "{\"format\":\"jig-sessions/2\",\"clients\":{},\"providers\":{},\"repositories\":{}}",
			     "{\"format\":\"jig-sessions/1\",\"format\":\"jig-sessions/1\",\"clients\":{},\"providers\":{},\"repositories\":{}}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		assert_true(jig_session_map_parse(bad[i], strlen(bad[i]), "sessions.json", &m, &e) < 0);
		assert_int_equal(e.code, JIG_E_USAGE);
	}
	bool lo;
	assert_true(jig_session_endpoint_valid("127.0.0.1:1234", &lo) && lo);
	assert_true(jig_session_endpoint_valid("api.example.com:443", &lo) && !lo);
}

/* Endpoints parsed and canonicalised before they are compared (decision
 * 218): another spelling of this host, or of any address, is refused. */
static void endpoint_canonical(void **state)
{
	(void)state;
	bool lo;
	static const char *const ok[] = {"api.example.com:443", "a-b.example:1", "192.0.2.10:8443", "[2001:db8::1]:443",
					 "8.8.8.8:53", "x1.example:65535", "localhost-not.example:443"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!jig_session_endpoint_valid(ok[i], &lo) || lo)
			fail_msg("%s: refused (%s)", ok[i], jig_session_endpoint_check(ok[i], &lo));
	/* Non-canonical spellings of 127.0.0.1 (and of others), names of this
	 * host, local and link-local addresses. */
	static const char *const bad[] = {"0177.0.0.1:1234", "2130706433:1234", "localhost.:1234", "localhost:1234",
					  "foo.localhost:1234", "127.1:1234", "127.0.1:1234", "0x7f.0.0.1:1234",
					  "0x7f000001:1234", "[::ffff:127.0.0.1]:1234", "[::1]:1234", "[::]:1234",
					  "0.0.0.0:1234", "127.0.0.2:1234", "169.254.169.254:80", "[fe80::1]:80",
					  "[::ffff:169.254.169.254]:80", "[0:0:0:0:0:0:0:1]:1234", "[2001:DB8::1]:443",
					  "192.0.2.010:443", "api.example.com.:443", "API.example.com:443", "-a.example:1",
					  "a-.example:1", "a..example:1", "127.0.0.1:01234", "127.0.0.1:+1", "127.0.0.1: 1",
					  "[64:ff9b::7f00:1]:80", "[::127.0.0.1]:80", "10.0.0.1.:80", "1.2.3.4.5:80",
					  /* white space strtoul skips (found by fuzz_session_map) */
					  "n.example:\f 1", "127.0.0.1:\t80", "127.0.0.1:\n80", "127.0.0.1:80 ", "127.0.0.1:000080"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jig_session_endpoint_valid(bad[i], &lo))
			fail_msg("%s: accepted (loopback %d)", bad[i], lo);
	assert_true(jig_session_endpoint_check("0177.0.0.1:1234", &lo) != NULL &&
		    strstr(jig_session_endpoint_check("0177.0.0.1:1234", &lo), "canonical"));
	map_refused("endpoint", "2130706433:1234", "canonical");
	map_refused("endpoint", "localhost.:1234", "neither a DNS name");
}

/* --- where a session runs ------------------------------------------------------------- */

static void mk(const char *rel)
{
	char p[256], cmd[320];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *rel, const char *fmt, const char *arg)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, fmt, arg);
	fclose(f);
}

static struct jig_session_map m; /* w points into it: kept until the next resolve */

static int resolve(const char *rel, const char *provider, struct jig_session_where *w, struct jig_error *e)
{
	jig_session_map_free(&m);
	const char *t = map_text(NULL, NULL);
	assert_int_equal(jig_session_map_parse(t, strlen(t), "sessions.json", &m, e), 0);
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	memset(e, 0, sizeof(*e));
	int r = jig_session_map_resolve(&m, p, w, e);
	if (!r)
		r = jig_session_map_provider(&m, provider, w, e);
	return r;
}

static void where_refused(const char *rel, const char *provider, const char *needle)
{
	struct jig_session_where w;
	struct jig_error e;
	assert_true(resolve(rel, provider, &w, &e) < 0);
	if (!strstr(e.msg, needle))
		fail_msg("%s: \"%s\" lacks \"%s\"", rel, e.msg, needle);
}

static void where(void **state)
{
	(void)state;
	struct jig_session_where w;
	struct jig_error e;
	assert_int_equal(resolve("repo/src/deep", NULL, &w, &e), 0);
	char want[256];
	snprintf(want, sizeof(want), "%s/repo", dir);
	assert_string_equal(w.worktree, want);
	assert_string_equal(w.root, want);
	assert_string_equal(w.repo_id, "repo");
	assert_string_equal(w.provider_id, "local");
	assert_false(w.rw);
	assert_int_equal(resolve("repo-wt", "other", &w, &e), 0);
	snprintf(want, sizeof(want), "%s/repo-wt", dir);
	assert_string_equal(w.worktree, want);
	snprintf(want, sizeof(want), "%s/repo/.git", dir);
	assert_string_equal(w.common_dir, want);
	assert_string_equal(w.provider_id, "other");
	where_refused("repo-unreg", NULL, "unregistered worktree");
	where_refused("repo/sub", NULL, "unknown repository");
	where_refused("other", NULL, "unknown repository");
	where_refused("forged", NULL, "unregistered worktree");
	where_refused("linked", NULL, "a link is never followed");
	where_refused("plain", NULL, "not inside a Git repository");
	where_refused("repo", "nope", "unknown provider");
}

/* --- composition ---------------------------------------------------------------------- */

static char *catalog_text(void)
{
	FILE *f = fopen(JIG_CATALOG_SOURCE, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(n > 0);
	return buf;
}

static char *compose(const char *cat_text, bool rw, const char *endpoint, const char *worktree)
{
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(cat_text, strlen(cat_text), &c, &e), 0);
	char tree[256], prog[256], state_root[256];
	snprintf(tree, sizeof(tree), "%s/client", dir);
	snprintf(prog, sizeof(prog), "%s/client/agent", dir);
	snprintf(state_root, sizeof(state_root), "%s/state", dir);
	const char *trees[] = {tree};
	json_t *env = json_pack("{s:s}", "AGENT_MODE", "session"), *net = json_pack("{s:[s]}", "loopback", endpoint);
	struct jig_session_facts f = {.name = "session-repo", .snapshot_dir = dir, .program = prog, .trees = trees, .n_trees = 1,
				      .worktree = worktree, .rw = rw, .cwd = worktree, .state_root = state_root,
				      .tmpdir = "/run/user/1000/jig/sessions/@session/tmp", .term = "xterm", .map_env = env, .network = net};
	struct jig_scope_template t;
	if (jig_session_compose(&c, &f, &t, &e) < 0)
		fail_msg("compose: %s", e.msg);
	char *out = strdup(t.policy.canonical);
	assert_non_null(strstr(out, "\"/run/user/1000/jig/sessions/@session/tmp\""));
	assert_null(strstr(out, "@uid"));
	/* The instance: the id in, and still the same grants otherwise. */
	struct jig_scope_template it;
	assert_int_equal(jig_session_instance(&t, "0123456789abcdef0123456789abcdef", NULL, &it, &e), 0);
	assert_non_null(strstr(it.policy.canonical, "/run/user/1000/jig/sessions/0123456789abcdef0123456789abcdef/tmp"));
	assert_null(strstr(it.policy.canonical, "@session"));
	assert_ptr_equal(it.argv, t.argv);
	jig_scope_policy_free(&it.policy);
	jig_scope_template_free(&t);
	json_decref(env);
	json_decref(net);
	jig_catalog_free(&c);
	return out;
}

/* The brokered git's scope (decision 222): the catalog's session-git kind,
 * the worktree, its Git directory and the approved local remotes, nothing
 * of the caller's home, no network, git's environment only. */
static void git_scope_composed(void **state)
{
	(void)state;
	char *cat = catalog_text(), wt[256], gd[256], rem[256];
	snprintf(wt, sizeof(wt), "%s/repo", dir);
	snprintf(gd, sizeof(gd), "%s/repo/.git", dir);
	snprintf(rem, sizeof(rem), "%s/client", dir);
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(cat, strlen(cat), &c, &e), 0);
	const char *remotes[] = {rem, NULL};
	struct jig_session_git_facts f = {.name = "session-git-1", .snapshot_dir = dir, .home = "/home/operator-canary",
					  .worktree = wt, .git_dir = gd, .rw = true, .cwd = wt, .remotes = remotes};
	struct jig_scope_template t;
	if (jig_session_git_compose(&c, &f, &t, &e) < 0)
		fail_msg("compose: %s", e.msg);
	const char *out = t.policy.canonical;
	assert_string_equal(t.argv[0], "/usr/bin/git");
	assert_non_null(strstr(out, "\"network\":\"none\""));
	assert_non_null(strstr(out, "\"GIT_CONFIG_GLOBAL\":\"/dev/null\""));
	assert_non_null(strstr(out, "\"HOME\":\"/tmp\""));
	assert_null(strstr(out, "operator-canary"));
	char want[600];
	snprintf(want, sizeof(want), "\"source\":\"%s\",\"target\":\"%s\",\"write\":true", gd, gd);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "\"source\":\"%s\",\"target\":\"%s\",\"write\":true", rem, rem);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "\"cwd\":\"%s\"", wt);
	assert_non_null(strstr(out, want));
	jig_scope_template_free(&t);
	/* No remote outside a fetch, pull or push; read-only in an ro session. */
	f.remotes = NULL;
	f.rw = false;
	assert_int_equal(jig_session_git_compose(&c, &f, &t, &e), 0);
	assert_null(strstr(t.policy.canonical, rem));
	snprintf(want, sizeof(want), "\"source\":\"%s\",\"target\":\"%s\",\"write\":true", gd, gd);
	assert_null(strstr(t.policy.canonical, want));
	jig_scope_template_free(&t);
	jig_catalog_free(&c);
	free(cat);
}

static void composition_is_canonical(void **state)
{
	(void)state;
	char *cat = catalog_text(), wt[256], other[256];
	snprintf(wt, sizeof(wt), "%s/repo", dir);
	snprintf(other, sizeof(other), "%s/repo-wt", dir);
	char *a = compose(cat, false, "127.0.0.1:1234", wt), *b = compose(cat, false, "127.0.0.1:1234", wt);
	assert_string_equal(a, b); /* byte-identical */
	char *rw = compose(cat, true, "127.0.0.1:1234", wt);
	char *ep = compose(cat, false, "127.0.0.1:1235", wt);
	char *w2 = compose(cat, false, "127.0.0.1:1234", other);
	assert_string_not_equal(a, rw);
	assert_string_not_equal(a, ep);
	assert_string_not_equal(a, w2);
	/* A catalog fragment's change is a change of the composed policy. */
	char *edited = strdup(cat), *at = strstr(edited, "\"tasks\": 512");
	assert_non_null(at);
	memcpy(at, "\"tasks\": 513", 12);
	char *c2 = compose(edited, false, "127.0.0.1:1234", wt);
	assert_string_not_equal(a, c2);
	free(a), free(b), free(rw), free(ep), free(w2), free(c2), free(edited), free(cat);
}

/* The map's environment never sets again what the composition set (HOME,
 * here): refused with one line (issue 47's mutant session_policy.env_twice). */
static void map_env_set_twice(void **state)
{
	(void)state;
	char *cat = catalog_text();
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(cat, strlen(cat), &c, &e), 0);
	char tree[256], prog[256], state_root[256], wt[256];
	snprintf(tree, sizeof(tree), "%s/client", dir);
	snprintf(prog, sizeof(prog), "%s/client/agent", dir);
	snprintf(state_root, sizeof(state_root), "%s/state", dir);
	snprintf(wt, sizeof(wt), "%s/repo", dir);
	const char *trees[] = {tree};
	json_t *env = json_pack("{s:s}", "HOME", "/tmp/elsewhere"), *net = json_pack("{s:[s]}", "loopback", "127.0.0.1:1234");
	struct jig_session_facts f = {.name = "session-repo", .snapshot_dir = dir, .program = prog, .trees = trees, .n_trees = 1,
				      .worktree = wt, .cwd = wt, .state_root = state_root,
				      .tmpdir = "/run/user/1000/jig/sessions/@session/tmp", .term = "xterm", .map_env = env, .network = net};
	struct jig_scope_template t;
	assert_true(jig_session_compose(&c, &f, &t, &e) < 0);
	assert_string_equal(e.msg, "session: environment variable HOME is set twice (the catalog or the map's client and provider)");
	jig_catalog_free(&c);
	/* A catalog fragment may not set TERM (or HOME) either: the session's
	 * (issue 47's mutant session_policy.home_term_own). */
	const char *was = "\"env\": {\"PATH\": \"/.jig/shim:/usr/bin:/bin\", \"LANG\": \"C.UTF-8\"}";
	char *at = strstr(cat, was), edited[1 << 16];
	assert_non_null(at);
	assert_true(strlen(cat) + 32 < sizeof(edited));
	snprintf(edited, sizeof(edited), "%.*s\"env\": {\"PATH\": \"/.jig/shim:/usr/bin:/bin\", \"LANG\": \"C.UTF-8\", \"TERM\": \"vt100\"}%s",
		 (int)(at - cat), cat, at + strlen(was));
	json_object_del(env, "HOME");
	assert_int_equal(jig_catalog_parse(edited, strlen(edited), &c, &e), 0);
	assert_true(jig_session_compose(&c, &f, &t, &e) < 0);
	assert_string_equal(e.msg, "catalog kind \"session\": TERM is the session's; no fragment may set it");
	json_decref(env);
	json_decref(net);
	jig_catalog_free(&c);
	free(cat);
}

/* The state root (decision 216): made below a home, no link followed;
 * jig's own directories put back to 0700 whatever the agent made of them;
 * a link, a file, or a home writable by others refused with one line. */
static void state_root_kept(void **state)
{
	(void)state;
	char home[PATH_MAX], p[PATH_MAX + 64];
	struct jig_error e = {0};
	snprintf(home, sizeof(home), "%s/home", dir);
	assert_int_equal(mkdir(home, 0700), 0);
	const char *rel = ".local/state/jig-sessions/personal/fake/0123abcd";
	int fd = jig_session_state_dir(home, rel, &e);
	if (fd < 0)
		fail_msg("%s", e.msg);
	close(fd);
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", home, rel);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	static const mode_t agent_modes[] = {0, 0755, 0777, 0500};
	for (size_t i = 0; i < sizeof(agent_modes) / sizeof(agent_modes[0]); i++) {
		assert_int_equal(chmod(p, agent_modes[i]), 0);
		fd = jig_session_state_dir(home, rel, &e);
		if (fd < 0)
			fail_msg("mode %04o: %s", (unsigned)agent_modes[i], e.msg);
		close(fd);
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0700);
	}
	/* jig-sessions a link: refused, nothing followed. */
	snprintf(p, sizeof(p), "%s/.local/state/jig-sessions", home);
	char moved[PATH_MAX + 64];
	snprintf(moved, sizeof(moved), "%s/elsewhere", dir);
	assert_int_equal(rename(p, moved), 0);
	assert_int_equal(symlink(moved, p), 0);
	assert_true(jig_session_state_dir(home, rel, &e) < 0);
	assert_non_null(strstr(e.msg, "not a directory (a link is never followed)"));
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rename(moved, p), 0);
	/* .local writable by others: refused with the remedy. */
	snprintf(p, sizeof(p), "%s/.local", home);
	assert_int_equal(chmod(p, 0777), 0);
	assert_true(jig_session_state_dir(home, rel, &e) < 0);
	assert_non_null(strstr(e.msg, "writable by others (mode 0777); refused (chmod go-w"));
	assert_int_equal(chmod(p, 0700), 0);
	/* The home itself writable by others. */
	assert_int_equal(chmod(home, 0770), 0);
	assert_true(jig_session_state_dir(home, rel, &e) < 0);
	assert_non_null(strstr(e.msg, "the home directory"));
	assert_int_equal(chmod(home, 0700), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jig-session-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	char real[PATH_MAX];
	assert_non_null(realpath(dir, real));
	assert_true(strlen(real) < sizeof(dir));
	memcpy(dir, real, strlen(real) + 1);
	mk("repo/.git/worktrees/wt");
	mk("repo/.git/worktrees/unreg");
	mk("repo/src/deep");
	mk("repo/sub/.git");
	mk("repo-wt");
	mk("repo-unreg");
	mk("other/.git");
	mk("forged");
	mk("linked");
	mk("plain");
	mk("client");
	mk("state");
	mk("libexec/shim"); /* the snapshot's git and ssh shim (session-broker) */
	mk("libexec/connect"); /* jig's ssh ProxyCommand (session-git) */
	put("client/agent", "%s", "#!/bin/sh\n");
	put("repo-wt/.git", "gitdir: %s/repo/.git/worktrees/wt\n", dir);
	put("repo/.git/worktrees/wt/commondir", "%s", "../..\n");
	put("repo-unreg/.git", "gitdir: %s/repo/.git/worktrees/unreg\n", dir);
	put("repo/.git/worktrees/unreg/commondir", "%s", "../..\n");
	/* A directory claiming the mapped repository's Git directory: still
	 * not one of its registered worktrees. */
	put("forged/.git", "gitdir: %s/repo/.git\n", dir);
	char l[256], target[256];
	snprintf(l, sizeof(l), "%s/linked/.git", dir);
	snprintf(target, sizeof(target), "%s/repo/.git", dir);
	assert_int_equal(symlink(target, l), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[256];
	jig_session_map_free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(command_line),
		cmocka_unit_test(map_parse),
		cmocka_unit_test(endpoint_canonical),
		cmocka_unit_test(state_root_kept),
		cmocka_unit_test(where),
		cmocka_unit_test(composition_is_canonical),
		cmocka_unit_test(git_scope_composed),
		cmocka_unit_test(map_env_set_twice),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
