/* Loader unit tests (cmocka). R-P02: what was hashed is what runs.
 * Run under ASan+UBSan and valgrind by the test script. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/identity.h"
#include "snapshot/install.h"
#include "snapshot/loader.h"
#include "util/fileio.h"

static char dir[256];

static void copy(const char *from, const char *to)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/jig-unit.XXXXXX");
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755);
	char p[512];
	snprintf(p, sizeof(p), "%s/modules", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/modules/testmod.so", dir);
	copy(JIG_TESTMODS "/testmod.so", p);
	chmod(p, 0644);
	struct jig_create_module m = {"testmod", "sandbox", "modules/testmod.so", JIG_ABI_MAJOR, JIG_ABI_MINOR};
	struct jig_error e = {0};
	char kid[17];
	assert_int_equal(jig_snapshot_create(dir, "unit", 7, jig_host_platform(), &m, 1, &e), 0);
	assert_int_equal(jig_snapshot_sign(dir, JIG_TEST_KEY, kid, &e), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void test_load_ok(void **state)
{
	(void)state;
	struct jig_snapshot s;
	struct jig_error e = {0};
	struct jig_module_handle h;
	assert_int_equal(jig_snapshot_open_dir(&s, dir, &e), 0);
	assert_int_equal(jig_snapshot_verify_all(&s, NULL, &e), 0);
	assert_int_equal(jig_module_load(&s, "testmod", JIG_KIND_SANDBOX, &h, &e), 0);
	assert_string_equal(h.desc->version, "A");
	jig_module_unload(&h);
	/* Asking for another kind is refused before anything is loaded. */
	assert_true(jig_module_load(&s, "testmod", JIG_KIND_HTTP, &h, &e) < 0);
	assert_non_null(strstr(e.msg, "a http module is needed"));
	jig_snapshot_close(&s);
}

/* The file is replaced on disk (by rename and in place) after it was
 * verified and before dlopen: the verified bytes are what runs. */
static void test_swap_after_verify(void **state)
{
	(void)state;
	struct jig_snapshot s;
	struct jig_error e = {0};
	struct jig_module_handle h;
	char p[512], tmp[512];
	assert_int_equal(jig_snapshot_open_dir(&s, dir, &e), 0);
	const struct jig_manifest_module *mm = jig_manifest_find_module(&s.m, "testmod");
	assert_non_null(mm);
	int fd = jig_module_verified_fd(&s, mm, &e);
	assert_true(fd >= 0);

	snprintf(p, sizeof(p), "%s/modules/testmod.so", dir);
	snprintf(tmp, sizeof(tmp), "%s/modules/.swap", dir);
	copy(JIG_TESTMODS "/testmod-b.so", tmp);
	assert_int_equal(rename(tmp, p), 0);			/* swap by rename */
	copy(JIG_TESTMODS "/testmod-b.so", p);			/* and overwrite in place */
	/* The sealed copy cannot be written either. */
	assert_int_equal(write(fd, "x", 1), -1);

	assert_int_equal(jig_module_load_fd(&s, mm, fd, &h, &e), 0);
	assert_string_equal(h.desc->version, "A");
	jig_module_unload(&h);

	/* A fresh load sees the swapped bytes and refuses them. */
	assert_true(jig_module_load(&s, "testmod", 0, &h, &e) < 0);
	assert_non_null(strstr(e.msg, "expected"));
	jig_snapshot_close(&s);
	copy(JIG_TESTMODS "/testmod.so", p);
}

static void test_launch_identity(void **state)
{
	(void)state;
	struct jig_snapshot s;
	struct jig_error e = {0};
	char a[JIG_SHA256_HEX], b[JIG_SHA256_HEX], c[JIG_SHA256_HEX];
	assert_int_equal(jig_snapshot_open_dir(&s, dir, &e), 0);
	const char *one[] = {"modules/testmod.so"};
	const char *two[] = {"modules/testmod.so", "modules/testmod.so"};
	assert_int_equal(jig_launch_identity(&s, one, 1, a, &e), 0);
	assert_int_equal(jig_launch_identity(&s, two, 2, b, &e), 0);
	assert_string_equal(a, b);
	assert_int_equal(jig_launch_identity(&s, NULL, 0, c, &e), 0);
	assert_string_not_equal(a, c); /* the modules used are part of it */
	s.m.sequence++;
	assert_int_equal(jig_launch_identity(&s, one, 1, c, &e), 0);
	assert_string_not_equal(a, c); /* and the sequence */
	s.m.sequence--;
	s.m.files[0].sha256[0] ^= 1;
	assert_int_equal(jig_launch_identity(&s, one, 1, c, &e), 0);
	assert_string_not_equal(a, c); /* and each digest */
	const char *bad[] = {"modules/none.so"};
	assert_true(jig_launch_identity(&s, bad, 1, c, &e) < 0);
	jig_snapshot_close(&s);
}

static void test_manifest_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"[]",
		"{\"format\":\"jig-snapshot-manifest/1\"}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"format\":\"jig-snapshot-manifest/1\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files\":[],\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"id\":\"a\",\"sequence\":1.5,\"platform\":\"p\",\"files\":[],\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"id\":\"a\",\"sequence\":0,\"platform\":\"p\",\"files\":[],\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"id\":\"../a\",\"sequence\":1,\"platform\":\"p\",\"files\":[],\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files\":[{\"path\":\"a//b\",\"size\":1,\"sha256\":\"00\"}],\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/1\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files\":[],\"modules\":[]} x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jig_manifest m;
		struct jig_error e = {0};
		assert_true(jig_manifest_parse(&m, bad[i], strlen(bad[i]), &e) < 0);
		assert_int_equal(e.code, JIG_E_INTEGRITY);
		assert_null(strchr(e.msg, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_ok),
		cmocka_unit_test(test_swap_after_verify),
		cmocka_unit_test(test_launch_identity),
		cmocka_unit_test(test_manifest_rejects),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
