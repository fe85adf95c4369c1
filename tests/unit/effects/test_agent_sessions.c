/* The retained-session store (host/effects/agent_sessions.c): a reference
 * is taken once, only in its own scope; expiry, the caps (the project's,
 * a Flow and route's), damaged files, histories restore would refuse and
 * an unsafe store are refused. R-A10. An entry copied to another project,
 * planted or edited is ignored: not restored, not counted (decisions
 * 230-231, R-V08). The test runs as jigtest (an operator with a home, so
 * an operator key) when started as root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "effects/agent_sessions.h"
#include "util/fileio.h"

static char dir[64];
static int statefd = -1; /* dir/.jig */

/* A project directory of the test's own under /tmp: its .jig's fd. */
static int project(char *d, size_t cap)
{
	snprintf(d, cap, "/tmp/jig-sessions.XXXXXX");
	assert_non_null(mkdtemp(d));
	int root = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(mkdirat(root, ".jig", 0700), 0);
	int fd = openat(root, ".jig", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(root);
	assert_true(fd >= 0);
	return fd;
}

static int setup(void **state)
{
	(void)state;
	statefd = project(dir, sizeof(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(statefd);
	int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_remove_tree(parent, dir + 5);
	close(parent);
	return 0;
}

static const struct jig_session_scope mine = {"caller", "ask", "aaaa"};

static json_t *history(const char *rollout)
{
	return json_pack("{s:s,s:s,s:s}", "session_id", "sid-1", "path", "2026/12/03/rollout-x-sid-1.jsonl", "rollout", rollout);
}

static int count(void)
{
	int sfd = openat(statefd, JIG_SESSIONS_DIR, O_RDONLY | O_DIRECTORY);
	if (sfd < 0) /* never created */
		return 0;
	DIR *d = fdopendir(sfd);
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_put_take_once(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1];
	struct jig_error e = {0};
	json_t *h = history("{\"a\":1}\n"), *got = NULL;
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	json_decref(h);
	assert_int_equal(strlen(ref), JIG_SESSION_REF_HEX);
	struct stat st;
	assert_int_equal(fstatat(statefd, JIG_SESSIONS_DIR, &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Another route, another identity: refused, not consumed. */
	const struct jig_session_scope other = {"caller", "ask2", "aaaa"}, moved = {"caller", "ask", "bbbb"};
	assert_true(jig_session_take(statefd, &other, ref, &got, &e) < 0);
	assert_non_null(strstr(e.msg, "not consumed"));
	assert_true(jig_session_take(statefd, &moved, ref, &got, &e) < 0);
	assert_int_equal(count(), 1);
	assert_int_equal(jig_session_take(statefd, &mine, ref, &got, &e), 0);
	assert_string_equal(json_string_value(json_object_get(got, "rollout")), "{\"a\":1}\n");
	assert_string_equal(json_string_value(json_object_get(got, "session_id")), "sid-1");
	json_decref(got);
	/* Once. */
	assert_true(jig_session_take(statefd, &mine, ref, &got, &e) < 0);
	assert_non_null(strstr(e.msg, "already used"));
	assert_int_equal(count(), 0);
	assert_true(jig_session_take(statefd, &mine, "XYZ", &got, &e) < 0);
}

static void test_cap_and_expiry(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1], first[JIG_SESSION_REF_HEX + 1];
	struct jig_error e = {0};
	json_t *h = history("x\n");
	/* The project's cap over several routes (each within its own). */
	char routes[JIG_SESSIONS_MAX / JIG_SESSIONS_SCOPE_MAX + 1][8];
	for (int i = 0; i < JIG_SESSIONS_MAX; i++) {
		int k = i / JIG_SESSIONS_SCOPE_MAX;
		snprintf(routes[k], sizeof(routes[k]), "r%d", k);
		const struct jig_session_scope sc = {"caller", routes[k], "aaaa"};
		assert_int_equal(jig_session_put(statefd, i < JIG_SESSIONS_SCOPE_MAX ? &mine : &sc, h, ref, &e), 0);
		if (i == 0)
			memcpy(first, ref, sizeof(ref));
	}
	const struct jig_session_scope fresh = {"caller", "unused", "aaaa"};
	assert_true(jig_session_put(statefd, &fresh, h, ref, &e) < 0);
	assert_non_null(strstr(e.msg, "holds 16 sessions"));
	/* The first one ages past 24 h: pruned, and there is room again. */
	int sfd = openat(statefd, JIG_SESSIONS_DIR, O_RDONLY | O_DIRECTORY);
	DIR *d = fdopendir(sfd);
	for (struct dirent *de; (de = readdir(d));)
		if (strstr(de->d_name, first)) {
			char old[96];
			snprintf(old, sizeof(old), "%lld-%s", (long long)time(NULL) - JIG_SESSION_TTL_S, first);
			assert_int_equal(renameat(sfd, de->d_name, sfd, old), 0);
		}
	closedir(d);
	json_t *got = NULL;
	assert_true(jig_session_take(statefd, &mine, first, &got, &e) < 0);
	assert_non_null(strstr(e.msg, "expired"));
	assert_int_equal(count(), JIG_SESSIONS_MAX - 1);
	assert_int_equal(jig_session_put(statefd, &fresh, h, ref, &e), 0);
	/* Over the size cap. */
	char *big = malloc(JIG_SESSION_MAX_BYTES + 2);
	memset(big, 'a', JIG_SESSION_MAX_BYTES + 1);
	big[JIG_SESSION_MAX_BYTES + 1] = '\0';
	json_t *hb = history(big);
	free(big);
	assert_true(jig_session_put(statefd, &mine, hb, ref, &e) < 0);
	json_decref(hb);
	json_decref(h);
}

static void test_scope_quota(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1], first[JIG_SESSION_REF_HEX + 1];
	struct jig_error e = {0};
	json_t *h = history("x\n"), *got = NULL;
	for (int i = 0; i < JIG_SESSIONS_SCOPE_MAX; i++) {
		assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
		if (i == 0)
			memcpy(first, ref, sizeof(ref));
	}
	/* A fifth for the same Flow and route is refused; nothing is evicted. */
	assert_true(jig_session_put(statefd, &mine, h, ref, &e) < 0);
	assert_non_null(strstr(e.msg, "flow caller, route ask holds 4 sessions"));
	assert_int_equal(count(), JIG_SESSIONS_SCOPE_MAX);
	/* Another identity of the same Flow and route shares the quota;
	 * another route or another Flow does not. */
	const struct jig_session_scope moved = {"caller", "ask", "bbbb"}, route = {"caller", "ask2", "aaaa"},
				       flow = {"other", "ask", "aaaa"};
	assert_true(jig_session_put(statefd, &moved, h, ref, &e) < 0);
	assert_int_equal(jig_session_put(statefd, &route, h, ref, &e), 0);
	assert_int_equal(jig_session_put(statefd, &flow, h, ref, &e), 0);
	/* A session taken makes room again. */
	assert_int_equal(jig_session_take(statefd, &mine, first, &got, &e), 0);
	json_decref(got);
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	json_decref(h);
}

static void test_unrestorable_refused(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1];
	struct jig_error e = {0};
	static const char *const bad[][2] = {
		{"sid-1", "../rollout-x-sid-1.jsonl"},	   {"sid-1", "a/./rollout-x-sid-1.jsonl"},
		{"sid-1", "/abs/rollout-x-sid-1.jsonl"},   {"sid-1", "a b/rollout-x-sid-1.jsonl"},
		{"sid-1", "a//rollout-x-sid-1.jsonl"},	   {"sid-1", "a/b/c/d/rollout-x-sid-1.jsonl"},
		{"sid-1", "2026/rollout-x-sid-2.jsonl"},   {"sid-1", "2026/rollout-sid-1.jsonl"},
		{"sid-1", "2026/rollout-x-sid-1.json"},	   {"../x", "2026/rollout-x-../x.jsonl"},
		{".sid", "2026/rollout-x-.sid.jsonl"},	   {"", "2026/rollout-x-.jsonl"},
		{"sid 1", "2026/rollout-x-sid 1.jsonl"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *h = json_pack("{s:s,s:s,s:s}", "session_id", bad[i][0], "path", bad[i][1], "rollout", "x\n");
		assert_true(jig_session_put(statefd, &mine, h, ref, &e) < 0);
		assert_non_null(strstr(e.msg, "jig would not restore"));
		json_decref(h);
	}
	assert_int_equal(count(), 0);
	json_t *h = json_pack("{s:s,s:s,s:s}", "session_id", "sid-1", "path", "a/b/c/rollout-x-sid-1.jsonl", "rollout", "x\n");
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	json_decref(h);
}

static void test_damaged_and_unsafe(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1];
	struct jig_error e = {0};
	json_t *h = history("line\n"), *got = NULL;
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	/* A changed byte of the history: its digest no longer matches. */
	int sfd = openat(statefd, JIG_SESSIONS_DIR, O_RDONLY | O_DIRECTORY);
	DIR *d = fdopendir(sfd);
	for (struct dirent *de; (de = readdir(d));)
		if (strstr(de->d_name, ref)) {
			int fd = openat(sfd, de->d_name, O_WRONLY | O_APPEND);
			assert_int_equal(write(fd, "x", 1), 1);
			close(fd);
		}
	closedir(d);
	assert_true(jig_session_take(statefd, &mine, ref, &got, &e) < 0);
	assert_non_null(strstr(e.msg, "damaged"));
	/* A store others could read is closed to 0700 again; a store that is
	 * a symbolic link is refused. */
	assert_int_equal(fchmodat(statefd, JIG_SESSIONS_DIR, 0755, 0), 0);
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	struct stat st;
	assert_int_equal(fstatat(statefd, JIG_SESSIONS_DIR, &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(renameat(statefd, JIG_SESSIONS_DIR, statefd, "real"), 0);
	assert_int_equal(symlinkat("real", statefd, JIG_SESSIONS_DIR), 0);
	assert_true(jig_session_put(statefd, &mine, h, ref, &e) < 0);
	assert_non_null(strstr(e.msg, "a link is never followed"));
	json_decref(h);
}

/* The name of ref's entry in the store of fd. */
static void entry_name(int fd, const char *ref, char *out, size_t cap)
{
	int sfd = openat(fd, JIG_SESSIONS_DIR, O_RDONLY | O_DIRECTORY);
	DIR *d = fdopendir(sfd);
	out[0] = '\0';
	for (struct dirent *de; (de = readdir(d));)
		if (strstr(de->d_name, ref))
			snprintf(out, cap, "%.64s", de->d_name);
	closedir(d);
	assert_true(out[0]);
}

static char *slurp(int fd, const char *name, size_t *len)
{
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_SESSIONS_DIR "/%s", name);
	char *buf = NULL;
	struct jig_error e = {0};
	assert_int_equal(jig_read_file_at(fd, rel, 1 << 20, "entry", &buf, len, NULL, &e), 0);
	return buf;
}

static void plant(int fd, const char *name, const char *data, size_t len)
{
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_SESSIONS_DIR "/%s", name);
	mkdirat(fd, JIG_SESSIONS_DIR, 0700);
	struct jig_error e = {0};
	assert_int_equal(jig_write_file_replace_at(fd, rel, data, len, 0600, &e), 0);
}

static void ignored(int fd, const char *ref)
{
	json_t *got = NULL;
	struct jig_error e = {0};
	assert_true(jig_session_take(fd, &mine, ref, &got, &e) < 0);
	assert_null(got);
	assert_null(strchr(e.msg, '\n'));
	if (!strstr(e.msg, "not restored (and not consumed): its stored entry was not made by you for this project (copied, planted or edited); it is ignored, never trusted: start a new session"))
		fail_msg("%s", e.msg);
}

/* Decisions 230-231: an entry carries the operator's MAC bound to the
 * project; one copied into another project, one edited and one planted
 * are refused with one line and not consumed, and planted ones do not
 * fill the store; the operator's own entry is restored all the same. */
static void test_copied_edited_planted_ignored(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1], name[96], other[64];
	struct jig_error e = {0};
	json_t *h = history("{\"a\":1}\n"), *got = NULL;
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	entry_name(statefd, ref, name, sizeof(name));
	size_t len;
	char *bytes = slurp(statefd, name, &len);
	/* Copied, byte for byte, into another project (cp -a, tar, a clone). */
	int copy = project(other, sizeof(other));
	plant(copy, name, bytes, len);
	ignored(copy, ref);
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_SESSIONS_DIR "/%s", name);
	assert_int_equal(faccessat(copy, rel, F_OK, AT_EACCESS), 0); /* not consumed */
	/* Edited: the session it resumes changed, everything else kept. */
	char *edited = strdup(bytes), *at = strstr(edited, "sid-1");
	assert_non_null(at);
	char name2[96];
	snprintf(name2, sizeof(name2), "%.*s-%s", (int)(strchr(name, '-') - name), name, "0123456789abcdef0123456789abcdef");
	memcpy(at, "sid-2", 5);
	plant(statefd, name2, edited, len);
	ignored(statefd, "0123456789abcdef0123456789abcdef");
	/* Renamed to another reference: the reference is in the MAC. */
	plant(statefd, name2, bytes, len);
	ignored(statefd, "0123456789abcdef0123456789abcdef");
	/* Planted, a whole store of them: none counts, none restores. */
	for (int i = 0; i < JIG_SESSIONS_MAX; i++) {
		char n[96];
		snprintf(n, sizeof(n), "%lld-%032x", (long long)time(NULL), i);
		plant(statefd, n, bytes, len);
	}
	json_t *h2 = history("y\n");
	char ref2[JIG_SESSION_REF_HEX + 1];
	assert_int_equal(jig_session_put(statefd, &mine, h2, ref2, &e), 0);
	json_decref(h2);
	char planted[JIG_SESSION_REF_HEX + 1];
	snprintf(planted, sizeof(planted), "%032x", 3);
	ignored(statefd, planted);
	/* The operator's own, in its own project: restored. */
	assert_int_equal(jig_session_take(statefd, &mine, ref, &got, &e), 0);
	assert_string_equal(json_string_value(json_object_get(got, "rollout")), "{\"a\":1}\n");
	json_decref(got);
	free(edited);
	free(bytes);
	json_decref(h);
	close(copy);
	int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_remove_tree(parent, other + 5);
	close(parent);
}

