/* Bounded capture of a Flow's tree (and a binding's resource tree) into
 * the project's Package/0 store, before any decision. */
#include "flow/project.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flow/binding.h"
#include "flow/deps.h"
#include "flow/tree.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/progress.h"

#define MAX_DEPTH 32

struct walk {
	const char *flow;
	bool skip_node_modules;
	dev_t dev;
	uint64_t mnt; /* the tree's mount id: a bind mount inside it is another (R-S03) */
	json_t *files;
	uint64_t bytes;
	char tree[48]; /* the tree's root dev:ino, the cache key's prefix */
	struct jig_error *e;
};

static int hash_fd(int fd, unsigned char out[JIG_SHA256_LEN])
{
	return jig_sha256_fd(fd, NULL, out);
}

/* The capture cache (issue 36, decision 185): .jig/capture/<SHA256 of the
 * tree's name in messages>, one file a tree (a Run's memory holds one at
 * a time), text,
 *   jig-capture-cache/1
 *   SHA256 <TAB> TREE-DEV:TREE-INO/PATH <TAB> dev ino mode uid size mtime ctime
 * (numbers in hex): a file whose inode still has every one of those
 * values is not read again, its digest is the one remembered. Only files
 * settled (last changed 20 ms or more, over a clock tick, before the capture began) are
 * remembered, so a write during or after the hash changes the ctime.
 * Everything else a capture checks is checked each time. Only a review
 * (a capture that stores) writes it; jig list and jig run read it. */
#define CACHE_DIR "capture"
#define CACHE_FORMAT "jig-capture-cache/1"
#define CACHE_MAX_BYTES (JIG_PACKAGE_MAX_FILES * 1536ull)
#define SETTLED_NS 20000000LL

struct ccache {
	char *text;   /* what was loaded, split in place */
	char **lines; /* sorted by key: "SHA\tKEY\tMETA" */
	size_t n;
	FILE *out; /* what this capture saw, in memory */
	char *out_text;
	size_t out_len;
	size_t hits, misses;
	struct timespec start;
	char rel[sizeof(CACHE_DIR) + JIG_SHA256_HEX + 1];
};
static bool use_cache; /* during jig_project_capture only */
static struct ccache *cache; /* the tree's, during capture_tree */

static const char *key_of(const char *line)
{
	return line + JIG_SHA256_HEX;
}

static int cmp_key(const void *a, const void *b)
{
	const char *x = key_of(*(char *const *)a), *y = key_of(*(char *const *)b);
	size_t lx = strcspn(x, "\t"), ly = strcspn(y, "\t");
	int c = memcmp(x, y, lx < ly ? lx : ly);
	return c ? c : (lx > ly) - (lx < ly);
}

static void cache_load(struct ccache *c, int statefd, const char *what)
{
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(what, strlen(what), d);
	jig_hex(d, JIG_SHA256_LEN, hex);
	snprintf(c->rel, sizeof(c->rel), CACHE_DIR "/%s", hex);
	clock_gettime(CLOCK_REALTIME, &c->start);
	c->out = open_memstream(&c->out_text, &c->out_len);
	size_t len;
	struct jig_error ignored = {0};
	if (jig_read_file_at(statefd, c->rel, CACHE_MAX_BYTES, CACHE_DIR, &c->text, &len, NULL, &ignored) < 0)
		return;
	size_t cap = 0;
	char *save = NULL;
	char *line = strtok_r(c->text, "\n", &save);
	if (!line || strcmp(line, CACHE_FORMAT) != 0)
		return;
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (t1 != line + JIG_SHA256_HEX - 1 || !t2 || strchr(t2 + 1, '\t'))
			continue; /* not a line of this format: not used */
		if (c->n == cap) {
			char **v = realloc(c->lines, (cap = cap ? cap * 2 : 1024) * sizeof(*v));
			if (!v)
				return;
			c->lines = v;
		}
		c->lines[c->n++] = line;
	}
	qsort(c->lines, c->n, sizeof(*c->lines), cmp_key);
}

