/* The tarball inspector: Nettle's SHA-512 for the integrity, libarchive's
 * bounded reader for the entries. Nothing is written anywhere. */
#include "prepare/tarball.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/fileio.h"

#define bad(e, ...) jig_err(e, JIG_E_INTEGRITY, __VA_ARGS__)

static int check_integrity(const void *buf, size_t len, const char *integrity, const char *what, struct jig_error *e)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
	uint8_t want[BASE64_DECODE_LENGTH(88)], got[SHA512_DIGEST_SIZE];
	size_t n = sizeof(want);
	struct base64_decode_ctx b;
	if (strncmp(integrity, "sha512-", 7) != 0)
		return bad(e, "%s: the integrity is not sha512", what);
	/* Nettle writes BASE64_DECODE_LENGTH(input) bytes whatever n says:
	 * the length is fixed before anything is decoded into want. */
	if (strlen(integrity) != 7 + 88 || strspn(integrity + 7, b64) != 88)
		return bad(e, "%s: the integrity is not sha512 base64 (\"sha512-\" and 88 characters)", what);
	base64_decode_init(&b);
	if (!base64_decode_update(&b, &n, want, strlen(integrity + 7), integrity + 7) || !base64_decode_final(&b) ||
	    n != SHA512_DIGEST_SIZE)
		return bad(e, "%s: the integrity is not sha512 base64", what);
	struct sha512_ctx h;
	sha512_init(&h);
	sha512_update(&h, len, buf);
	sha512_digest(&h, sizeof(got), got);
	if (memcmp(want, got, sizeof(got)) != 0)
		return bad(e, "%s: the tarball does not match the lock's sha512 integrity; refused", what);
	return 0;
}

/* "TOP/rest": TOP one plain name, the same for every entry; rest empty
 * (TOP itself) or a normalised relative path. full gets "TOP" or
 * "TOP/rest", without a directory's trailing slash. */
static int check_path(const char *p, char *top, size_t cap, char *full, size_t fcap, const char *what, struct jig_error *e)
{
	size_t n = strcspn(p, "/");
	if (p[0] == '/' || n == 0 || n >= cap || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		return bad(e, "%s: tarball entry \"%.120s\" is not below one top directory", what, p);
	if (!top[0]) {
		memcpy(top, p, n);
		top[n] = '\0';
		if (!jig_path_is_normal_relative(top)) {
			top[0] = '\0';
			return bad(e, "%s: tarball entry \"%.120s\": the top directory is not a plain name (no control or odd characters)",
				   what, p);
		}
	} else if (strlen(top) != n || strncmp(top, p, n) != 0) {
		return bad(e, "%s: tarball entry \"%.120s\" is outside its top directory \"%s\"", what, p, top);
	}
	const char *rest = p[n] ? p + n + 1 : "";
	size_t rl = strlen(rest);
	if (rl && rest[rl - 1] == '/') /* a directory's trailing slash */
		rl--;
	if (n + 1 + rl >= fcap)
		return bad(e, "%s: tarball entry \"%.120s\" has too long a path", what, p);
	/* "." components are dropped ("package/./dist/x" is "package/dist/x":
	 * real registry tarballs have them); the rest is any name npm can
	 * publish, refused only by the rule jig_package_path_rule names
	 * ("..", empty components, control characters, invalid UTF-8, what
	 * the file system cannot hold). */
	memcpy(full, p, n);
	size_t fl = n;
	for (size_t i = 0; i < rl;) {
		size_t c = 0;
		while (i + c < rl && rest[i + c] != '/')
			c++;
		if (!(c == 1 && rest[i] == '.')) {
			full[fl++] = '/';
			memcpy(full + fl, rest + i, c);
			fl += c;
		}
		i += c + 1;
	}
	full[fl] = '\0';
	rl = fl > n ? fl - n - 1 : 0;
	const char *rule = rl ? jig_package_path_rule(full + n + 1) : NULL;
	if (rule)
		return bad(e, "%s: tarball entry \"%.120s\": its path %s", what, p, rule);
	return 0;
}

#define BLOCK 65536

/* The tar reader pulls the decompressed stream through pull(), so every
 * byte it sees — headers, padding and pax records too — is counted, even
 * inside one archive_read_next_header() call: a gzip bomb stops at
 * JIG_TARBALL_UNPACKED_MAX instead of spinning. */
struct unpacked {
	struct archive *gz; /* the gzip stream, read as one raw entry */
	char *buf;
	uint64_t total;
};

static la_ssize_t pull(struct archive *tar, void *arg, const void **out)
{
	struct unpacked *u = arg;
	la_ssize_t n = archive_read_data(u->gz, u->buf, BLOCK);
	if (n < 0) {
		const char *why = archive_error_string(u->gz);
		archive_set_error(tar, EIO, "%s", why ? why : "gzip error");
		return -1;
	}
	u->total += (uint64_t)n;
	if (u->total > JIG_TARBALL_UNPACKED_MAX) {
		archive_set_error(tar, EFBIG, "it unpacks to more than %u bytes (headers included)", JIG_TARBALL_UNPACKED_MAX);
		return -1;
	}
	*out = u->buf;
	return n;
}

/* Entries seen, for duplicates and file/directory conflicts. */
struct seen {
	char *path;
	bool dir;
	unsigned perm;
	uint8_t sha256[SHA256_DIGEST_SIZE]; /* a file's content */
};

/* Byte order with '/' lowest: everything below "a/" sorts right after
 * "a", before "a-b" or "a.js". */
static int seen_cmp(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)((const struct seen *)x)->path;
	const unsigned char *b = (const unsigned char *)((const struct seen *)y)->path;
	for (;; a++, b++) {
		unsigned ca = *a == '/' ? 1 : *a, cb = *b == '/' ? 1 : *b;
		if (ca != cb || !ca)
			return (int)ca - (int)cb;
	}
}

