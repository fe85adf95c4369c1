/* The tarball inspector (host/prepare/tarball.c) against archives this
 * test writes with libarchive: a good package, and each hostile shape —
 * "..", absolute paths, links, devices, FIFOs, a 40 MiB file, 5,000 files,
 * two top directories, duplicates, entries below a file, setuid bits, a
 * header bomb, a wrong or overlong integrity, not a tarball. Issue 16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "prepare/tarball.h"
#include "util/fileio.h"

struct tgz {
	struct archive *a;
	char *buf;
	size_t cap, used;
};

static void tgz_open(struct tgz *t, size_t cap)
{
	t->buf = malloc(cap);
	t->cap = cap;
	t->used = 0;
	t->a = archive_write_new();
	archive_write_add_filter_gzip(t->a);
	archive_write_set_format_pax_restricted(t->a);
	archive_write_set_bytes_in_last_block(t->a, 1);
	assert_int_equal(archive_write_open_memory(t->a, t->buf, t->cap, &t->used), ARCHIVE_OK);
}

/* type: AE_IFREG, AE_IFDIR, AE_IFLNK (link: target), AE_IFCHR, AE_IFIFO;
 * hardlink: a hard link to link. */
static void add_perm(struct tgz *t, const char *path, unsigned type, unsigned perm, size_t size, const char *link,
		     int hardlink)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_size(e, type == AE_IFREG && !hardlink ? (la_int64_t)size : 0);
	if (type == AE_IFLNK)
		archive_entry_set_symlink(e, link);
	if (hardlink)
		archive_entry_set_hardlink(e, link);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(e, makedev(1, 3));
	/* A warning only: a name that is not ASCII (or not UTF-8) cannot be
	 * translated in the C locale and is written as its bytes. */
	int w = archive_write_header(t->a, e);
	assert_true(w == ARCHIVE_OK || w == ARCHIVE_WARN);
	static char zeros[65536];
	for (size_t off = 0; type == AE_IFREG && !hardlink && off < size; off += sizeof(zeros)) {
		size_t n = size - off < sizeof(zeros) ? size - off : sizeof(zeros);
		assert_int_equal(archive_write_data(t->a, zeros, n), (la_ssize_t)n);
	}
	archive_entry_free(e);
}
static void add(struct tgz *t, const char *path, unsigned type, size_t size, const char *link, int hardlink)
{
	add_perm(t, path, type, 0644, size, link, hardlink);
}

static void tgz_close(struct tgz *t, char integrity[128])
{
	assert_int_equal(archive_write_close(t->a), ARCHIVE_OK);
	archive_write_free(t->a);
	uint8_t d[SHA512_DIGEST_SIZE];
	struct sha512_ctx h;
	sha512_init(&h);
	sha512_update(&h, t->used, (const uint8_t *)t->buf);
	sha512_digest(&h, sizeof(d), d);
	strcpy(integrity, "sha512-");
	base64_encode_raw((char *)integrity + 7, sizeof(d), d);
	integrity[7 + BASE64_ENCODE_RAW_LENGTH(sizeof(d))] = '\0';
}

static int inspect(struct tgz *t, const char *integrity, struct jig_tarball_budget *b, struct jig_error *e)
{
	return jig_tarball_inspect(t->buf, t->used, integrity, "pkg@1.0.0", b, e);
}

static const char *refusal(void (*build)(struct tgz *))
{
	static struct jig_error e;
	struct tgz t;
	char integ[128];
	struct jig_tarball_budget b = {JIG_PREPARED_FILES_MAX, JIG_PREPARED_BYTES_MAX};
	tgz_open(&t, 24u << 20);
	build(&t);
	tgz_close(&t, integ);
	memset(&e, 0, sizeof(e));
	int r = inspect(&t, integ, &b, &e);
	free(t.buf);
	if (r == 0)
		return NULL;
	assert_int_equal(e.code, JIG_E_INTEGRITY);
	assert_null(strchr(e.msg, '\n'));
	return e.msg;
}

