/* The tarball inspector: Nettle's SHA-512 for the integrity, libarchive's
 * bounded reader for the entries. Nothing is written anywhere. */
#include "prepare/tarball.h"

#include <archive.h>
#include <archive_entry.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
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
 * (TOP itself) or a normalised relative path. */
static int check_path(const char *p, char *top, size_t cap, const char *what, struct jig_error *e)
{
	size_t n = strcspn(p, "/");
	if (p[0] == '/' || n == 0 || n >= cap || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		return bad(e, "%s: tarball entry \"%.120s\" is not below one top directory", what, p);
	if (!top[0]) {
		memcpy(top, p, n);
		top[n] = '\0';
	} else if (strlen(top) != n || strncmp(top, p, n) != 0) {
		return bad(e, "%s: tarball entry \"%.120s\" is outside its top directory \"%s\"", what, p, top);
	}
	const char *rest = p[n] ? p + n + 1 : "";
	size_t rl = strlen(rest);
	if (rl && rest[rl - 1] == '/') /* a directory's trailing slash */
		rl--;
	char tmp[4096];
	if (rl >= sizeof(tmp))
		return bad(e, "%s: tarball entry \"%.120s\" has too long a path", what, p);
	memcpy(tmp, rest, rl);
	tmp[rl] = '\0';
	if (rl && !jig_path_is_normal_relative(tmp))
		return bad(e, "%s: tarball entry \"%.120s\" is not a normalised path (no \"..\", \".\", \"//\" or odd characters)",
			   what, p);
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
	struct archive *a = archive_read_new();
	if (!a)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, buf, len) != ARCHIVE_OK) {
		r = bad(e, "%s: not a gzip'd tar: %.200s", what, archive_error_string(a));
		goto out;
	}
	char top[256] = "";
	static char block[65536];
	for (;;) {
		struct archive_entry *ent;
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
			r = bad(e, "%s: more than %d files in the preparation", what, JIG_PREPARED_FILES_MAX);
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
		if ((r = check_path(p, top, sizeof(top), what, e)))
			goto out;
		/* The bytes as read, not as the header claims. */
		for (;;) {
			la_ssize_t n = archive_read_data(a, block, sizeof(block));
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
		}
	}
	r = 0;
out:
	archive_read_free(a);
	return r;
}
