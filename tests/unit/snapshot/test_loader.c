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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pwd.h>
#include <unistd.h>

#include "snapshot/identity.h"
#include "snapshot/install.h"
#include "snapshot/loader.h"
#include "snapshot/verify.h"
#include "util/crypto.h"
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

/* The source keeps changing while it is loaded (another process flips
 * bytes in place, over and over): every load either refuses or yields a
 * sealed memfd whose bytes are exactly the manifest's, and runs as A. */
static void test_concurrent_change(void **state)
{
	(void)state;
	struct jig_snapshot s;
	struct jig_error e = {0};
	char p[512];
	assert_int_equal(jig_snapshot_open_dir(&s, dir, &e), 0);
	const struct jig_manifest_module *mm = jig_manifest_find_module(&s.m, "testmod");
	assert_non_null(mm);
	snprintf(p, sizeof(p), "%s/modules/testmod.so", dir);
	off_t size = (off_t)mm->file->size;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int fd = open(p, O_RDWR);
		for (unsigned i = 0; fd >= 0; i++) {
			off_t at = (off_t)((i * 2654435761u) % (unsigned)size);
			unsigned char c;
			if (pread(fd, &c, 1, at) != 1)
				_exit(1);
			c ^= 0x5a;
			if (pwrite(fd, &c, 1, at) != 1)
				_exit(1);
			c ^= 0x5a;
			if (pwrite(fd, &c, 1, at) != 1)
				_exit(1);
		}
		_exit(1);
	}
	int ok = 0, refused = 0;
	for (int i = 0; i < 300; i++) {
		int fd = jig_module_verified_fd(&s, mm, &e);
		if (fd < 0) {
			assert_non_null(strstr(e.msg, "expected"));
			refused++;
			continue;
		}
		unsigned char got[JIG_SHA256_LEN];
		uint64_t n = 0;
		assert_int_equal(jig_sha256_fd(fd, &n, got), 0);
		assert_int_equal(n, mm->file->size);
		assert_memory_equal(got, mm->file->sha256, JIG_SHA256_LEN);
		assert_int_equal(write(fd, "x", 1), -1); /* sealed */
		if (ok++ < 20) {
			struct jig_module_handle h;
			assert_int_equal(jig_module_load_fd(&s, mm, fd, &h, &e), 0);
			assert_string_equal(h.desc->version, "A");
			jig_module_unload(&h);
		} else {
			close(fd);
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	print_message("concurrent change: %d loads verified, %d refused\n", ok, refused);
	jig_snapshot_close(&s);
	copy(JIG_TESTMODS "/testmod.so", p);
}

/* Issue 14: an unprivileged caller loads a module root owns and no one
 * else may write in place (no private copy: that caller cannot change
 * it); the same module is copied and sealed when root loads it. */
static int loaded_in_place(uid_t as, mode_t mode)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/modules/testmod.so", dir);
	chmod(p, mode);
	struct stat want;
	stat(p, &want);
	pid_t child = fork();
	if (child == 0) {
		if (as && setuid(as) < 0)
			_exit(90);
		struct jig_snapshot s;
		struct jig_error e = {0};
		struct jig_module_handle h;
		if (jig_snapshot_open_dir(&s, dir, &e) < 0)
			_exit(91);
		const struct jig_manifest_module *mm = jig_manifest_find_module(&s.m, "testmod");
		int fd = mm ? jig_module_verified_fd(&s, mm, &e) : -1;
		if (fd < 0)
			_exit(92);
		struct stat st;
		int in_place = fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino &&
			       fcntl(fd, F_GET_SEALS) < 0;
		if (jig_module_load_fd(&s, mm, fd, &h, &e) < 0 || strcmp(h.desc->version, "A") != 0)
			_exit(93);
		jig_module_unload(&h);
		_exit(in_place ? 0 : 1);
	}
	int st = 0;
	waitpid(child, &st, 0);
	chmod(p, 0644);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_in_place_for_unprivileged(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* needs root to own the fixture and to become another user */
	assert_int_equal(loaded_in_place(65534, 0644), 0); /* in place */
	assert_int_equal(loaded_in_place(0, 0644), 1);	   /* root: a sealed copy */
}

/* Issue 14, decision 85: with the operator's verification cache, an
 * unchanged root-owned module loaded in place and a manifest signature
 * verified before are not verified again; any change is. The child runs
 * as an unprivileged user with its own cache; its exit status says what
 * happened: 1 the signature memo answered, 2 the module's digest was
 * reused, 4 the module was hashed, 64 the module refused, 65 the snapshot
 * refused. */
static char cachedir[256];
static uid_t memo_uid; /* jigtest: an operator with a home, so an operator key (decision 191) */
static gid_t memo_gid;
static int sig_hits;
static struct jig_signature_memo inner;
static int counting_known(void *ctx, const unsigned char d[JIG_SHA256_LEN])
{
	int hit = inner.known(ctx, d);
	sig_hits += hit;
	return hit;
}

static int memo_load(const char *mode)
{
	pid_t child = fork();
	if (child == 0) {
		if (setgid(memo_gid) < 0 || setuid(memo_uid) < 0)
			_exit(90);
		setenv("XDG_CACHE_HOME", cachedir, 1);
		if (mode)
			setenv("JIG_VERIFICATION", mode, 1);
		struct jig_verifier v;
		struct jig_error e = {0};
		if (jig_verifier_init(&v, NULL, JIG_VERIFY_CACHED, &e) < 0)
			_exit(91);
		inner = jig_verifier_signature_memo(&v);
		struct jig_signature_memo memo = inner;
		memo.known = counting_known;
		struct jig_snapshot s;
		if (jig_snapshot_open_dir_memo(&s, dir, &memo, &e) < 0)
			_exit(65);
		s.verifier = &v;
		const struct jig_manifest_module *mm = jig_manifest_find_module(&s.m, "testmod");
		int fd = mm ? jig_module_verified_fd(&s, mm, &e) : -1;
		if (fd < 0)
			_exit(e.code == JIG_E_INTEGRITY ? 64 : 92);
		struct jig_module_handle h;
		if (jig_module_load_fd(&s, mm, fd, &h, &e) < 0 || strcmp(h.desc->version, "A") != 0)
			_exit(93);
		jig_module_unload(&h);
		int out = (sig_hits ? 1 : 0) | (v.reused ? 2 : 0) | (v.hashed ? 4 : 0);
		jig_verifier_finish(&v);
		jig_snapshot_close(&s);
		_exit(out);
	}
	int st = 0;
	waitpid(child, &st, 0);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void poke(const char *rel, off_t off, int flip)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	int fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	unsigned char b;
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= (unsigned char)flip;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_memo_unchanged_only(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* needs root to own the fixture and to become another user */
	/* The cache is MACed with the operator's key, found from the account's
	 * home (decision 193): the tests' unprivileged user, who has one. */
	struct passwd *pw = getpwnam("jigtest"); /* scripts/setup.sh makes it */
	assert_non_null(pw);
	memo_uid = pw->pw_uid;
	memo_gid = pw->pw_gid;
	strcpy(cachedir, "/tmp/jig-unit-cache.XXXXXX");
	assert_non_null(mkdtemp(cachedir));
	assert_int_equal(chown(cachedir, memo_uid, memo_gid), 0);
	chmod(cachedir, 0700);
	char p[512];
	snprintf(p, sizeof(p), "%s/modules/testmod.so", dir);
	chmod(p, 0644);
	usleep(50000); /* a file changed within the last 20 ms is not remembered */
	assert_int_equal(memo_load(NULL), 4);	    /* first: verified, hashed, both remembered */
	assert_int_equal(memo_load(NULL), 1 | 2);   /* then: neither verified nor hashed again */
	assert_int_equal(memo_load("fast"), 1 | 2); /* fast mode keeps the fingerprint check for modules */
	assert_int_equal(memo_load("strict"), 4);   /* strict: everything again */
	poke("modules/testmod.so", 0, 0);	    /* same bytes, new ctime */
	assert_int_equal(memo_load(NULL), 1 | 4);   /* hashed again */
	poke("modules/testmod.so", 200, 0x20);	    /* other bytes */
	assert_int_equal(memo_load(NULL), 64);	    /* refused */
	poke("modules/testmod.so", 200, 0x20);
	assert_int_equal(memo_load(NULL), 1 | 4);
	poke("manifest.json", 10, 0x01); /* a manifest edited after signing */
	assert_int_equal(memo_load(NULL), 65);
	poke("manifest.json", 10, 0x01); /* the signed bytes again: the memo answers */
	int r = memo_load(NULL);	 /* (the module's digest was stored unless it changed < 20 ms before) */
	assert_true(r == (1 | 2) || r == (1 | 4));
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cachedir);
	assert_int_equal(system(cmd), 0);
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

/* The header for a file list: its size and digest, as jig-snapshot writes. */
static char *header_for(const char *files, const char *extra)
{
	unsigned char sha[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(files, strlen(files), sha);
	jig_hex(sha, sizeof(sha), hex);
	char *out = NULL;
	assert_true(asprintf(&out,
			     "{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\","
			     "\"files_sha256\":\"%s\",\"files_size\":%zu,\"modules\":[]%s}",
			     hex, strlen(files), extra) > 0);
	return out;
}

static void expect_refused(const char *hdr, const char *files)
{
	struct jig_manifest m;
	struct jig_error e = {0};
	assert_true(jig_manifest_parse(&m, hdr, strlen(hdr), files, strlen(files), &e) < 0);
	assert_int_equal(e.code, JIG_E_INTEGRITY);
	assert_null(strchr(e.msg, '\n'));
}

static void test_manifest_rejects(void **state)
{
	(void)state;
#define H(rest) "{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\"," \
		"\"files_sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"" rest "}"
	/* Headers, with an empty file list. */
	static const char *const bad_headers[] = {
		"",
		"[]",
		"{\"format\":\"jig-snapshot-manifest/3\"}",
		"{\"format\":\"jig-snapshot-manifest/2\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files\":\"\",\"modules\":[]}",
		H(",\"files_size\":0,\"modules\":[],\"id\":\"a\""),	/* a key twice */
		H(",\"files_size\":0.5,\"modules\":[]"),
		H(",\"files_size\":1,\"modules\":[]"),			/* size differs */
		H(",\"files_size\":0,\"modules\":[],\"files\":\"\""),	/* unknown key */
		H(",\"files_size\":0,\"modules\":[]} x"),
		"{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":0,\"platform\":\"p\",\"files_sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"files_size\":0,\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"../a\",\"sequence\":1,\"platform\":\"p\",\"files_sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"files_size\":0,\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files_sha256\":\"e3b0\",\"files_size\":0,\"modules\":[]}",
		"{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\",\"files_sha256\":\"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B85X\",\"files_size\":0,\"modules\":[]}",
	};
#undef H
	for (size_t i = 0; i < sizeof(bad_headers) / sizeof(bad_headers[0]); i++)
		expect_refused(bad_headers[i], "");
	/* File lists, each pinned correctly by its header. */
	static const char *const bad_lists[] = {
		"0000000000000000000000000000000000000000000000000000000000000000 1 a",			/* no final newline */
		"0000000000000000000000000000000000000000000000000000000000000000 01 a\n",		/* leading zero */
		"0000000000000000000000000000000000000000000000000000000000000000 1  a\n",		/* two spaces */
		"0000000000000000000000000000000000000000000000000000000000000000 1 b\n0000000000000000000000000000000000000000000000000000000000000000 1 a\n", /* out of order */
		"0000000000000000000000000000000000000000000000000000000000000000 1 a\n0000000000000000000000000000000000000000000000000000000000000000 1 a\n", /* twice */
		"0000000000000000000000000000000000000000000000000000000000000000 1 a\n0000000000000000000000000000000000000000000000000000000000000000 1 a/b\n", /* a file and a directory */
		"0000000000000000000000000000000000000000000000000000000000000000 1 ../a\n",
		"0000000000000000000000000000000000000000000000000000000000000000 1 a//b\n",
		"0000000000000000000000000000000000000000000000000000000000000000 1 manifest.json\n",
		"0000000000000000000000000000000000000000000000000000000000000000 1 manifest.files\n",
		"0000000000000000000000000000000000000000000000000000000000000000 99999999999999999999 a\n", /* size overflow */
		"0A00000000000000000000000000000000000000000000000000000000000000 1 a\n",
		"00 1 a\n",										/* short digest */
		"0000000000000000000000000000000000000000000000000000000000000000 1 a\001b\n",		/* control character */
	};
	for (size_t i = 0; i < sizeof(bad_lists) / sizeof(bad_lists[0]); i++) {
		char *hdr = header_for(bad_lists[i], "");
		expect_refused(hdr, bad_lists[i]);
		free(hdr);
	}
	/* The file list, accepted: sorted lines, found by path. */
	static const char good[] = "1111111111111111111111111111111111111111111111111111111111111111 0 a\n1111111111111111111111111111111111111111111111111111111111111111 7 a.b\n1111111111111111111111111111111111111111111111111111111111111111 12 b/c\n";
	char *hdr = header_for(good, "");
	struct jig_manifest ok;
	struct jig_error oe = {0};
	assert_int_equal(jig_manifest_parse(&ok, hdr, strlen(hdr), good, strlen(good), &oe), 0);
	assert_int_equal(ok.nfiles, 3);
	assert_int_equal(jig_manifest_find_file(&ok, "b/c")->size, 12);
	assert_int_equal(jig_manifest_find_file(&ok, "a.b")->sha256[0], 0x11);
	assert_null(jig_manifest_find_file(&ok, "b"));
	jig_manifest_free(&ok);
	/* A NUL byte inside a line (the list is read by length, not as a C string). */
	static const char nul[] = "0000000000000000000000000000000000000000000000000000000000000000 1 a\0b\n";
	{
		unsigned char sha[JIG_SHA256_LEN];
		char hex[JIG_SHA256_HEX], h[512];
		jig_sha256(nul, sizeof(nul) - 1, sha);
		jig_hex(sha, sizeof(sha), hex);
		snprintf(h, sizeof(h),
			 "{\"format\":\"jig-snapshot-manifest/3\",\"id\":\"a\",\"sequence\":1,\"platform\":\"p\","
			 "\"files_sha256\":\"%s\",\"files_size\":%zu,\"modules\":[]}",
			 hex, sizeof(nul) - 1);
		struct jig_manifest m;
		struct jig_error e = {0};
		assert_true(jig_manifest_parse(&m, h, strlen(h), nul, sizeof(nul) - 1, &e) < 0);
		assert_int_equal(e.code, JIG_E_INTEGRITY);
	}
	/* A list other than the one the header pins, of the same size. */
	char other[sizeof(good)];
	memcpy(other, good, sizeof(good));
	other[0] = '2';
	expect_refused(hdr, other);
	free(hdr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_ok),
		cmocka_unit_test(test_swap_after_verify),
		cmocka_unit_test(test_concurrent_change),
		cmocka_unit_test(test_in_place_for_unprivileged),
		cmocka_unit_test(test_memo_unchanged_only),
		cmocka_unit_test(test_launch_identity),
		cmocka_unit_test(test_manifest_rejects),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
