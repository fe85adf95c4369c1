/* The per-launch policy cache's files (issue 34; seed 001 Slice 3 items
 * 11-12): a put reads back what it wrote; every failed check of an entry
 * (symlinked, hard-linked, replaced between get and recheck, foreign-owned,
 * wrong mode, tampered, oversized) deletes it and refuses; a crashed
 * writer's partial temporary file is ignored and cleaned while a live
 * writer's is left alone; concurrent writers all end with a valid entry or
 * one clean refusal. In the fixture's private /run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "session/runtime.h"
#include "util/crypto.h"
#include "util/limits.h"
#include "rt_fixture.h"

#define CACHE "/run/user/0/jig/cache"
static const char policy[] = "{\"format\":\"jig-session-policy/1\",\"tmpdir\":\"/run/user/0/jig/sessions/x/tmp\"}\n";
static char sha[JIG_SHA256_HEX], entry[200];

static int fresh(void **state)
{
	unsigned char sum[JIG_SHA256_LEN];
	jig_sha256(policy, strlen(policy), sum);
	jig_hex(sum, sizeof(sum), sha);
	snprintf(entry, sizeof(entry), CACHE "/%s.json", sha);
	return rt_fresh(state);
}

static void put_ok(struct jig_policy_cache_ent *ent)
{
	struct jig_error e = {0};
	if (jig_policy_cache_put(sha, policy, strlen(policy), ent, &e) != 0)
		fail_msg("put: %s", e.msg);
}

/* get fails with want in its one line, and the entry is gone. */
static void get_refused(const char *want)
{
	struct jig_policy_cache_ent ent;
	struct jig_error e = {0};
	char *buf = (char *)1;
	size_t len = 7;
	assert_true(jig_policy_cache_get(sha, &buf, &len, &ent, &e) < 0);
	assert_null(buf);
	assert_null(strchr(e.msg, '\n'));
	if (!strstr(e.msg, want) || !strstr(e.msg, "deleted it"))
		fail_msg("\"%s\" does not say \"%s\" and that it was deleted", e.msg, want);
	struct stat st;
	assert_int_equal(lstat(entry, &st), -1);
}

static void put_get_recheck(void **state)
{
	(void)state;
	struct jig_policy_cache_ent put, got;
	struct jig_error e = {0};
	char *buf;
	size_t len;
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &got, &e), 1); /* no entry */
	umask(0);
	put_ok(&put);
	umask(022);
	assert_string_equal(put.path, entry);
	struct stat st;
	assert_int_equal(lstat(entry, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(lstat(CACHE, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &got, &e), 0);
	assert_int_equal(len, strlen(policy));
	assert_memory_equal(buf, policy, len);
	free(buf);
	assert_int_equal(got.dev, put.dev);
	assert_int_equal(got.ino, put.ino);
	assert_int_equal(got.size, (off_t)strlen(policy));
	assert_int_equal(jig_policy_cache_recheck(&got, sha, &e), 0);
	put_ok(&put); /* a second put of the same bytes keeps the entry there */
	assert_int_equal(put.ino, got.ino);
	rt_sh("ls -A " CACHE " | grep -v json && exit 1 || true"); /* no temporary file left */
}

static void bad_arguments_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	struct jig_error e = {0};
	char *buf;
	size_t len;
	assert_true(jig_policy_cache_get("../../etc/passwd", &buf, &len, &ent, &e) < 0);
	assert_non_null(strstr(e.msg, "is not a SHA-256 in lowercase hex"));
	char upper[JIG_SHA256_HEX];
	for (size_t i = 0; i < sizeof(upper); i++)
		upper[i] = (char)(sha[i] >= 'a' && sha[i] <= 'f' ? sha[i] - 32 : sha[i]);
	assert_true(jig_policy_cache_get(upper, &buf, &len, &ent, &e) < 0);
	assert_true(jig_policy_cache_put(sha, "other bytes", 11, &ent, &e) < 0);
	assert_non_null(strstr(e.msg, "do not have the SHA-256"));
	rt_sh("chmod 0755 /run/user/0 && true");
	assert_true(jig_policy_cache_put(sha, policy, strlen(policy), &ent, &e) < 0);
	assert_non_null(strstr(e.msg, "has mode 0755, not 0700"));
	rt_sh("chmod 0700 /run/user/0 && mkdir -p -m 0700 /run/user/0/jig && mkdir -m 0750 " CACHE);
	assert_true(jig_policy_cache_get(sha, &buf, &len, &ent, &e) < 0);
	assert_string_equal(e.msg, CACHE ": not a directory of the caller's with mode 0700 (uid 0, mode 0750), refusing it");
}

static void symlinked_entry_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	put_ok(&ent);
	/* the real bytes, elsewhere, named by a link */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mv %s /run/elsewhere.json && ln -s /run/elsewhere.json %s", entry, entry);
	rt_sh(cmd);
	get_refused("is a symbolic link");
	struct stat st;
	assert_int_equal(stat("/run/elsewhere.json", &st), 0); /* the link went, not its target */
}

static void hard_linked_entry_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	put_ok(&ent);
	assert_int_equal(link(entry, "/run/second-name"), 0);
	get_refused("has 2 links, not 1 (a hard link)");
}

static void foreign_entry_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	put_ok(&ent);
	assert_int_equal(chown(entry, rt_jigtest(), rt_jigtest()), 0);
	get_refused("is owned by uid 1001, not the caller");
}

static void wrong_mode_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	put_ok(&ent);
	assert_int_equal(chmod(entry, 0644), 0);
	get_refused("has mode 0644, not 0600");
	put_ok(&ent);
	assert_int_equal(chmod(entry, 0400), 0);
	get_refused("has mode 0400, not 0600");
}