static void good_entries(struct tgz *t)
{
	add(t, "package", AE_IFDIR, 0, NULL, 0);
	add(t, "package/package.json", AE_IFREG, 100, NULL, 0);
	add(t, "package/lib/index.js", AE_IFREG, 1000, NULL, 0);
}
static void dotdot(struct tgz *t) { add(t, "package/../evil.js", AE_IFREG, 1, NULL, 0); }
static void dotdot_top(struct tgz *t) { add(t, "../evil.js", AE_IFREG, 1, NULL, 0); }
static void absolute(struct tgz *t) { add(t, "/etc/evil", AE_IFREG, 1, NULL, 0); }
static void symlink_out(struct tgz *t) { add(t, "package/bin/x", AE_IFLNK, 0, "/etc/passwd", 0); }
static void symlink_in(struct tgz *t) { add(t, "package/x", AE_IFLNK, 0, "index.js", 0); }
static void hardlink(struct tgz *t)
{
	add(t, "package/a", AE_IFREG, 1, NULL, 0);
	add(t, "package/b", AE_IFREG, 0, "package/a", 1);
}
static void device(struct tgz *t) { add(t, "package/null", AE_IFCHR, 0, NULL, 0); }
static void fifo(struct tgz *t) { add(t, "package/fifo", AE_IFIFO, 0, NULL, 0); }
static void big(struct tgz *t) { add(t, "package/big.bin", AE_IFREG, 40u << 20, NULL, 0); }
static void at_bytes(struct tgz *t) { add(t, "package/big.bin", AE_IFREG, JIG_PREPARED_BYTES_MAX, NULL, 0); }
static void many(struct tgz *t)
{
	char p[64];
	for (int i = 0; i < 5000; i++) {
		snprintf(p, sizeof(p), "package/f%d.js", i);
		add(t, p, AE_IFREG, 0, NULL, 0);
	}
}
static void at_files(struct tgz *t)
{
	char p[64];
	for (int i = 0; i < JIG_PREPARED_FILES_MAX; i++) {
		snprintf(p, sizeof(p), "package/f%d.js", i);
		add(t, p, AE_IFREG, 0, NULL, 0);
	}
}
static void two_tops(struct tgz *t)
{
	add(t, "package/a.js", AE_IFREG, 1, NULL, 0);
	add(t, "other/b.js", AE_IFREG, 1, NULL, 0);
}
static void odd_name(struct tgz *t) { add(t, "package/a\nb", AE_IFREG, 1, NULL, 0); }
static void odd_top(struct tgz *t) { add(t, "pack\033age/a.js", AE_IFREG, 1, NULL, 0); }
static void top_file(struct tgz *t) { add(t, "package", AE_IFREG, 1, NULL, 0); }
static void twice(struct tgz *t)
{
	add(t, "package/a.js", AE_IFREG, 1, NULL, 0);
	add(t, "package/b.js", AE_IFREG, 1, NULL, 0);
	add(t, "package/a.js", AE_IFREG, 2, NULL, 0);
}
/* Real registry tarballs (csv-parse 5.5.6) carry "package/./x" beside
 * "package/x": the same entry twice is accepted; twice differently is not. */
static void dot_same(struct tgz *t)
{
	add(t, "package/./dist/a.js", AE_IFREG, 3, NULL, 0);
	add(t, "package/dist/a.js", AE_IFREG, 3, NULL, 0);
}
static void dot_differs(struct tgz *t)
{
	add(t, "package/./dist/a.js", AE_IFREG, 3, NULL, 0);
	add(t, "package/dist/a.js", AE_IFREG, 4, NULL, 0);
}
static void twice_mode(struct tgz *t)
{
	add_perm(t, "package/a.js", AE_IFREG, 0644, 1, NULL, 0);
	add_perm(t, "package/a.js", AE_IFREG, 0755, 1, NULL, 0);
}
static void dot_dotdot(struct tgz *t) { add(t, "package/./../evil.js", AE_IFREG, 1, NULL, 0); }
static void file_and_dir(struct tgz *t)
{
	add(t, "package/lib/", AE_IFDIR, 0, NULL, 0);
	add(t, "package/lib", AE_IFREG, 1, NULL, 0);
}
static void below_file(struct tgz *t)
{
	add(t, "package/lib", AE_IFREG, 1, NULL, 0);
	add(t, "package/lib-x.js", AE_IFREG, 1, NULL, 0);
	add(t, "package/lib/evil.js", AE_IFREG, 1, NULL, 0);
}
static void below_file_first(struct tgz *t)
{
	add(t, "package/lib/a/b.js", AE_IFREG, 1, NULL, 0);
	add(t, "package/lib", AE_IFREG, 1, NULL, 0);
}
static void set_uid(struct tgz *t) { add_perm(t, "package/x", AE_IFREG, 04755, 1, NULL, 0); }
static void set_gid(struct tgz *t) { add_perm(t, "package/x", AE_IFREG, 02755, 1, NULL, 0); }
static void sticky(struct tgz *t) { add_perm(t, "package/d", AE_IFDIR, 01777, 0, NULL, 0); }
static void odd_perms(struct tgz *t)
{
	add_perm(t, "package/", AE_IFDIR, 0777, 0, NULL, 0);
	add_perm(t, "package/x", AE_IFREG, 0600, 1, NULL, 0);
	add_perm(t, "package/y", AE_IFREG, 0777, 1, NULL, 0);
}

