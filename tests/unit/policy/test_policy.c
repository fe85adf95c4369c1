/* The scope policy builder as a unit (issue 13): strict parse, canonical
 * identity, runtime slots only where allowed, resolution re-checked like
 * any policy, and the one place a struct jig_scope is assembled. */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/scope_policy.h"

#define BASE(binds, fds) "{\"format\":\"jig-scope-policy/1\",\"scope\":\"t\",\"binds\":[" binds "],\"tmpfs\":[{\"target\":\"/s\",\"size_bytes\":4096}]," \
	"\"symlinks\":[],\"env\":{\"A\":\"1\"},\"descriptors\":[" fds "],\"cwd\":\"/s\",\"network\":\"none\"," \
	"\"limits\":{\"memory_bytes\":67108864,\"tasks\":16,\"cpu_quota_us\":100000,\"wall_ms\":60000}}"

static int parse(const char *text, unsigned flags, struct jig_scope_policy *p, struct jig_error *e)
{
	return jig_scope_policy_parse(text, strlen(text), NULL, flags, p, e);
}

static void slots_only_in_templates(void **state)
{
	(void)state;
	struct jig_scope_policy p;
	struct jig_error e = {0};
	const char *tmpl = BASE("{\"source\":\"@run/pkg\",\"target\":\"/flow\"}", "{\"source\":\"@run0\",\"target\":3}");
	assert_true(parse(tmpl, 0, &p, &e) < 0);
	assert_non_null(strstr(e.msg, "runtime slot"));
	assert_int_equal(parse(tmpl, JIG_POLICY_SLOTS, &p, &e), 0);
	assert_true(p.has_slots);
	assert_true(jig_scope_policy_check_host(&p, &e) < 0); /* never runs as it is */
	/* Resolve: the run's values, re-parsed and live-checked. */
	char run[] = "/tmp/jig-policy-test.XXXXXX";
	assert_non_null(mkdtemp(run));
	char pkg[64];
	snprintf(pkg, sizeof(pkg), "%s/pkg", run);
	assert_int_equal(mkdir(pkg, 0700), 0);
	int fd = open("/dev/null", O_RDONLY);
	const struct jig_scope_slot slots[] = {{"run0", fd}};
	struct jig_scope_run values = {.run_dir = run, .slots = slots, .n_slots = 1, .wall_ms = 1000};
	struct jig_scope_policy r;
	assert_int_equal(jig_scope_policy_resolve(&p, &values, NULL, &r, &e), 0);
	assert_false(r.has_slots);
	assert_string_equal(r.binds[0].source, pkg);
	assert_int_equal(r.fds[0].source, fd);
	assert_int_equal(r.limits.wall_ms, 1000);
	/* The template's digest does not depend on the run's values. */
	assert_string_not_equal(r.sha256, p.sha256);
	struct jig_scope sc;
	const char *argv[] = {"/bin/x", NULL};
	struct jig_scope_launch l = {.policy_sha256 = p.sha256, .init_fd = 7, .argv = argv, .abort_fd = -1};
	assert_int_equal(jig_scope_describe(&r, &l, &sc, &e), 0);
	assert_string_equal(sc.policy_sha256, p.sha256);
	assert_int_equal(sc.n_binds, 1);
	assert_int_equal(sc.n_env, 1);
	assert_string_equal(sc.env[0], "A=1");
	assert_int_equal(sc.limits.wall_ms, 1000);
	jig_scope_policy_free(&r);
	/* A source that does not exist, a deadline past the ceiling. */
	rmdir(pkg);
	assert_true(jig_scope_policy_resolve(&p, &values, NULL, &r, &e) < 0);
	mkdir(pkg, 0700);
	values.wall_ms = 60001;
	assert_true(jig_scope_policy_resolve(&p, &values, NULL, &r, &e) < 0);
	assert_non_null(strstr(e.msg, "ceiling"));
	rmdir(pkg);
	rmdir(run);
	close(fd);
	jig_scope_policy_free(&p);
}

static void bad_slots(void **state)
{
	(void)state;
	struct jig_scope_policy p;
	struct jig_error e = {0};
	assert_true(parse(BASE("{\"source\":\"@run/../x\",\"target\":\"/f\"}", ""), JIG_POLICY_SLOTS, &p, &e) < 0);
	assert_true(parse(BASE("{\"source\":\"@home\",\"target\":\"/f\"}", ""), JIG_POLICY_SLOTS, &p, &e) < 0);
	assert_true(parse(BASE("", "{\"source\":\"@Run0\",\"target\":3}"), JIG_POLICY_SLOTS, &p, &e) < 0);
	assert_true(parse(BASE("", "{\"source\":\"run0\",\"target\":3}"), JIG_POLICY_SLOTS, &p, &e) < 0);
}