static void tampered_entry_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	put_ok(&ent);
	int fd = open(entry, O_WRONLY);
	assert_int_equal(pwrite(fd, "[", 1, 0), 1); /* same size, one byte changed */
	close(fd);
	get_refused("its content's SHA-256 is not its name (tampered)");
	/* not a regular file: a FIFO (no hang) and a directory */
	assert_int_equal(mkfifo(entry, 0600), 0);
	get_refused("is not a regular file");
	assert_int_equal(mkdir(entry, 0700), 0);
	get_refused("");
	/* oversized */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "head -c %u /dev/zero > %s && chmod 0600 %s", (unsigned)JIG_POLICY_CACHE_MAX_BYTES + 1, entry, entry);
	rt_sh(cmd);
	get_refused("more than the");
}

/* Replaced (same bytes, another inode) or changed between get and recheck. */
static void replaced_before_launch_refused(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent, got;
	struct jig_error e = {0};
	char *buf, cmd[600];
	size_t len;
	put_ok(&ent);
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &got, &e), 0);
	free(buf);
	snprintf(cmd, sizeof(cmd), "cp -p %s /run/copy && mv /run/copy %s", entry, entry);
	rt_sh(cmd);
	assert_true(jig_policy_cache_recheck(&got, sha, &e) < 0);
	assert_non_null(strstr(e.msg, "was replaced after it was checked; deleted it"));
	struct stat st;
	assert_int_equal(lstat(entry, &st), -1);
	/* changed in place */
	put_ok(&ent);
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &got, &e), 0);
	free(buf);
	int fd = open(entry, O_WRONLY);
	assert_int_equal(pwrite(fd, "[", 1, 0), 1);
	close(fd);
	assert_true(jig_policy_cache_recheck(&got, sha, &e) < 0);
	assert_non_null(strstr(e.msg, "tampered"));
	assert_int_equal(lstat(entry, &st), -1);
	/* gone */
	put_ok(&ent);
	unlink(entry);
	assert_true(jig_policy_cache_recheck(&ent, sha, &e) < 0);
	assert_non_null(strstr(e.msg, "disappeared before the launch"));
	/* mode changed */
	put_ok(&ent);
	chmod(entry, 0640);
	assert_true(jig_policy_cache_recheck(&ent, sha, &e) < 0);
	assert_non_null(strstr(e.msg, "not 0600"));
}

/* A crashed writer's partial temporary file is ignored and cleaned; a live
 * writer's (its lock held) is left alone. */
static void partial_temporary_cleaned(void **state)
{
	(void)state;
	struct jig_policy_cache_ent ent;
	struct jig_error e = {0};
	char *buf;
	size_t len;
	rt_sh("mkdir -p -m 0700 " CACHE " && chmod 0700 /run/user/0/jig && printf '{\"form' > " CACHE "/.tmp-0123456789abcdef01234567 && "
	      "printf x > " CACHE "/.tmp-live && chmod 0600 " CACHE "/.tmp-*");
	int live = open(CACHE "/.tmp-live", O_RDONLY);
	assert_int_equal(flock(live, LOCK_EX), 0);
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &ent, &e), 1);
	struct stat st;
	assert_int_equal(lstat(CACHE "/.tmp-0123456789abcdef01234567", &st), -1);
	assert_int_equal(lstat(CACHE "/.tmp-live", &st), 0);
	close(live);
	put_ok(&ent);
	assert_int_equal(lstat(CACHE "/.tmp-live", &st), -1);
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &ent, &e), 0);
	free(buf);
}

/* Eight writers and readers at once: each put ends with a valid entry or
 * one clean refusal, and the entry is valid after. */
static void concurrent_writers(void **state)
{
	(void)state;
	pid_t kids[8];
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			int refusals = 0;
			for (int i = 0; i < 40; i++) {
				struct jig_policy_cache_ent ent;
				struct jig_error e = {0};
				char *buf = NULL;
				size_t len;
				int r = jig_policy_cache_put(sha, policy, strlen(policy), &ent, &e);
				if (r < 0 && (!e.msg[0] || strchr(e.msg, '\n')))
					_exit(10);
				if (r < 0)
					refusals++, fprintf(stderr, "refused: %s\n", e.msg);
				r = jig_policy_cache_get(sha, &buf, &len, &ent, &e);
				if (r < 0 || (r == 0 && (len != strlen(policy) || memcmp(buf, policy, len))))
					_exit(11);
				free(buf);
			}
			_exit(refusals > 1 ? 12 : 0);
		}
	}
	for (int k = 0; k < 8; k++) {
		int status;
		assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	struct jig_policy_cache_ent ent;
	struct jig_error e = {0};
	char *buf;
	size_t len;
	assert_int_equal(jig_policy_cache_get(sha, &buf, &len, &ent, &e), 0);
	free(buf);
	rt_sh("n=$(ls -A " CACHE " | wc -l) && test $n -eq 1");
}

int main(void)
{
	rt_world();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(put_get_recheck, fresh),
		cmocka_unit_test_setup(bad_arguments_refused, fresh),
		cmocka_unit_test_setup(symlinked_entry_refused, fresh),
		cmocka_unit_test_setup(hard_linked_entry_refused, fresh),
		cmocka_unit_test_setup(foreign_entry_refused, fresh),
		cmocka_unit_test_setup(wrong_mode_refused, fresh),
		cmocka_unit_test_setup(tampered_entry_refused, fresh),
		cmocka_unit_test_setup(replaced_before_launch_refused, fresh),
		cmocka_unit_test_setup(partial_temporary_cleaned, fresh),
		cmocka_unit_test_setup(concurrent_writers, fresh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