static void fingerprint(const struct stat *st, char *out, size_t cap)
{
	snprintf(out, cap, "%llx %llx %x %x %llx %llx.%lx %llx.%lx", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		 (unsigned)st->st_mode, (unsigned)st->st_uid, (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		 (unsigned long)st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, (unsigned long)st->st_ctim.tv_nsec);
}

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* Last changed SETTLED_NS or more before the capture began: a write after
 * the fingerprint was taken is at least a clock tick later, so its ctime
 * differs (the verification cache's rule, snapshot/verify.c). */
static bool settled(const struct ccache *c, const struct stat *st)
{
	long long start = ns_of(&c->start);
	return ns_of(&st->st_mtim) + SETTLED_NS <= start && ns_of(&st->st_ctim) + SETTLED_NS <= start;
}

/* The digest remembered for key with this very fingerprint, into hex. */
static bool cache_find(struct ccache *c, const char *key, const char *meta, char hex[JIG_SHA256_HEX])
{
	if (!c || !c->n)
		return false;
	char probe[1400];
	snprintf(probe, sizeof(probe), "%064d\t%s\t", 0, key);
	char *pp = probe, **hit = bsearch(&pp, c->lines, c->n, sizeof(*c->lines), cmp_key);
	if (!hit || strcmp(strchr(key_of(*hit), '\t') + 1, meta) != 0)
		return false;
	memcpy(hex, *hit, JIG_SHA256_HEX - 1);
	hex[JIG_SHA256_HEX - 1] = '\0';
	return true;
}

static void cache_note(struct ccache *c, const char *key, const char *meta, const char *hex, const struct stat *st)
{
	if (c && c->out && settled(c, st))
		fprintf(c->out, "%s\t%s\t%s\n", hex, key, meta);
}

/* What this capture saw replaces the file, when it differs. */
static void cache_finish(struct ccache *c, int statefd, bool ok)
{
	if (c->out && fclose(c->out) == 0 && ok && (c->misses || c->hits != c->n)) {
		char *doc = NULL;
		size_t dl = 0;
		FILE *f = open_memstream(&doc, &dl);
		if (f) {
			fprintf(f, "%s\n", CACHE_FORMAT);
			fwrite(c->out_text, 1, c->out_len, f);
		}
		struct jig_error ignored = {0};
		if (f && fclose(f) == 0 && dl <= CACHE_MAX_BYTES && (mkdirat(statefd, CACHE_DIR, 0700) == 0 || errno == EEXIST))
			jig_write_file_replace_at(statefd, c->rel, doc, dl, 0600, &ignored); /* a cache not written is only slower */
		free(doc);
	}
	free(c->out_text);
	free(c->lines);
	free(c->text);
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	if (depth > MAX_DEPTH)
		return jig_err(w->e, JIG_E_USAGE, "flow %s: %s: nested deeper than %d directories", w->flow, prefix, MAX_DEPTH);
	int dup_fd = dup(dfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return jig_err(w->e, JIG_E_INTERNAL, "flow %s: %s: %s", w->flow, prefix, strerror(errno));
	}
	rewinddir(d); /* the dup shares the offset: a second walk of dfd starts over */
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		const char *n = de->d_name;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		/* A package's own node_modules is never captured: its
		 * dependencies are prepared by jig (docs/dependencies.md). */
		if (depth == 0 && w->skip_node_modules && strcmp(n, "node_modules") == 0)
			continue;
		char rel[1024];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", n);
		struct stat st;
		if (!jig_path_is_normal_relative(rel))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: file names must be [A-Za-z0-9._+@-]", w->flow, rel);
		else if (strcmp(n, JIG_STATE_DIR) == 0)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: the protected .jig state is never part of a package", w->flow, rel);
		else if (fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: %s", w->flow, rel, strerror(errno));
		else if (st.st_dev != w->dev || jig_tree_other_mount(dfd, n, w->mnt))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is another mount; packages are captured from one file system", w->flow, rel);
		else if (S_ISLNK(st.st_mode))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is a symbolic link; packages contain regular files and directories only", w->flow, rel);
		else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st2;
			uint64_t mnt = 0;
			r = sub < 0 ? jig_err(w->e, JIG_E_USAGE, "flow %s: %s: %s", w->flow, rel, strerror(errno))
			    : fstat(sub, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != w->dev || jig_tree_mount_id(sub, &mnt) < 0 || mnt != w->mnt
				? jig_err(w->e, JIG_E_USAGE, "flow %s: %s: changed while it was captured (another directory or mount)", w->flow, rel)
				: walk_dir(w, sub, rel, depth + 1);
			if (sub >= 0)
				close(sub);
		} else if (!S_ISREG(st.st_mode))
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: is a special file (fifo, socket or device); refused", w->flow, rel);
		else if (st.st_nlink != 1)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: has %lu hard links; packages contain singly linked files only", w->flow, rel,
				    (unsigned long)st.st_nlink);
		else if (json_array_size(w->files) >= JIG_PACKAGE_MAX_FILES)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: more than %d files", w->flow, JIG_PACKAGE_MAX_FILES);
		else if ((w->bytes += (uint64_t)st.st_size) > JIG_ARTIFACT_MAX_BYTES)
			r = jig_err(w->e, JIG_E_USAGE, "flow %s: the package is larger than %llu MiB (the Package/0 artifact cap)", w->flow,
				   JIG_ARTIFACT_MAX_BYTES >> 20);
		else {
			jig_autoclose int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			struct stat st2;
			unsigned char h[JIG_SHA256_LEN];
			char hex[JIG_SHA256_HEX];
			uint64_t mnt = 0;
			if (fd < 0 || fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode) ||
			    st2.st_dev != w->dev || jig_tree_mount_id(fd, &mnt) < 0 || mnt != w->mnt)
				r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: changed while it was captured", w->flow, rel);
			else {
				char key[1100], meta[160];
				snprintf(key, sizeof(key), "%s/%s", w->tree, rel);
				fingerprint(&st2, meta, sizeof(meta));
				if (cache_find(cache, key, meta, hex))
					cache->hits++;
				else if (hash_fd(fd, h) < 0)
					r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: read: %s", w->flow, rel, strerror(errno));
				else {
					jig_hex(h, JIG_SHA256_LEN, hex);
					if (cache)
						cache->misses++;
				}
				if (!r)
					cache_note(cache, key, meta, hex, &st2);
			}
			if (!r && fd >= 0) {
				json_array_append_new(w->files, json_pack("{s:s,s:I,s:s,s:b}", "path", rel, "size",
									  (json_int_t)st2.st_size, "sha256", hex,
									  "exec", (st2.st_mode & 0111) != 0));
			}
		}
	}
	closedir(d);
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	return strcmp(json_string_value(json_object_get(*x, "path")), json_string_value(json_object_get(*y, "path")));
}