/* No path twice with different meanings (a file and a directory, or two
 * contents or modes), and no entry below a file: an installer would
 * overwrite, or fail halfway, or follow what the first entry left. The
 * very same entry twice (real tarballs carry "./x" beside "x") installs
 * one way whatever the order, and is accepted. */
static int check_unique(struct seen *s, size_t n, const char *what, struct jig_error *e)
{
	qsort(s, n, sizeof(*s), seen_cmp);
	for (size_t i = 0; i + 1 < n; i++) {
		size_t l = strlen(s[i].path);
		if (strcmp(s[i].path, s[i + 1].path) == 0 &&
		    (s[i].dir != s[i + 1].dir || s[i].perm != s[i + 1].perm ||
		     (!s[i].dir && memcmp(s[i].sha256, s[i + 1].sha256, sizeof(s[i].sha256)) != 0)))
			return bad(e, "%s: tarball entry \"%.120s\" appears twice, differently", what, s[i].path);
		if (!s[i].dir && strncmp(s[i].path, s[i + 1].path, l) == 0 && s[i + 1].path[l] == '/')
			return bad(e, "%s: tarball entry \"%.120s\" is below \"%.120s\", which is a file", what, s[i + 1].path,
				   s[i].path);
	}
	return 0;
}

int jig_tarball_inspect(const void *buf, size_t len, const char *integrity, const char *what,
			struct jig_tarball_budget *budget, struct jig_error *e)
{
	if (len > JIG_TARBALL_MAX)
		return bad(e, "%s: the tarball is %zu bytes, over %u", what, len, JIG_TARBALL_MAX);
	int r = check_integrity(buf, len, integrity, what, e);
	if (r)
		return r;
	struct unpacked u = {archive_read_new(), malloc(2 * BLOCK), 0};
	struct archive *a = archive_read_new();
	struct seen *seen = NULL;
	size_t n_seen = 0, cap_seen = 0;
	struct archive_entry *ent;
	if (!u.gz || !u.buf || !a) {
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		goto out;
	}
	archive_read_support_filter_gzip(u.gz);
	archive_read_support_format_raw(u.gz);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(u.gz, buf, len) != ARCHIVE_OK || archive_read_next_header(u.gz, &ent) != ARCHIVE_OK) {
		r = bad(e, "%s: not a gzip'd tar: %.200s", what, archive_error_string(u.gz));
		goto out;
	}
	if (archive_read_open(a, &u, NULL, pull, NULL) != ARCHIVE_OK) {
		r = bad(e, "%s: not a gzip'd tar: %.200s", what, archive_error_string(a));
		goto out;
	}
	char top[256] = "", full[4096 + 256 + 2];
	char *block = u.buf + BLOCK;
	for (;;) {
		int s = archive_read_next_header(a, &ent);
		if (s == ARCHIVE_EOF)
			break;
		if (s != ARCHIVE_OK) {
			r = bad(e, "%s: unreadable tarball: %.200s", what, archive_error_string(a));
			goto out;
		}
		const char *p = archive_entry_pathname(ent);
		if (!p) {
			r = bad(e, "%s: a tarball entry without a usable name", what);
			goto out;
		}
		if (budget->files == 0) {
			r = bad(e,
				"%s: its tarball takes the preparation to more than %d files (the entries of all the Flow's dependency tarballs together, directories included, are what one preparation may install); depend on fewer or smaller packages",
				what, JIG_PREPARED_FILES_MAX);
			goto out;
		}
		budget->files--;
		mode_t type = archive_entry_filetype(ent);
		if (archive_entry_hardlink(ent) || type == AE_IFLNK) {
			r = bad(e, "%s: tarball entry \"%.120s\" is a link; packages are plain files and directories", what, p);
			goto out;
		}
		if (type != AE_IFREG && type != AE_IFDIR) {
			r = bad(e, "%s: tarball entry \"%.120s\" is a device, FIFO or socket; refused", what, p);
			goto out;
		}
		/* Only the permission bits matter to a package; npm never
		 * publishes the others. */
		if (archive_entry_perm(ent) & 07000) {
			r = bad(e, "%s: tarball entry \"%.120s\" is setuid, setgid or sticky (mode %04o); refused", what, p,
				(unsigned)archive_entry_perm(ent));
			goto out;
		}
		if ((r = check_path(p, top, sizeof(top), full, sizeof(full), what, e)))
			goto out;
		if (type == AE_IFREG && !strchr(full, '/')) {
			r = bad(e, "%s: tarball entry \"%.120s\" is a file, not the top directory", what, p);
			goto out;
		}
		if (n_seen == cap_seen) {
			struct seen *more = realloc(seen, (cap_seen = cap_seen ? 2 * cap_seen : 64) * sizeof(*seen));
			if (!more) {
				r = jig_err(e, JIG_E_INTERNAL, "out of memory");
				goto out;
			}
			seen = more;
		}
		if (!(seen[n_seen].path = strdup(full))) {
			r = jig_err(e, JIG_E_INTERNAL, "out of memory");
			goto out;
		}
		seen[n_seen].dir = type == AE_IFDIR;
		seen[n_seen].perm = type == AE_IFDIR ? 0 : (unsigned)archive_entry_perm(ent);
		struct seen *cur = &seen[n_seen++];
		struct sha256_ctx h;
		sha256_init(&h);
		/* The bytes as read, not as the header claims. */
		for (;;) {
			la_ssize_t n = archive_read_data(a, block, BLOCK);
			if (n == 0)
				break;
			if (n < 0) {
				r = bad(e, "%s: unreadable tarball entry \"%.120s\": %.200s", what, p, archive_error_string(a));
				goto out;
			}
			if ((uint64_t)n > budget->bytes) {
				r = bad(e, "%s: tarball entry \"%.120s\" takes the preparation over %u bytes", what, p,
					JIG_PREPARED_BYTES_MAX);
				goto out;
			}
			budget->bytes -= (uint64_t)n;
			sha256_update(&h, (size_t)n, (const uint8_t *)block);
		}
		sha256_digest(&h, sizeof(cur->sha256), cur->sha256);
	}
	r = check_unique(seen, n_seen, what, e);
out:
	for (size_t i = 0; i < n_seen; i++)
		free(seen[i].path);
	free(seen);
	if (a)
		archive_read_free(a);
	if (u.gz)
		archive_read_free(u.gz);
	free(u.buf);
	return r;
}