static void reserved_targets_and_run(void **state)
{
	(void)state;
	struct jig_scope_policy p;
	struct jig_error e = {0};
	assert_true(parse(BASE("{\"source\":\"/usr/lib\",\"target\":\"/.jig/init\"}", ""), 0, &p, &e) < 0);
	assert_true(parse(BASE("{\"source\":\"/usr/lib\",\"target\":\"/.jig\"}", ""), 0, &p, &e) < 0);
	assert_int_equal(parse(BASE("{\"source\":\"/usr/lib\",\"target\":\"/.jig/lib\"}", ""), 0, &p, &e), 0);
	jig_scope_policy_free(&p);
	assert_true(parse(BASE("{\"source\":\"/run\",\"target\":\"/r\"}", ""), 0, &p, &e) < 0);
	assert_true(parse(BASE("{\"source\":\"/run/user/1000/bus\",\"target\":\"/r\"}", ""), 0, &p, &e) < 0);
	assert_non_null(strstr(e.msg, "/run is never granted"));
}

/* A policy whose "env" is env (JSON object text): 0, or -1 with e. */
static int parse_env(const char *env, struct jig_error *e)
{
	static const char base[] = BASE("", "");
	const char *at = strstr(base, "\"env\":{\"A\":\"1\"}");
	size_t head = (size_t)(at - base), cap = strlen(base) + strlen(env) + 16;
	char *doc = malloc(cap);
	assert_non_null(doc);
	snprintf(doc, cap, "%.*s\"env\":%s%s", (int)head, base, env, at + strlen("\"env\":{\"A\":\"1\"}"));
	struct jig_scope_policy p;
	*e = (struct jig_error){0};
	int r = parse(doc, 0, &p, e);
	if (r == 0)
		jig_scope_policy_free(&p);
	free(doc);
	return r;
}

/* R-P09 (decision 334): the scope's environment: no credential by name
 * or suffix, at most 64 variables, values at most 4096 bytes, no NUL. */
static void env_refused(void **state)
{
	(void)state;
	struct jig_error e;
	assert_true(parse_env("{\"GITHUB_TOKEN\":\"x\"}", &e) < 0);
	assert_non_null(strstr(e.msg, "env \"GITHUB_TOKEN\": credentials never enter a scope's environment"));
	assert_true(parse_env("{\"MY_SERVICE_PASSWORD\":\"x\"}", &e) < 0);
	assert_non_null(strstr(e.msg, "credentials never enter"));
	char env[8192];
	size_t n = 0;
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(env + n, sizeof(env) - n, "%s\"V%d\":\"1\"", i ? "," : "{", i);
	snprintf(env + n, sizeof(env) - n, "}");
	assert_true(parse_env(env, &e) < 0);
	assert_string_equal(e.msg, "scope policy: \"env\" has 65 variables; at most 64");
	char *last = strrchr(env, ','); /* 64 */
	last[0] = '}', last[1] = '\0';
	if (parse_env(env, &e) != 0)
		fail_msg("64 variables: %s", e.msg);
	char big[4200];
	snprintf(big, sizeof(big), "{\"A\":\"%4096s\"}", "");
	assert_int_equal(parse_env(big, &e), 0);
	snprintf(big, sizeof(big), "{\"A\":\"%4097s\"}", "");
	assert_true(parse_env(big, &e) < 0);
	assert_string_equal(e.msg, "scope policy: env \"A\": value longer than 4096 bytes or contains NUL");
	/* A NUL is refused by the JSON reader before the env check sees it. */
	assert_true(parse_env("{\"A\":\"a\\u0000b\"}", &e) < 0);
	assert_non_null(strstr(e.msg, "scope policy: not valid JSON"));
}

