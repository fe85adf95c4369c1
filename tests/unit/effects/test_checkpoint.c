/* Run Checkpoint's checks and storage as a unit (issue 18): every cap at
 * and over it, the canonical stored form, the accepted aggregate replaced
 * whole, publication of what was accepted (or save 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "effects/checkpoint.h"
#include "util/limits.h"
#include "util/fileio.h"

static char why[256];

static char *encode(json_t *m, size_t *len)
{
	why[0] = '\0';
	char *out = jig_checkpoint_encode(m, 3, len, why, sizeof(why));
	json_decref(m);
	return out;
}

static json_t *files(size_t n, size_t each)
{
	json_t *f = json_object();
	char *text = malloc(each + 1);
	memset(text, 't', each);
	text[each] = '\0';
	for (size_t i = 0; i < n; i++) {
		char k[32];
		snprintf(k, sizeof(k), "d/%zu.txt", i);
		json_object_set_new(f, k, json_string(text));
	}
	free(text);
	return json_pack("{s:s,s:o}", "op", "checkpoint", "files", f);
}

static void test_canonical(void **state)
{
	(void)state;
	size_t len;
	char *s = encode(json_loads("{\"op\":\"checkpoint\",\"state\":{\"b\":1,\"a\":[\"é\"]},\"files\":{\"z\":\"1\",\"a/b\":\"2\"}}", 0, NULL), &len);
	assert_non_null(s);
	assert_string_equal(s, "{\"files\":{\"a/b\":\"2\",\"z\":\"1\"},\"format\":\"jig-checkpoint/1\",\"save\":3,\"state\":{\"a\":[\"é\"],\"b\":1}}");
	assert_int_equal(len, strlen(s));
	free(s);
	s = encode(json_loads("{\"op\":\"checkpoint\"}", 0, NULL), &len);
	assert_string_equal(s, "{\"files\":{},\"format\":\"jig-checkpoint/1\",\"save\":3,\"state\":null}");
	free(s);
}

static void test_files_cap(void **state)
{
	(void)state;
	size_t len;
	char *s = encode(files(JIG_CHECKPOINT_MAX_FILES, 1), &len);
	assert_non_null(s);
	free(s);
	assert_null(encode(files(JIG_CHECKPOINT_MAX_FILES + 1, 1), &len));
	assert_string_equal(why, "more than 64 files");
}

static void test_text_cap(void **state)
{
	(void)state;
	size_t len;
	char *s = encode(files(4, JIG_CHECKPOINT_MAX_TEXT / 4), &len);
	assert_non_null(s);
	free(s);
	json_t *m = files(4, JIG_CHECKPOINT_MAX_TEXT / 4);
	json_object_set_new(json_object_get(m, "files"), "x", json_string("y"));
	assert_null(encode(m, &len));
	assert_non_null(strstr(why, "1048577 bytes; at most 1048576"));
}

static void test_size_cap(void **state)
{
	(void)state;
	size_t len, n = JIG_CHECKPOINT_MAX_BYTES - strlen("{\"files\":{},\"state\":\"\"}");
	char *big = malloc(n + 2);
	memset(big, 's', n + 1);
	big[n] = '\0';
	char *s = encode(json_pack("{s:s,s:s}", "op", "checkpoint", "state", big), &len);
	assert_non_null(s);
	free(s);
	big[n] = 's';
	big[n + 1] = '\0';
	assert_null(encode(json_pack("{s:s,s:s}", "op", "checkpoint", "state", big), &len));
	assert_non_null(strstr(why, "2097153 bytes of canonical JSON; at most 2097152"));
	free(big);
}

static void test_refusals(void **state)
{
	(void)state;
	size_t len;
	const char *bad[] = {"{\"op\":\"checkpoint\",\"other\":1}", "{\"op\":\"checkpoint\",\"files\":[]}",
			     "{\"op\":\"checkpoint\",\"files\":{\"../x\":\"y\"}}", "{\"op\":\"checkpoint\",\"files\":{\"/x\":\"y\"}}",
			     "{\"op\":\"checkpoint\",\"files\":{\"a//b\":\"y\"}}", "{\"op\":\"checkpoint\",\"files\":{\"a\":1}}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_null(encode(json_loads(bad[i], 0, NULL), &len));
		assert_true(why[0]);
	}
}

/* Saves replace the accepted one whole; the 17th is refused; publication
 * copies exactly what was accepted. */
static void test_saves_and_publish(void **state)
{
	(void)state;
	char dir[] = "/tmp/jig-ckpt-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	mkdirat(fd, "stage", 0700);
	int stage = openat(fd, "stage", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *part = NULL;
	struct jig_error e = {0};
	assert_int_equal(jig_checkpoint_publish(fd, stage, &part, &e), 0);
	assert_int_equal(json_integer_value(json_object_get(part, "save")), 0); /* none accepted */
	json_decref(part);
	struct jig_checkpoint_env env = {.rundir = fd};
	for (int i = 1; i <= JIG_CHECKPOINT_MAX_SAVES + 1; i++) {
		json_t *m = json_pack("{s:s,s:i}", "op", "checkpoint", "state", i), *reply = NULL, *ev = NULL;
		jig_checkpoint_effect(&env, m, &reply, &ev);
		assert_int_equal(json_is_true(json_object_get(reply, "ok")), i <= JIG_CHECKPOINT_MAX_SAVES);
		if (i > JIG_CHECKPOINT_MAX_SAVES)
			assert_string_equal(json_string_value(json_object_get(reply, "error")), "more than 16 saves in one Run");
		json_decref(m);
		json_decref(reply);
		json_decref(ev);
	}
	assert_int_equal(faccessat(fd, "checkpoint.next", F_OK, 0), -1); /* no replacement left over */
	assert_int_equal(jig_checkpoint_publish(fd, stage, &part, &e), 0);
	assert_int_equal(json_integer_value(json_object_get(part, "save")), 16);
	json_decref(part);
	char *buf;
	size_t len;
	struct stat st;
	assert_int_equal(jig_read_file_at(stage, "checkpoint.json", 4096, "x", &buf, &len, &st, &e), 0);
	assert_string_equal(buf, "{\"files\":{},\"format\":\"jig-checkpoint/1\",\"save\":16,\"state\":16}");
	free(buf);
	close(stage);
	close(fd);
	jig_remove_tree(AT_FDCWD, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical), cmocka_unit_test(test_files_cap), cmocka_unit_test(test_text_cap),
		cmocka_unit_test(test_size_cap),  cmocka_unit_test(test_refusals),  cmocka_unit_test(test_saves_and_publish),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
