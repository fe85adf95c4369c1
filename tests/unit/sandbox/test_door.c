/* The host's door to the sandbox module (issue 34): what a module built
 * before ABI 1.6 would silently ignore (writable binds, loopback
 * endpoints, a controlling terminal) is refused before the module is
 * asked, never degraded. A stand-in module descriptor is enough. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/door.h"

static int launched;

static int fake_launch(void *state, const struct jig_scope *sc, struct jig_scope_result *out)
{
	(void)state;
	(void)sc;
	launched++;
	out->outcome = JIG_SCOPE_EXITED;
	return JIG_MOD_OK;
}

static const struct jig_sandbox_ops ops = {.struct_size = sizeof(ops), .launch = fake_launch};

static int launch_with(uint16_t minor, const struct jig_scope *sc, struct jig_scope_result *res)
{
	struct jig_module desc = {.magic = JIG_MODULE_MAGIC, .abi_major = JIG_ABI_MAJOR, .abi_minor = minor,
				  .struct_size = sizeof(desc), .kind = JIG_KIND_SANDBOX, .ops_size = sizeof(ops), .ops = &ops};
	struct jig_sandbox sb = {.h = {.desc = &desc}, .ops = &ops};
	return jig_sandbox_launch(&sb, sc, res);
}

static void older_module_refuses_abi_1_6_fields(void **state)
{
	(void)state;
	struct jig_scope_bind rw = {"/srv/work", "/work"};
	struct jig_scope_listener lis = {.ipv4 = 0x7f000001, .port = 1234};
	struct jig_scope base = {.struct_size = sizeof(base)};
	struct jig_scope cases[3] = {base, base, base};
	cases[0].rw_binds = &rw, cases[0].n_rw_binds = 1;
	cases[1].listeners = &lis, cases[1].n_listeners = 1;
	cases[2].controlling_tty = 1;
	const char *words[3] = {"writable binds", "loopback endpoints", "a controlling terminal"};
	struct jig_scope_result res;
	for (int i = 0; i < 3; i++) {
		launched = 0;
		assert_int_not_equal(launch_with(5, &cases[i], &res), JIG_MOD_OK);
		assert_int_equal(launched, 0);
		assert_int_equal(res.outcome, JIG_SCOPE_FAILED);
		assert_non_null(strstr(res.error, words[i]));
		assert_non_null(strstr(res.error, "ABI 1.6"));
		/* A 1.6 module is asked. */
		assert_int_equal(launch_with(6, &cases[i], &res), JIG_MOD_OK);
		assert_int_equal(launched, 1);
	}
	/* Without them, an older module still launches. */
	launched = 0;
	assert_int_equal(launch_with(5, &base, &res), JIG_MOD_OK);
	assert_int_equal(launched, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(older_module_refuses_abi_1_6_fields)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