static void canonical_identity(void **state)
{
	(void)state;
	struct jig_scope_policy a, b;
	struct jig_error e = {0};
	const char *one = BASE("{\"source\":\"/usr/lib\",\"target\":\"/a\"},{\"source\":\"/usr/share\",\"target\":\"/b\"}", "");
	const char *two = BASE("{\"target\":\"/b\",\"source\":\"/usr/share\"},{\"source\":\"/usr/lib\",\"target\":\"/a\"}", "");
	assert_int_equal(parse(one, 0, &a, &e), 0);
	assert_int_equal(parse(two, 0, &b, &e), 0);
	assert_string_equal(a.sha256, b.sha256);
	assert_string_equal(a.canonical, b.canonical);
	jig_scope_policy_free(&a);
	jig_scope_policy_free(&b);
}

/* Writable binds (issue 34): "write": true, refused wherever a read-only
 * bind is and more; false has the read-only spelling. */
#define RW(src, tgt) "{\"source\":\"" src "\",\"target\":\"" tgt "\",\"write\":true}"

static void refused_rw(const char *binds, const char *home, const char *needle)
{
	struct jig_scope_policy p;
	struct jig_error e = {0};
	char buf[2048];
	snprintf(buf, sizeof(buf), BASE("%s", ""), binds);
	assert_true(jig_scope_policy_parse(buf, strlen(buf), home, JIG_POLICY_SLOTS, &p, &e) < 0);
	if (!strstr(e.msg, needle))
		fail_msg("\"%s\" does not say \"%s\"", e.msg, needle);
}

static void writable_binds_parse(void **state)
{
	(void)state;
	struct jig_scope_policy p, q;
	struct jig_error e = {0};
	assert_int_equal(parse(BASE(RW("/srv/work", "/work") ",{\"source\":\"/usr/lib\",\"target\":\"/lib\"}", ""), 0, &p, &e), 0);
	assert_int_equal(p.n_binds, 1);
	assert_int_equal(p.n_rw_binds, 1);
	assert_string_equal(p.binds[0].source, "/usr/lib");
	assert_string_equal(p.rw_binds[0].source, "/srv/work");
	assert_string_equal(p.rw_binds[0].target, "/work");
	assert_non_null(strstr(p.canonical, "\"write\":true"));
	/* false is the read-only spelling: the same canonical form. */
	assert_int_equal(parse(BASE("{\"source\":\"/usr/lib\",\"target\":\"/lib\",\"write\":false}", ""), 0, &q, &e), 0);
	struct jig_scope_policy r;
	assert_int_equal(parse(BASE("{\"source\":\"/usr/lib\",\"target\":\"/lib\"}", ""), 0, &r, &e), 0);
	assert_string_equal(q.sha256, r.sha256);
	assert_int_equal(q.n_rw_binds, 0);
	assert_string_not_equal(p.sha256, r.sha256);
	jig_scope_policy_free(&r);
	jig_scope_policy_free(&q);
	/* Described: the module gets them apart from the read-only ones. */
	struct jig_scope sc;
	const char *argv[] = {"/bin/x", NULL};
	struct jig_scope_launch l = {.init_fd = 7, .argv = argv, .abort_fd = -1};
	assert_int_equal(jig_scope_describe(&p, &l, &sc, &e), 0);
	assert_int_equal(sc.n_binds, 1);
	assert_int_equal(sc.n_rw_binds, 1);
	assert_string_equal(sc.rw_binds[0].target, "/work");
	assert_int_equal(sc.controlling_tty, 0);
	/* The permission plan shows them as writable. */
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	jig_scope_plan_print(&p, "", f);
	fclose(f);
	assert_non_null(strstr(txt, "/work"));
	assert_non_null(strstr(txt, "<- /srv/work (read/write)"));
	free(txt);
	json_t *plan = jig_scope_plan_json(&p);
	json_t *w = json_array_get(json_object_get(plan, "writable"), 0);
	assert_string_equal(json_string_value(json_object_get(w, "at")), "/work");
	assert_string_equal(json_string_value(json_object_get(w, "bind")), "/srv/work");
	json_decref(plan);
	jig_scope_policy_free(&p);
	/* A slot may be writable (filled per run, then checked live). */
	assert_int_equal(parse(BASE(RW("@run/tmp", "/tmp"), ""), JIG_POLICY_SLOTS, &p, &e), 0);
	assert_int_equal(p.n_rw_binds, 1);
	jig_scope_policy_free(&p);
}