/* ustar header block h for name, typeflag and size. */
static void ustar(char h[512], const char *name, char type, size_t size)
{
	memset(h, 0, 512);
	snprintf(h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf(h + 124, 12, "%011zo", size);
	memcpy(h + 136, "00000000000", 12);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < 512; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
}

/* A gzip'd tar of 80 entries, each after a pax global header ('g') of
 * 1 MiB less a block of zeros that the tar reader skips: 80 MiB
 * through the decompressor, nearly all of it headers and padding, under
 * every entry and content budget. */
static void header_bomb(struct tgz *t, char integrity[128])
{
	const size_t gsize = (1u << 20) - 512;
	char h[512];
	static char zeros[65536];
	t->cap = 4u << 20;
	t->buf = malloc(t->cap);
	t->used = 0;
	t->a = archive_write_new();
	archive_write_add_filter_gzip(t->a);
	archive_write_set_format_raw(t->a);
	archive_write_set_bytes_in_last_block(t->a, 1);
	assert_int_equal(archive_write_open_memory(t->a, t->buf, t->cap, &t->used), ARCHIVE_OK);
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, "raw");
	archive_entry_set_filetype(e, AE_IFREG);
	assert_int_equal(archive_write_header(t->a, e), ARCHIVE_OK);
	archive_entry_free(e);
	for (int i = 0; i < 80; i++) {
		char name[32];
		ustar(h, "pax_global_header", 'g', gsize);
		assert_int_equal(archive_write_data(t->a, h, 512), 512);
		for (size_t off = 0; off < gsize; off += sizeof(zeros)) {
			size_t n = gsize - off < sizeof(zeros) ? gsize - off : sizeof(zeros);
			assert_int_equal(archive_write_data(t->a, zeros, n), (la_ssize_t)n);
		}
		snprintf(name, sizeof(name), "package/f%d", i);
		ustar(h, name, '0', 0);
		assert_int_equal(archive_write_data(t->a, h, 512), 512);
	}
	assert_int_equal(archive_write_data(t->a, zeros, 1024), 1024);
	tgz_close(t, integrity);
}

static void test_good_and_budget(void **state)
{
	(void)state;
	struct tgz t;
	char integ[128];
	struct jig_tarball_budget b = {JIG_PREPARED_FILES_MAX, JIG_PREPARED_BYTES_MAX};
	struct jig_error e = {0};
	tgz_open(&t, 1 << 20);
	good_entries(&t);
	tgz_close(&t, integ);
	assert_int_equal(inspect(&t, integ, &b, &e), 0);
	assert_int_equal(b.files, JIG_PREPARED_FILES_MAX - 3);
	assert_int_equal(b.bytes, JIG_PREPARED_BYTES_MAX - 1100);
	/* The budget is the preparation's: a second package takes from it. */
	b.files = 2;
	assert_true(inspect(&t, integ, &b, &e) < 0);
	/* The message says what was counted and what to do (issue 31). */
	assert_non_null(strstr(e.msg, "takes the preparation to more than 4096 files (the entries of all the Flow's dependency tarballs together"));
	assert_non_null(strstr(e.msg, "depend on fewer or smaller packages"));
	/* Another integrity, or a changed byte: refused before it is read. */
	b = (struct jig_tarball_budget){JIG_PREPARED_FILES_MAX, JIG_PREPARED_BYTES_MAX};
	char other[128];
	strcpy(other, integ);
	other[10] = other[10] == 'A' ? 'B' : 'A';
	assert_true(inspect(&t, other, &b, &e) < 0);
	assert_non_null(strstr(e.msg, "does not match the lock's sha512 integrity"));
	assert_true(inspect(&t, "sha1-abc", &b, &e) < 0);
	/* An integrity of any other length is refused before it is decoded
	 * (a long one used to overflow the decoded digest's buffer). */
	char *lng = malloc(7 + 100000 + 1);
	strcpy(lng, "sha512-");
	memset(lng + 7, 'A', 100000);
	lng[7 + 100000] = '\0';
	assert_true(inspect(&t, lng, &b, &e) < 0);
	assert_non_null(strstr(e.msg, "is not sha512 base64"));
	lng[7 + 92] = '\0'; /* 4 characters over */
	assert_true(inspect(&t, lng, &b, &e) < 0);
	assert_non_null(strstr(e.msg, "is not sha512 base64"));
	free(lng);
	strcpy(other, integ);
	other[20] = '!';
	assert_true(inspect(&t, other, &b, &e) < 0);
	assert_non_null(strstr(e.msg, "is not sha512 base64"));
	assert_true(jig_tarball_inspect("not a tarball", 13, integ, "x", &b, &e) < 0);
	free(t.buf);
}

