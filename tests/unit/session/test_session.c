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
		cmocka_unit_test(where),
		cmocka_unit_test(composition_is_canonical),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