static void writable_binds_refused(void **state)
{
	(void)state;
	refused_rw("{\"source\":\"/srv\",\"target\":\"/w\",\"write\":1}", NULL, "true or false");
	refused_rw("{\"source\":\"/srv\",\"target\":\"/w\",\"write\":\"yes\"}", NULL, "true or false");
	refused_rw(RW("/", "/w"), NULL, "whole host");
	refused_rw(RW("/tmp", "/w"), NULL, "too broad");
	refused_rw(RW("/home", "/w"), NULL, "too broad");
	refused_rw(RW("/etc", "/w"), NULL, "too broad");
	refused_rw(RW("/var/tmp", "/w"), NULL, "too broad");
	refused_rw(RW("/home/op", "/w"), "/home/op", "home directory");
	/* A directory above the home directory contains it (decision 334). */
	refused_rw(RW("/srv/op", "/w"), "/srv/op/home", "is the home directory /srv/op/home or contains it");
	refused_rw("{\"source\":\"/srv/op\",\"target\":\"/r\"}", "/srv/op/home", "is the home directory /srv/op/home or contains it");
	/* jig provides /proc and /dev inside every scope: never a target. */
	refused_rw("{\"source\":\"/usr/lib\",\"target\":\"/proc/x\"}", NULL, "/proc, /dev and the launcher");
	refused_rw("{\"source\":\"/usr/lib\",\"target\":\"/proc\"}", NULL, "/proc, /dev and the launcher");
	refused_rw("{\"source\":\"/usr/lib\",\"target\":\"/dev/shm\"}", NULL, "/proc, /dev and the launcher");
	refused_rw(RW("/proc/self", "/w"), NULL, "never granted");
	refused_rw(RW("/run/lock", "/w"), NULL, "/run is never granted");
	refused_rw(RW("/srv/work", "/.jig/w"), NULL, "never below /.jig");
	refused_rw(RW("/srv/work", "/.jig/init"), NULL, "launcher");
	refused_rw(RW("/srv/work", "/w") "," RW("/srv/other", "/w"), NULL, "granted twice");
	/* A session's private TMPDIR is the one writable bind below /run:
	 * exactly the caller's /run/user/UID/jig/sessions/<32 hex>/tmp. */
	char ok[160], other[160], buf[512];
	const char *id = "0123456789abcdef0123456789abcdef";
	snprintf(ok, sizeof(ok), "/run/user/%u/jig/sessions/%s/tmp", (unsigned)geteuid(), id);
	snprintf(other, sizeof(other), "/run/user/%u/jig/sessions/%s/tmp", (unsigned)geteuid() + 1, id);
	snprintf(buf, sizeof(buf), RW("%s", "/tmp"), ok);
	{
		struct jig_scope_policy q;
		struct jig_error qe = {0};
		char doc[2048];
		snprintf(doc, sizeof(doc), BASE("%s", ""), buf);
		assert_int_equal(parse(doc, 0, &q, &qe), 0);
		assert_int_equal(q.n_rw_binds, 1);
		jig_scope_policy_free(&q);
	}
	snprintf(buf, sizeof(buf), RW("%s", "/tmp"), other);
	refused_rw(buf, NULL, "never granted");
	snprintf(buf, sizeof(buf), "{\"source\":\"%s\",\"target\":\"/tmp\"}", ok);
	refused_rw(buf, NULL, "never granted"); /* read-only: /run/user as ever */
	snprintf(buf, sizeof(buf), RW("/run/user/%u/jig/sessions/%s", "/tmp"), (unsigned)geteuid(), id);
	refused_rw(buf, NULL, "never granted");
	snprintf(buf, sizeof(buf), RW("/run/user/%u/jig/sessions/%.31s/tmp", "/tmp"), (unsigned)geteuid(), id);
	refused_rw(buf, NULL, "never granted");
	/* Slots only in templates, for writable binds too. */
	struct jig_scope_policy p;
	struct jig_error e = {0};
	assert_true(parse(BASE(RW("@run/tmp", "/tmp"), ""), 0, &p, &e) < 0);
}

static int live(const char *src, struct jig_error *e)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), BASE(RW("%s", "/w"), ""), src);
	struct jig_scope_policy p;
	int r = jig_scope_policy_parse(buf, strlen(buf), NULL, 0, &p, e);
	if (r == 0) {
		r = jig_scope_policy_check_host(&p, e);
		jig_scope_policy_free(&p);
	}
	return r;
}