static void test_hostile(void **state)
{
	(void)state;
	assert_non_null(strstr(refusal(dotdot), "its path has a \"..\" component"));
	assert_non_null(strstr(refusal(dotdot_top), "is not below one top directory"));
	assert_non_null(strstr(refusal(absolute), "is not below one top directory"));
	assert_non_null(strstr(refusal(symlink_out), "is a link"));
	assert_non_null(strstr(refusal(symlink_in), "is a link"));
	assert_non_null(strstr(refusal(hardlink), "is a link"));
	assert_non_null(strstr(refusal(device), "device"));
	assert_non_null(strstr(refusal(fifo), "FIFO"));
	assert_non_null(strstr(refusal(big), "over 33554432 bytes"));
	assert_non_null(strstr(refusal(many), "more than 4096 files"));
	assert_non_null(strstr(refusal(two_tops), "outside its top directory"));
	assert_non_null(strstr(refusal(odd_name), "its path has a control character"));
	assert_non_null(strstr(refusal(odd_top), "the top directory is not a plain name"));
	assert_non_null(strstr(refusal(top_file), "is a file, not the top directory"));
	assert_non_null(strstr(refusal(twice), "\"package/a.js\" appears twice"));
	assert_non_null(strstr(refusal(file_and_dir), "\"package/lib\" appears twice"));
	assert_null(refusal(dot_same));
	assert_non_null(strstr(refusal(dot_differs), "\"package/dist/a.js\" appears twice, differently"));
	assert_non_null(strstr(refusal(twice_mode), "\"package/a.js\" appears twice, differently"));
	assert_non_null(strstr(refusal(dot_dotdot), "its path has a \"..\" component"));
	assert_non_null(strstr(refusal(below_file), "\"package/lib/evil.js\" is below \"package/lib\", which is a file"));
	assert_non_null(strstr(refusal(below_file_first), "\"package/lib/a/b.js\" is below \"package/lib\", which is a file"));
	assert_non_null(strstr(refusal(set_uid), "is setuid, setgid or sticky (mode 4755)"));
	assert_non_null(strstr(refusal(set_gid), "is setuid, setgid or sticky"));
	assert_non_null(strstr(refusal(sticky), "is setuid, setgid or sticky"));
	assert_null(refusal(odd_perms));
	/* At the caps: accepted. */
	assert_null(refusal(at_bytes));
	assert_null(refusal(at_files));
}

/* Every name npm packages legally ship is accepted (issue 46, decision
 * 261): brackets, spaces, "#", "~", commas, non-ASCII UTF-8, a path of
 * 300 bytes (pax); the refused shapes name the rule that fired. */