/* Bytes held by one store directory. */
static uint64_t dir_bytes(int statefd, const char *sub)
{
	int fd = openat(statefd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	uint64_t total = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] != '.' && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return total;
}

static bool present(int statefd, const char *rel)
{
	struct stat st;
	return fstatat(statefd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Copies rel (beneath srcfd) to the store under this process's temporary
 * name for blobs/<hex>, checking the hash of the bytes written; the
 * caller syncs once and renames (store_blobs). */
static void blob_tmp(char *tmp, size_t cap, const char *hex)
{
	snprintf(tmp, cap, "store/blobs/.tmp-%d-%s", (int)getpid(), hex);
}

static int store_blob(int statefd, int srcfd, const char *rel, const char *hex, struct jig_error *e)
{
	char tmp[160];
	blob_tmp(tmp, sizeof(tmp), hex);
	jig_autoclose int in = jig_open_beneath(srcfd, rel, O_RDONLY | O_NONBLOCK);
	unlinkat(statefd, tmp, 0); /* this process's own leftover */
	jig_autoclose int out = openat(statefd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (in < 0 || out < 0)
		return jig_err(e, JIG_E_INTERNAL, "store: %s: %s", rel, strerror(errno));
	struct jig_sha256_ctx *c = jig_sha256_begin();
	char buf[65536];
	int r = c ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (;;) {
		if (r)
			break;
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: read: %s", rel, strerror(errno));
		if (n <= 0)
			break;
		jig_sha256_update(c, buf, (size_t)n);
		if (write(out, buf, (size_t)n) != n)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: write: %s", rel, strerror(errno));
	}
	unsigned char h[JIG_SHA256_LEN];
	char got[JIG_SHA256_HEX];
	if (c) {
		jig_sha256_end(c, h);
		jig_hex(h, JIG_SHA256_LEN, got);
		if (!r && strcmp(got, hex) != 0)
			r = jig_err(e, JIG_E_USAGE, "%s: changed while it was captured; review again", rel);
	}
	/* Its write-back starts now; store_blobs waits for it. */
	if (!r)
		sync_file_range(out, 0, 0, SYNC_FILE_RANGE_WRITE);
	return r;
}

/* Waits until the temporary blob is on disk (its write-back started when
 * it was written, so the first fsync commits the journal for most of
 * them and the rest find their data written). */
static int sync_blob(int statefd, const char *tmp)
{
	jig_autoclose int fd = openat(statefd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 || fsync(fd) < 0 ? -1 : 0;
}

/* The tree's new blobs into the store: each written under a temporary
 * name with its write-back started, then each synced once all are written
 * (not written-and-fsynced one by one: 4,000 journal commits were a third
 * of a first review, issue 36; not syncfs, which would also wait for
 * everything else dirty on the file system), then each renamed to its
 * name, so a blob's name never points at bytes a crash could lose. On a
 * failure no temporary name is left. */
static int store_blobs(int statefd, int pfd, json_t *sorted, struct jig_error *e)
{
	size_t n = json_array_size(sorted), made = 0;
	int r = 0;
	bool *mine = calloc(n + 1, sizeof(*mine));
	if (!mine)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t k = 0; r == 0 && k < n; k++) {
		json_t *fe = json_array_get(sorted, k);
		const char *hex = json_string_value(json_object_get(fe, "sha256"));
		char brel[128], tmp[160];
		snprintf(brel, sizeof(brel), "store/blobs/%s", hex);
		blob_tmp(tmp, sizeof(tmp), hex);
		bool dup = false; /* one content twice in the package: written once */
		for (size_t j = 0; j < k && !dup; j++)
			dup = mine[j] && strcmp(hex, json_string_value(json_object_get(json_array_get(sorted, j), "sha256"))) == 0;
		if (dup || present(statefd, brel))
			continue;
		mine[k] = true;
		made++;
		r = store_blob(statefd, pfd, json_string_value(json_object_get(fe, "path")), hex, e);
	}
	for (size_t k = 0; r == 0 && made && k < n; k++) {
		char tmp[160];
		blob_tmp(tmp, sizeof(tmp), json_string_value(json_object_get(json_array_get(sorted, k), "sha256")));
		if (mine[k] && sync_blob(statefd, tmp) < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: sync: %s", tmp, strerror(errno));
	}
	JIG_FAULT_POINT("store blobs"); /* written and synced, not yet named */
	for (size_t k = 0; k < n; k++) {
		if (!mine[k])
			continue;
		char brel[128], tmp[160];
		const char *hex = json_string_value(json_object_get(json_array_get(sorted, k), "sha256"));
		snprintf(brel, sizeof(brel), "store/blobs/%s", hex);
		blob_tmp(tmp, sizeof(tmp), hex);
		if (r == 0 && renameat(statefd, tmp, statefd, brel) < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: %s", brel, strerror(errno));
		if (r)
			unlinkat(statefd, tmp, 0);
	}
	free(mine);
	return r;
}

/* One tree into the store as a jig-package/1 manifest and its blobs:
 * what names it in messages; entry, if set, must be one of its files.
 * *used is the store's size, updated. */
static int capture_tree(struct jig_project *p, int pfd, const char *what, const char *entry, const char *dir, bool store,
			uint64_t *used, json_t **keep,
			char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e)
{
	struct stat st;
	if (fstat(pfd, &st) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", what, strerror(errno));
	struct walk w = {.flow = what, .dev = st.st_dev, .files = json_array(), .e = e, .skip_node_modules = entry != NULL};
	snprintf(w.tree, sizeof(w.tree), "%llx:%llx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	if (jig_tree_mount_id(pfd, &w.mnt) < 0) {
		json_decref(w.files);
		return jig_err(e, JIG_E_USAGE, "%s: cannot tell its mount: %s", what, strerror(errno));
	}
	struct ccache c = {0};
	if (use_cache) {
		cache_load(&c, p->statefd, what);
		cache = &c;
	}
	int r = walk_dir(&w, pfd, "", 0);
	if (use_cache) {
		cache = NULL;
		cache_finish(&c, p->statefd, r == 0 && store); /* jig list and jig run only read it: they change no state */
	}
	if (r) {
		json_decref(w.files);
		return r;
	}
	/* Canonical package manifest: files sorted by path. */
	size_t n = json_array_size(w.files);
	json_t **v = calloc(n + 1, sizeof(*v)), *sorted = json_array();
	for (size_t k = 0; v && k < n; k++)
		v[k] = json_array_get(w.files, k);
	if (v)
		qsort(v, n, sizeof(*v), cmp_path);
	bool has_entry = !entry;
	for (size_t k = 0; v && k < n; k++) {
		json_array_append(sorted, v[k]);
		has_entry |= entry && strcmp(json_string_value(json_object_get(v[k], "path")), entry) == 0;
	}
	free(v);
	json_decref(w.files);
	json_t *man = json_pack("{s:s,s:o}", "format", "jig-package/1", "files", sorted);
	jig_autofree char *canon = man ? jig_json_canonical(man) : NULL;
	if (!canon) {
		json_decref(man);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	if (!has_entry) {
		json_decref(man);
		return jig_err(e, JIG_E_USAGE, "flow %s: entry %s is not a file of the package %s", what, entry, dir);
	}
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(canon, strlen(canon), d);
	jig_hex(d, JIG_SHA256_LEN, sha);
	*bytes = w.bytes;
	*files = n;
	/* What this artifact needs that the store does not hold yet. */
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", sha);
	bool stored = present(p->statefd, mrel);
	uint64_t need = stored ? 0 : strlen(canon);
	json_decref(keep ? *keep : NULL);
	if (keep) /* a new package's files, for a Plan difference (flow/plan_diff.h reads a stored one from the store) */
		*keep = stored ? NULL : json_incref(man);
	for (size_t k = 0; k < n; k++) {
		json_t *fe = json_array_get(sorted, k);
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", json_string_value(json_object_get(fe, "sha256")));
		if (!present(p->statefd, brel))
			need += (uint64_t)json_integer_value(json_object_get(fe, "size"));
	}
	if (!store) {
		json_decref(man);
		return 0;
	}
	if (need && *used + need > p->store_cap) {
		json_decref(man);
		return jig_err(e, JIG_E_USAGE,
			       "%s: the Package/0 store is full (%llu of %llu bytes; this artifact needs %llu more); exact retained artifacts stay usable; jig gc --project %s frees what the admitted Plan and retained Run records do not reference (--dry-run first to see how much)",
			       what, (unsigned long long)*used, (unsigned long long)p->store_cap, (unsigned long long)need, p->root);
	}
	r = store_blobs(p->statefd, pfd, sorted, e);
	/* Replaced whole, never written in place: two reviews of one new
	 * package both succeed, and a crash leaves no partial manifest that
	 * would then count as present (issue 36). */
	if (r == 0 && !present(p->statefd, mrel)) {
		JIG_FAULT_POINT("store manifest"); /* absent when looked at; another review may write it now */
		r = jig_write_file_replace_at(p->statefd, mrel, canon, strlen(canon), 0600, e);
	}
	*used += need;
	json_decref(man);
	return r;
}

static uint64_t store_used(const struct jig_project *p)
{
	return dir_bytes(p->statefd, "store/blobs") + dir_bytes(p->statefd, "store/packages");
}

/* A credential in the Flow's bun.lock or package.json is refused before
 * the package enters the store (R-C14: secrets never enter locks or what
 * jig retains); deps.c refuses it again on the captured bytes. */
static int no_credential(int pfd, const char *flow, struct jig_error *e)
{
	static const struct {
		const char *name;
		size_t max;
	} files[] = {{JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX}, {JIG_DEPS_MANIFEST, JIG_DEPS_MANIFEST_MAX}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		jig_autofree char *buf = NULL;
		size_t len, line;
		const char *what;
		struct jig_error ignored = {0};
		if (jig_read_file_at(pfd, files[i].name, files[i].max, files[i].name, &buf, &len, NULL, &ignored) == 0 &&
		    (line = jig_deps_credential_line(buf, len, &what)))
			return jig_err(e, JIG_E_USAGE,
				       "flow %s: %s: line %zu: %s; a credential never belongs in a lock or manifest (jig keeps, prints and retains them); remove it and give the registry's credentials to the operator's configuration instead; nothing captured",
				       flow, files[i].name, line, what);
	}
	return 0;
}

static int capture_all(struct jig_project *p, bool store, struct jig_error *e);

int jig_project_capture(struct jig_project *p, bool store, struct jig_error *e)
{
	use_cache = !p->rehash;
	int r = capture_all(p, store, e);
	use_cache = false;
	return r;
}

static int capture_all(struct jig_project *p, bool store, struct jig_error *e)
{
	uint64_t used = store_used(p); /* what the store holds now */
	for (size_t i = 0; i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		jig_progress_status("capturing flow %s (%zu of %zu)", f->name, i + 1, p->n_flows);
		jig_autoclose int pfd = jig_open_beneath(p->rootfd, f->dir, O_RDONLY | O_DIRECTORY);
		if (pfd < 0)
			return jig_err(e, JIG_E_USAGE, "flow %s: %s: %s", f->name, f->dir, strerror(errno));
		int r = store ? no_credential(pfd, f->name, e) : 0; /* at review: a Run's package is the admitted one */
		if (r)
			return r;
		r = capture_tree(p, pfd, f->name, f->entry, f->dir, store, &used, &f->package_manifest, f->package_sha256, &f->package_bytes,
				     &f->package_files, e);
		if (r)
			return r;
	}
	/* Binding resource trees (R-S04): also before any decision, so a
	 * declined review retains them too. */
	return jig_binding_capture(p, store, &used, e);
}

int jig_store_capture_tree(struct jig_project *p, int dirfd, const char *what, bool store, uint64_t *used,
			   char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e)
{
	return capture_tree(p, dirfd, what, NULL, NULL, store, used, NULL, sha, bytes, files, e);
}

int jig_store_capture(struct jig_project *p, int dirfd, const char *what, char sha[JIG_SHA256_HEX], uint64_t *bytes,
		      size_t *files, struct jig_error *e)
{
	uint64_t used = store_used(p);
	return capture_tree(p, dirfd, what, NULL, NULL, true, &used, NULL, sha, bytes, files, e);
}
