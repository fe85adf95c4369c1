/* Packs of the Package/0 store: see pack.h and docs/store.md. */
#include "flow/pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/limits.h"

static bool hex64(const char *s, size_t n)
{
	if (n != JIG_SHA256_HEX - 1)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* "<hex>.<ext>" of a directory entry: hex filled. */
static bool named(const char *name, const char *ext, char hex[JIG_SHA256_HEX])
{
	size_t l = strlen(name), el = strlen(ext);
	if (l != JIG_SHA256_HEX - 1 + 1 + el || name[JIG_SHA256_HEX - 1] != '.' || strcmp(name + JIG_SHA256_HEX, ext) != 0 ||
	    !hex64(name, JIG_SHA256_HEX - 1))
		return false;
	memcpy(hex, name, JIG_SHA256_HEX - 1);
	hex[JIG_SHA256_HEX - 1] = '\0';
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct jig_pack_entry *x = a, *y = b;
	int c = strcmp(x->sha, y->sha);
	return c ? c : x->pack < y->pack ? -1 : x->pack > y->pack;
}

/* One index: its content checked against its name, then parsed; its
 * entries appended to ps. 0, or 1 when it is not visible. */
static int load_index(int dirfd, const char *name, const char *idx, struct jig_packs *ps)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored = {0};
	if (jig_read_file_at(dirfd, name, JIG_PACK_INDEX_MAX, name, &buf, &len, &st, &ignored) < 0)
		return 1;
	char hex[JIG_SHA256_HEX];
	jig_sha256_hex(buf, len, hex);
	if (strcmp(hex, idx) != 0)
		return 1;
	char pack[JIG_SHA256_HEX];
	uint64_t size, count;
	int used = 0;
	if (sscanf(buf, JIG_PACK_INDEX_FORMAT "\npack %64[0-9a-f] %" SCNu64 " %" SCNu64 "\n%n", pack, &size, &count, &used) != 3 ||
	    used == 0 || strlen(pack) != JIG_SHA256_HEX - 1 || count > len / 68)
		return 1;
	char pname[80];
	snprintf(pname, sizeof(pname), "%s.pack", pack);
	if (fstatat(dirfd, pname, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size)
		return 1; /* its pack is not (all) there: not visible */
	struct jig_pack_entry *v = realloc(ps->v, (ps->n + count + 1) * sizeof(*v));
	struct jig_pack_file *pf = realloc(ps->pack, (ps->n_pack + 1) * sizeof(*pf));
	if (v)
		ps->v = v;
	if (pf)
		ps->pack = pf;
	if (!v || !pf)
		return -1;
	const char *s = buf + used, *end = buf + len;
	char prev[JIG_SHA256_HEX] = "";
	for (uint64_t i = 0; i < count; i++) {
		struct jig_pack_entry *x = &ps->v[ps->n + i];
		int n = 0;
		if (end - s < 68 || !hex64(s, JIG_SHA256_HEX - 1) || s[JIG_SHA256_HEX - 1] != ' ')
			return 1;
		memcpy(x->sha, s, JIG_SHA256_HEX - 1);
		x->sha[JIG_SHA256_HEX - 1] = '\0';
		if (sscanf(s + JIG_SHA256_HEX, "%" SCNu64 " %" SCNu64 "\n%n", &x->off, &x->len, &n) != 2 || n == 0 ||
		    strcmp(prev, x->sha) >= 0 || x->len > JIG_ARTIFACT_MAX_BYTES || x->off > size || x->len > size - x->off)
			return 1;
		memcpy(prev, x->sha, sizeof(prev));
		x->pack = ps->n_pack;
		s += JIG_SHA256_HEX + n;
	}
	if (s != end)
		return 1;
	pf = &ps->pack[ps->n_pack++];
	*pf = (struct jig_pack_file){.size = size, .idx_size = len};
	memcpy(pf->sha, pack, sizeof(pf->sha));
	memcpy(pf->idx, idx, sizeof(pf->idx));
	ps->n += count;
	return 0;
}

int jig_packs_load(int statefd, struct jig_packs *ps, struct jig_error *e)
{
	*ps = (struct jig_packs){0};
	jig_autoclose int fd = openat(statefd, JIG_PACKS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no packs yet */
	DIR *d = jig_dir_open(fd);
	struct dirent *de;
	int r = 0;
	while (r >= 0 && d && (de = readdir(d))) {
		char idx[JIG_SHA256_HEX];
		if (named(de->d_name, "idx", idx))
			r = load_index(fd, de->d_name, idx, ps);
	}
	if (d)
		closedir(d);
	if (r < 0) {
		jig_packs_free(ps);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	qsort(ps->v, ps->n, sizeof(*ps->v), cmp_entry);
	return 0;
}

void jig_packs_free(struct jig_packs *ps)
{
	free(ps->v);
	free(ps->pack);
	*ps = (struct jig_packs){0};
}

const struct jig_pack_entry *jig_packs_find(const struct jig_packs *ps, const char *sha)
{
	size_t lo = 0, hi = ps->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ps->v[mid].sha, sha) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ps->n && strcmp(ps->v[lo].sha, sha) == 0 ? &ps->v[lo] : NULL;
}

static int open_pack(int statefd, const struct jig_pack_file *pf)
{
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_PACKS_DIR "/%s.pack", pf->sha);
	return openat(statefd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

int jig_pack_check(int statefd, struct jig_packs *ps, size_t k)
{
	struct jig_pack_file *pf = &ps->pack[k];
	if (pf->checked)
		return pf->checked > 0;
	jig_autoclose int fd = open_pack(statefd, pf);
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	uint64_t size = 0;
	if (fd < 0 || jig_sha256_fd(fd, &size, d) < 0)
		return pf->checked = -1, 0;
	jig_hex(d, JIG_SHA256_LEN, hex);
	pf->checked = size == pf->size && strcmp(hex, pf->sha) == 0 ? 1 : -1;
	return pf->checked > 0;
}

int jig_pack_read(int statefd, const struct jig_packs *ps, const struct jig_pack_entry *x, unsigned char *buf)
{
	jig_autoclose int fd = open_pack(statefd, &ps->pack[x->pack]);
	if (fd < 0)
		return -1;
	uint64_t got = 0;
	while (got < x->len) {
		ssize_t n = pread(fd, buf + got, (size_t)(x->len - got), (off_t)(x->off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 1; /* shorter than its index says */
		got += (uint64_t)n;
	}
	char hex[JIG_SHA256_HEX];
	jig_sha256_hex(buf, (size_t)x->len, hex);
	return strcmp(hex, x->sha) != 0;
}

int jig_pack_begin(struct jig_pack_writer *w, int statefd, struct jig_error *e)
{
	*w = (struct jig_pack_writer){.statefd = statefd, .fd = -1};
	if (mkdirat(statefd, JIG_PACKS_DIR, 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: %s", JIG_PACKS_DIR, strerror(errno));
	snprintf(w->tmp, sizeof(w->tmp), JIG_PACKS_DIR "/.tmp-%d-pack", (int)getpid());
	unlinkat(statefd, w->tmp, 0); /* this process's own leftover */
	w->fd = openat(statefd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->fd < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: %s", w->tmp, strerror(errno));
	if (!(w->c = jig_sha256_begin()))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	return 0;
}

static int append(struct jig_pack_writer *w, const void *buf, size_t len, struct jig_error *e)
{
	const unsigned char *p = buf;
	jig_sha256_update(w->c, buf, len);
	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return jig_err(e, JIG_E_INTERNAL, "store: %s: write: %s", w->tmp, n < 0 ? strerror(errno) : "short write");
		p += n, len -= (size_t)n;
	}
	return 0;
}

static int add_entry(struct jig_pack_writer *w, const char *sha, uint64_t len, struct jig_error *e)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct jig_pack_entry *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
		w->v = v, w->cap = cap;
	}
	struct jig_pack_entry *x = &w->v[w->n++];
	*x = (struct jig_pack_entry){.off = w->off, .len = len};
	snprintf(x->sha, sizeof(x->sha), "%s", sha);
	w->off += len;
	return 0;
}

int jig_pack_add(struct jig_pack_writer *w, const char *sha, const void *buf, size_t len, struct jig_error *e)
{
	int r = append(w, buf, len, e);
	return r ? r : add_entry(w, sha, len, e);
}

int jig_pack_add_fd(struct jig_pack_writer *w, const char *sha, int in, const char *what, struct jig_error *e)
{
	struct jig_sha256_ctx *c = jig_sha256_begin();
	if (!c)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	unsigned char buf[65536];
	uint64_t len = 0;
	int r = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: read: %s", what, strerror(errno));
		if (n <= 0)
			break;
		jig_sha256_update(c, buf, (size_t)n);
		if ((r = append(w, buf, (size_t)n, e)))
			break;
		len += (uint64_t)n;
	}
	unsigned char d[JIG_SHA256_LEN];
	char got[JIG_SHA256_HEX];
	jig_sha256_end(c, d);
	jig_hex(d, JIG_SHA256_LEN, got);
	if (r)
		return r;
	if (strcmp(got, sha) != 0)
		return 1; /* the pack is abandoned: its digest took the bytes */
	return add_entry(w, sha, len, e);
}

static int cmp_sha(const void *a, const void *b)
{
	return strcmp(((const struct jig_pack_entry *)a)->sha, ((const struct jig_pack_entry *)b)->sha);
}

int jig_pack_commit(struct jig_pack_writer *w, struct jig_error *e)
{
	if (w->n == 0)
		return 0;
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256_end(w->c, d);
	w->c = NULL;
	jig_hex(d, JIG_SHA256_LEN, w->pack_sha);
	JIG_FAULT_POINT("pack written"); /* its bytes written, not yet synced */
	if (fsync(w->fd) < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: sync: %s", w->tmp, strerror(errno));
	JIG_FAULT_POINT("pack synced");
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_PACKS_DIR "/%s.pack", w->pack_sha);
	if (renameat(w->statefd, w->tmp, w->statefd, rel) < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: %s", rel, strerror(errno));
	w->tmp[0] = '\0';
	JIG_FAULT_POINT("pack named"); /* named, not yet visible: no index names it */
	/* The index: sorted by digest, one digest once. */
	qsort(w->v, w->n, sizeof(*w->v), cmp_sha);
	size_t n = 0;
	for (size_t k = 0; k < w->n; k++)
		if (n == 0 || strcmp(w->v[n - 1].sha, w->v[k].sha) != 0)
			w->v[n++] = w->v[k];
	size_t cap = 128 + n * 112;
	jig_autofree char *idx = malloc(cap);
	if (!idx)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t len = (size_t)snprintf(idx, cap, JIG_PACK_INDEX_FORMAT "\npack %s %" PRIu64 " %zu\n", w->pack_sha, w->off, n);
	for (size_t k = 0; k < n; k++)
		len += (size_t)snprintf(idx + len, cap - len, "%s %" PRIu64 " %" PRIu64 "\n", w->v[k].sha, w->v[k].off, w->v[k].len);
	jig_sha256_hex(idx, len, w->idx_sha);
	char tmp[96];
	snprintf(tmp, sizeof(tmp), JIG_PACKS_DIR "/.tmp-%d-idx", (int)getpid());
	unlinkat(w->statefd, tmp, 0);
	int r = jig_write_file_at(w->statefd, tmp, idx, len, 0600, e); /* written and synced */
	if (r)
		return r;
	JIG_FAULT_POINT("index synced"); /* the pack is still not visible */
	snprintf(rel, sizeof(rel), JIG_PACKS_DIR "/%s.idx", w->idx_sha);
	if (renameat(w->statefd, tmp, w->statefd, rel) < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "store: %s: %s", rel, strerror(errno));
		unlinkat(w->statefd, tmp, 0);
		return r;
	}
	JIG_FAULT_POINT("index named"); /* visible; the directory not yet synced */
	jig_autoclose int dfd = openat(w->statefd, JIG_PACKS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: sync: %s", JIG_PACKS_DIR, strerror(errno));
	return 0;
}

void jig_pack_end(struct jig_pack_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp[0])
		unlinkat(w->statefd, w->tmp, 0);
	if (w->c) {
		unsigned char d[JIG_SHA256_LEN];
		jig_sha256_end(w->c, d);
	}
	free(w->v);
	*w = (struct jig_pack_writer){.fd = -1};
}