static char long_path[400];
static void legal_names(struct tgz *t)
{
	static const char *const names[] = {"package/pages/[id].js", "package/lib/a b.js", "package/array/#/index.js",
					    "package/lib/~util.js", "package/lib/a,b.js", "package/lib/\xc3\xa9.js",
					    "package/lib/\xe2\x82\xac (1) {x} 'q' & $y=z!.js", NULL};
	add(t, "package", AE_IFDIR, 0, NULL, 0);
	for (size_t i = 0; names[i]; i++)
		add(t, names[i], AE_IFREG, 10, NULL, 0);
	/* "package/" and 292 bytes below it: over ustar's 255, within pax */
	strcpy(long_path, "package/long");
	while (strlen(long_path) < 280)
		strcat(long_path, "/abcdefghijklmnopqrstuvwxyz0123456789");
	long_path[299] = '\0';
	strcat(long_path, "x");
	assert_int_equal(strlen(long_path), 300);
	add(t, long_path, AE_IFREG, 10, NULL, 0);
}
static void bad_utf8(struct tgz *t) { add(t, "package/lib/\xff.js", AE_IFREG, 1, NULL, 0); }
static void overlong_utf8(struct tgz *t) { add(t, "package/lib/\xc0\xaf.js", AE_IFREG, 1, NULL, 0); }
static void c1_control(struct tgz *t) { add(t, "package/lib/a\xc2\x85.js", AE_IFREG, 1, NULL, 0); }
static void del_control(struct tgz *t) { add(t, "package/lib/a\x7f.js", AE_IFREG, 1, NULL, 0); }
static void empty_component(struct tgz *t) { add(t, "package/lib//a.js", AE_IFREG, 1, NULL, 0); }
static void long_component(struct tgz *t)
{
	char p[300] = "package/";
	memset(p + 8, 'a', 256);
	p[8 + 256] = '\0';
	add(t, p, AE_IFREG, 1, NULL, 0);
}
static void long_total(struct tgz *t)
{
	static char p[JIG_PACKAGE_PATH_MAX + 300];
	strcpy(p, "package");
	while (strlen(p) <= JIG_PACKAGE_PATH_MAX + 8)
		strcat(p, "/abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789");
	add(t, p, AE_IFREG, 1, NULL, 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_null(refusal(legal_names));
	assert_non_null(strstr(refusal(bad_utf8), "its path is not valid UTF-8"));
	assert_non_null(strstr(refusal(overlong_utf8), "its path is not valid UTF-8"));
	assert_non_null(strstr(refusal(c1_control), "its path has a control character"));
	assert_non_null(strstr(refusal(del_control), "its path has a control character"));
	assert_non_null(strstr(refusal(empty_component), "its path has an empty component"));
	assert_non_null(strstr(refusal(long_component), "its path has a component over 255 bytes"));
	assert_non_null(strstr(refusal(long_total), "its path is over 3072 bytes"));
	/* The predicate itself: the package rule, and the narrower one a
	 * Flow's input, output and entry names keep. */
	assert_null(jig_package_path_rule("pages/[id].js"));
	assert_null(jig_package_path_rule("lib/\xc3\xa9.js"));
	assert_string_equal(jig_package_path_rule(""), "is empty");
	assert_non_null(strstr(jig_package_path_rule("/etc/passwd"), "is absolute"));
	assert_non_null(strstr(jig_package_path_rule("a/./b"), "has a \".\" component"));
	assert_non_null(strstr(jig_package_path_rule("a/../b"), "has a \"..\" component"));
	assert_non_null(strstr(jig_package_path_rule("a/"), "has an empty component"));
	assert_non_null(strstr(jig_package_path_rule("a\tb"), "has a control character"));
	assert_non_null(strstr(jig_package_path_rule("a\xed\xa0\x80"), "is not valid UTF-8")); /* a surrogate */
	assert_non_null(strstr(jig_package_path_rule("a\xf4\x90\x80\x80"), "is not valid UTF-8")); /* over U+10FFFF */
	assert_non_null(strstr(jig_package_path_rule("a\xe2\x82"), "is not valid UTF-8")); /* cut short */
	assert_false(jig_path_is_normal_relative("pages/[id].js"));
	assert_false(jig_path_is_normal_relative("lib/a b.js"));
}

static void test_header_bomb(void **state)
{
	(void)state;
	struct tgz t;
	char integ[128];
	/* Even with an unlimited content budget: the cap is on every byte
	 * the decompressor hands the tar reader. */
	struct jig_tarball_budget b = {JIG_PREPARED_FILES_MAX, UINT64_MAX};
	struct jig_error e = {0};
	header_bomb(&t, integ);
	assert_true(t.used < JIG_TARBALL_MAX);
	assert_true(inspect(&t, integ, &b, &e) < 0);
	assert_non_null(strstr(e.msg, "unpacks to more than 67108864 bytes"));
	free(t.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_and_budget),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_header_bomb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