/* #193, #197: a reference exists only after the store committed it: a
 * commit that fails (the fault point between the written history and its
 * rename) leaves no reference, no session and no temporary file; the next
 * put commits normally. */
static void test_reference_only_after_commit(void **state)
{
	(void)state;
	char ref[JIG_SESSION_REF_HEX + 1];
	memset(ref, 'z', sizeof(ref) - 1);
	ref[JIG_SESSION_REF_HEX] = '\0';
	struct jig_error e = {0};
	json_t *h = history("{\"a\":1}\n");
#ifdef JIG_FAULT_POINTS
	setenv("JIG_FAULT_FAIL", "session commit", 1);
	assert_true(jig_session_put(statefd, &mine, h, ref, &e) < 0);
	unsetenv("JIG_FAULT_FAIL");
	assert_non_null(strstr(e.msg, "cannot store the session"));
	assert_string_equal(ref, "");
	int sfd = openat(statefd, JIG_SESSIONS_DIR, O_RDONLY | O_DIRECTORY);
	assert_true(sfd >= 0);
	DIR *d = fdopendir(sfd);
	int any = 0;
	for (struct dirent *de; (de = readdir(d));)
		any += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	assert_int_equal(any, 0);
#endif
	assert_int_equal(jig_session_put(statefd, &mine, h, ref, &e), 0);
	assert_int_equal(strlen(ref), JIG_SESSION_REF_HEX);
	assert_int_equal(count(), 1);
	json_decref(h);
}

int main(void)
{
	if (getuid() == 0) {
		struct passwd *pw = getpwnam("jigtest"); /* scripts/setup.sh makes it */
		if (!pw || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
			fprintf(stderr, "cannot become jigtest\n");
			return 1;
		}
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_put_take_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_only_after_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_and_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scope_quota, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unrestorable_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_and_unsafe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copied_edited_planted_ignored, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