static void writable_binds_checked_live(void **state)
{
	(void)state;
	struct jig_error e = {0};
	char dir[] = "/tmp/jig-rw-test.XXXXXX", p[128], q[128];
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/work", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(live(p, &e), 0);
	/* Not canonical: through a symbolic link. */
	snprintf(q, sizeof(q), "%s/link", dir);
	assert_int_equal(symlink(p, q), 0);
	assert_true(live(q, &e) < 0);
	assert_non_null(strstr(e.msg, "symbolic link"));
	/* Not a directory. */
	snprintf(q, sizeof(q), "%s/file", dir);
	close(open(q, O_WRONLY | O_CREAT, 0600));
	assert_true(live(q, &e) < 0);
	assert_non_null(strstr(e.msg, "not a directory"));
	/* Not the caller's. */
	snprintf(q, sizeof(q), "%s/foreign", dir);
	assert_int_equal(mkdir(q, 0755), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(q, 65534, 65534), 0);
	assert_true(live(geteuid() == 0 ? q : "/usr/lib", &e) < 0);
	assert_non_null(strstr(e.msg, "not the caller"));
	/* Missing. */
	snprintf(q, sizeof(q), "%s/absent", dir);
	assert_true(live(q, &e) < 0);
	/* jig's own directories: neither held nor entered. */
	char cfg[128], own[160];
	snprintf(cfg, sizeof(cfg), "%s/cfg", dir);
	snprintf(own, sizeof(own), "%s/cfg/jig", dir);
	assert_int_equal(mkdir(cfg, 0700), 0);
	assert_int_equal(mkdir(own, 0700), 0);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	assert_true(live(cfg, &e) < 0);
	assert_non_null(strstr(e.msg, "holds jig's own directory"));
	assert_true(live(own, &e) < 0);
	assert_non_null(strstr(e.msg, "jig's own directory"));
	snprintf(q, sizeof(q), "%s/cfg/jig/x", dir);
	assert_int_equal(mkdir(q, 0700), 0);
	assert_true(live(q, &e) < 0);
	assert_non_null(strstr(e.msg, "is inside jig's own directory"));
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(live(cfg, &e), 0);
	/* Another file system mounted below: refused (a bind is recursive);
	 * the mount point itself is fine. In a child with a mount namespace
	 * of its own (root: the plain lane). */
	assert_int_equal(geteuid(), 0);
	snprintf(q, sizeof(q), "%s/work/sub", dir);
	assert_int_equal(mkdir(q, 0700), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct jig_error ce = {0};
		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("jig-test", q, "tmpfs", 0, "mode=0700") < 0)
			_exit(3);
		if (live(p, &ce) == 0 || !strstr(ce.msg, "mounted below it at"))
			_exit(4);
		_exit(live(q, &ce) == 0 ? 0 : 5);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(live(p, &e), 0); /* the parent's namespace is untouched */
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The controlling terminal is only ever jig's pty at descriptor 0. */
static void controlling_tty_needs_a_terminal_at_0(void **state)
{
	(void)state;
	struct jig_scope_policy p;
	struct jig_error e = {0};
	int null = open("/dev/null", O_RDWR);
	char buf[1024];
	snprintf(buf, sizeof(buf), BASE("", "{\"source\":%d,\"target\":0}"), null);
	assert_int_equal(parse(buf, 0, &p, &e), 0);
	struct jig_scope sc;
	const char *argv[] = {"/bin/x", NULL};
	struct jig_scope_launch l = {.init_fd = 7, .argv = argv, .abort_fd = -1, .controlling_tty = true};
	assert_true(jig_scope_describe(&p, &l, &sc, &e) < 0);
	assert_non_null(strstr(e.msg, "terminal at descriptor 0"));
	jig_scope_policy_free(&p);
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(m >= 0);
	assert_int_equal(grantpt(m), 0);
	assert_int_equal(unlockpt(m), 0);
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(s >= 0);
	snprintf(buf, sizeof(buf), BASE("", "{\"source\":%d,\"target\":0}"), s);
	assert_int_equal(parse(buf, 0, &p, &e), 0);
	assert_int_equal(jig_scope_describe(&p, &l, &sc, &e), 0);
	assert_int_equal(sc.controlling_tty, 1);
	jig_scope_policy_free(&p);
	close(s);
	close(m);
	close(null);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(slots_only_in_templates), cmocka_unit_test(bad_slots),
					   cmocka_unit_test(reserved_targets_and_run), cmocka_unit_test(canonical_identity),
					   cmocka_unit_test(writable_binds_parse), cmocka_unit_test(writable_binds_refused),
					   cmocka_unit_test(writable_binds_checked_live), cmocka_unit_test(controlling_tty_needs_a_terminal_at_0),
					   cmocka_unit_test(env_refused)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
