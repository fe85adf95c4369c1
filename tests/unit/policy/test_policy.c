/* The scope policy builder as a unit (issue 13): strict parse, canonical
 * identity, runtime slots only where allowed, resolution re-checked like
 * any policy, and the one place a struct jig_scope is assembled. */
#include <fcntl.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(slots_only_in_templates), cmocka_unit_test(bad_slots),
					   cmocka_unit_test(reserved_targets_and_run), cmocka_unit_test(canonical_identity)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
