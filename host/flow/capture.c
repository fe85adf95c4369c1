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
#include <sys/sysmacros.h>
#include <unistd.h>

#include "flow/binding.h"
#include "flow/pack.h"
#include "flow/tree.h"
#include "util/cleanup.h"
#include "util/credential.h"
#include "util/crypto.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/progress.h"

#define MAX_DEPTH 32
/* One read buffer per capture: a package file of up to this size is read
 * and hashed with one read (issue 44). */
#define READ_BUF (1u << 20)

/* A captured file: its path in the package, size, digest and exec bit;
 * present: the store holds its blob already (set at review only). */
struct entry {
	char *path;
	uint64_t size;
	char hex[JIG_SHA256_HEX];
	bool exec, present;
};

struct walk {
	const char *what; /* names the tree in messages: "flow F", "flow F: its prepared node_modules" */
	bool skip_node_modules;
	bool package_names; /* a prepared tree: any name npm can publish (decision 261) */
	dev_t dev;
	uint64_t mnt; /* the tree's mount id: a bind mount inside it is another (R-S03) */
	struct entry *files;
	size_t n, cap;
	uint64_t bytes;
	unsigned char *buf; /* READ_BUF bytes */
	struct jig_error *e;
};

/* What capture needs of an open file or directory, in one call: its type,
 * mode, links, inode, device, size and mount id (R-S03). */
static int stat_fd(int fd, struct statx *sx)
{
	if (statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT,
		  STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_INO | STATX_SIZE | STATX_MNT_ID, sx) < 0)
		return -1;
	return (sx->stx_mask & STATX_MNT_ID) ? 0 : (errno = ENOSYS, -1);
}

static bool on_tree(const struct walk *w, const struct statx *sx)
{
	return makedev(sx->stx_dev_major, sx->stx_dev_minor) == w->dev && sx->stx_mnt_id == w->mnt;
}

/* Reads fd to its end once, hashing as it reads: every byte, every time,
 * in every verification mode (decision 196). The file must end where its
 * size said (asking one byte more than is left, a short read is its end):
 * 0; 1 when it did not (it changed while it was captured); -1 with errno. */
static int hash_file(struct walk *w, int fd, uint64_t size, char hex[JIG_SHA256_HEX])
{
	unsigned char d[JIG_SHA256_LEN];
	struct jig_sha256_ctx *c = NULL;
	uint64_t got = 0;
	for (;;) {
		uint64_t left = size - got + 1;
		size_t want = left < READ_BUF ? (size_t)left : READ_BUF;
		ssize_t n = read(fd, w->buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			if (c)
				jig_sha256_end(c, d);
			return errno = err, -1;
		}
		if (got == 0 && (size_t)n < want) { /* the whole file in one read */
			got = (uint64_t)n;
			jig_sha256(w->buf, (size_t)n, d);
			break;
		}
		if (!c && !(c = jig_sha256_begin()))
			return errno = ENOMEM, -1;
		jig_sha256_update(c, w->buf, (size_t)n);
		got += (uint64_t)n;
		if ((size_t)n < want || got > size)
			break;
	}
	if (c)
		jig_sha256_end(c, d);
	jig_hex(d, JIG_SHA256_LEN, hex);
	return got == size ? 0 : 1;
}

/* One regular file, opened (never followed) and checked through the
 * descriptor it is read from: on the tree's file system and mount, one
 * link, within the package's caps; then hashed. */
static int take_file(struct walk *w, int dfd, const char *n, const char *rel)
{
	jig_autoclose int fd = openat(dfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct statx sx;
	if (fd < 0 && errno == ELOOP)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: is a symbolic link; packages contain regular files and directories only", w->what, rel);
	if (fd < 0 || stat_fd(fd, &sx) < 0)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: %s", w->what, rel, strerror(errno));
	if (!on_tree(w, &sx))
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: is another mount; packages are captured from one file system", w->what, rel);
	if (!S_ISREG(sx.stx_mode))
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: changed while it was captured", w->what, rel);
	if (sx.stx_nlink != 1)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: has %lu hard links; packages contain singly linked files only", w->what, rel,
			       (unsigned long)sx.stx_nlink);
	if (w->n >= JIG_PACKAGE_MAX_FILES)
		return jig_err(w->e, JIG_E_USAGE, "%s: more than %d files", w->what, JIG_PACKAGE_MAX_FILES);
	if ((w->bytes += sx.stx_size) > JIG_ARTIFACT_MAX_BYTES)
		return jig_err(w->e, JIG_E_USAGE, "%s: the package is larger than %llu MiB (the Package/0 artifact cap)", w->what,
			       JIG_ARTIFACT_MAX_BYTES >> 20);
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct entry *v = realloc(w->files, cap * sizeof(*v));
		if (!v)
			return jig_err(w->e, JIG_E_INTERNAL, "out of memory");
		w->files = v, w->cap = cap;
	}
	struct entry *f = &w->files[w->n];
	*f = (struct entry){.size = sx.stx_size, .exec = (sx.stx_mode & 0111) != 0};
	int h = hash_file(w, fd, sx.stx_size, f->hex);
	if (h < 0)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: read: %s", w->what, rel, strerror(errno));
	if (h > 0)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: changed while it was captured", w->what, rel);
	if (!(f->path = strdup(rel)))
		return jig_err(w->e, JIG_E_INTERNAL, "out of memory");
	w->n++;
	return 0;
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, int depth);

/* One directory, opened (never followed) and checked through its
 * descriptor: on the tree's file system and mount; then walked. */
static int take_dir(struct walk *w, int dfd, const char *n, const char *rel, int depth)
{
	jig_autoclose int sub = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statx sx;
	if (sub < 0 && errno == ELOOP)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: is a symbolic link; packages contain regular files and directories only", w->what, rel);
	if (sub < 0)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: %s", w->what, rel, strerror(errno));
	if (stat_fd(sub, &sx) < 0 || !S_ISDIR(sx.stx_mode))
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: changed while it was captured (another directory or mount)", w->what, rel);
	if (!on_tree(w, &sx))
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: is another mount; packages are captured from one file system", w->what, rel);
	return walk_dir(w, sub, rel, depth + 1);
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	if (depth > MAX_DEPTH)
		return jig_err(w->e, JIG_E_USAGE, "%s: %s: nested deeper than %d directories", w->what, prefix, MAX_DEPTH);
	DIR *d = jig_dir_open(dfd);
	if (!d)
		return jig_err(w->e, JIG_E_INTERNAL, "%s: %s: %s", w->what, prefix, strerror(errno));
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = jig_dir_next(d))) {
		const char *n = de->d_name;
		/* A package's own node_modules is never captured: its
		 * dependencies are prepared by jig (docs/dependencies.md). */
		if (depth == 0 && w->skip_node_modules && strcmp(n, "node_modules") == 0)
			continue;
		char rel[JIG_PACKAGE_PATH_MAX + 2];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", n);
		/* The entry's type from the directory where the file system
		 * gives it (ext4, XFS, Btrfs, tmpfs, vfat do); each is checked
		 * again on the descriptor opened. */
		unsigned char type = de->d_type;
		struct stat st;
		const char *rule = w->package_names ? jig_package_path_rule(rel) : NULL;
		if (rule)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %.200s: the path %s", w->what, rel, rule);
		else if (!w->package_names && !jig_path_is_normal_relative(rel))
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: file names must be [A-Za-z0-9._+@-]", w->what, rel);
		else if (strcmp(n, JIG_STATE_DIR) == 0)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: the protected .jig state is never part of a package", w->what, rel);
		else if (type == DT_UNKNOWN && fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: %s", w->what, rel, strerror(errno));
		else if (type == DT_UNKNOWN && (type = IFTODT(st.st_mode)) == DT_UNKNOWN)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: is a special file (fifo, socket or device); refused", w->what, rel);
		else if (type == DT_LNK)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: is a symbolic link; packages contain regular files and directories only", w->what, rel);
		else if (type == DT_DIR)
			r = take_dir(w, dfd, n, rel, depth);
		else if (type != DT_REG)
			r = jig_err(w->e, JIG_E_USAGE, "%s: %s: is a special file (fifo, socket or device); refused", w->what, rel);
		else
			r = take_file(w, dfd, n, rel);
	}
	closedir(d);
	return r;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static void free_entries(struct walk *w)
{
	for (size_t k = 0; k < w->n; k++)
		free(w->files[k].path);
	free(w->files);
	free(w->buf);
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

/* The store's packs, read once a process (and again after this process
 * wrote one); a pack's digest is checked the first time a review would
 * count one of its blobs as present (decision 351). */
static struct jig_packs packs;
static bool packs_loaded;

/* Does the store hold blob hex: a loose blob, or an entry of a pack whose
 * bytes are its name? A pack that is not (a flipped byte, a torn write
 * that kept its size) holds nothing: its blobs are captured again into
 * this review's pack. */
static bool blob_present(int statefd, const char *hex)
{
	char brel[128];
	snprintf(brel, sizeof(brel), "store/blobs/%s", hex);
	if (present(statefd, brel))
		return true;
	for (const struct jig_pack_entry *x = jig_packs_find(&packs, hex); x && x < packs.v + packs.n && strcmp(x->sha, hex) == 0; x++)
		if (jig_pack_check(statefd, &packs, x->pack))
			return true;
	return false;
}

/* The tree's new blobs into the store as one pack (flow/pack.h,
 * docs/store.md): each read again from the tree, checked against its
 * digest and appended; then the pack synced and named, its index written,
 * synced and named last, and the directory synced once (issue 50: one
 * create, copy, fsync and rename per blob was most of a first review).
 * On a failure nothing visible is left. files are sorted by path; only
 * those not present are written, one content once. */
static int store_blobs(int statefd, int pfd, const struct entry *files, size_t n, struct jig_error *e)
{
	size_t absent = 0;
	for (size_t k = 0; k < n; k++)
		absent += !files[k].present;
	if (!absent)
		return 0; /* nothing new: no pack */
	struct jig_pack_writer w;
	int r = jig_pack_begin(&w, statefd, e);
	for (size_t k = 0; r == 0 && k < n; k++) {
		if (files[k].present)
			continue;
		bool dup = false; /* one content twice in the package: written once */
		for (size_t j = 0; j < w.n && !dup; j++)
			dup = strcmp(files[k].hex, w.v[j].sha) == 0;
		if (dup)
			continue;
		jig_autoclose int in = jig_open_beneath(pfd, files[k].path, O_RDONLY | O_NONBLOCK);
		if (in < 0)
			r = jig_err(e, JIG_E_INTERNAL, "store: %s: %s", files[k].path, strerror(errno));
		else if ((r = jig_pack_add_fd(&w, files[k].hex, in, files[k].path, e)) > 0)
			r = jig_err(e, JIG_E_USAGE, "%s: changed while it was captured; review again", files[k].path);
	}
	JIG_FAULT_POINT("blobs written"); /* read again, verified and written; not yet synced (tests/flow/coarse_time.sh) */
	if (r == 0)
		r = jig_pack_commit(&w, e);
	if (r == 0 && w.n) { /* read again: the next tree may share its blobs */
		jig_packs_free(&packs);
		packs_loaded = false;
	}
	jig_pack_end(&w);
	return r;
}

/* The canonical jig-package/1 manifest of the walked files (sorted by
 * path), or NULL (out of memory). */
static json_t *manifest(const struct walk *w)
{
	json_t *files = json_array();
	for (size_t k = 0; files && k < w->n; k++) {
		const struct entry *f = &w->files[k];
		if (json_array_append_new(files, json_pack("{s:s,s:I,s:s,s:b}", "path", f->path, "size", (json_int_t)f->size, "sha256",
							   f->hex, "exec", f->exec)) < 0) {
			json_decref(files);
			return NULL;
		}
	}
	return files ? json_pack("{s:s,s:o}", "format", JIG_PACKAGE_FORMAT, "files", files) : NULL;
}

/* What the store holds: every file's size, so counted only when a
 * capture needs to store something (an unchanged review does not). */
#define USED_UNKNOWN UINT64_MAX
static uint64_t store_used(const struct jig_project *p)
{
	return dir_bytes(p->statefd, "store/blobs") + dir_bytes(p->statefd, JIG_PACKS_DIR) + dir_bytes(p->statefd, "store/packages");
}

/* One tree into the store as a jig-package/1 manifest and its blobs:
 * what names it in messages; entry, if set, must be one of its files.
 * *used is the store's size (USED_UNKNOWN: not counted yet), updated. */
static int capture_tree(struct jig_project *p, int pfd, const char *what, const char *entry, const char *dir, bool store,
			bool package_names, uint64_t *used, json_t **keep,
			char sha[JIG_SHA256_HEX], uint64_t *bytes, size_t *files, struct jig_error *e)
{
	struct statx sx;
	if (stat_fd(pfd, &sx) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: cannot tell its mount: %s", what, strerror(errno));
	struct walk w = {.what = what, .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor), .mnt = sx.stx_mnt_id, .e = e,
			 .skip_node_modules = entry != NULL, .package_names = package_names, .buf = malloc(READ_BUF)};
	JIG_FAULT_POINT("capture"); /* before the first file is read (tests/flow/coarse_time.sh) */
	int r = w.buf ? walk_dir(&w, pfd, "", 0) : jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (r) {
		free_entries(&w);
		return r;
	}
	/* Canonical package manifest: files sorted by path. */
	qsort(w.files, w.n, sizeof(*w.files), cmp_path);
	bool has_entry = !entry;
	for (size_t k = 0; entry && k < w.n && !has_entry; k++)
		has_entry = strcmp(w.files[k].path, entry) == 0;
	json_t *man = manifest(&w);
	jig_autofree char *canon = man ? jig_json_canonical(man) : NULL;
	if (!canon) {
		json_decref(man);
		free_entries(&w);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	if (!has_entry) {
		json_decref(man);
		free_entries(&w);
		return jig_err(e, JIG_E_USAGE, "%s: entry %s is not a file of the package %s", what, entry, dir);
	}
	jig_sha256_hex(canon, strlen(canon), sha);
	*bytes = w.bytes;
	*files = w.n;
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", sha);
	bool stored = present(p->statefd, mrel);
	json_decref(keep ? *keep : NULL);
	if (keep) /* a new package's files, for a Plan difference (flow/plan_diff.h reads a stored one from the store) */
		*keep = stored ? NULL : json_incref(man);
	json_decref(man);
	if (!store) { /* jig run and jig list: the digests only */
		free_entries(&w);
		return 0;
	}
	/* What this artifact needs that the store does not hold yet: the
	 * store is content-addressed, so a blob present is never written. */
	uint64_t need = stored ? 0 : strlen(canon);
	if (!packs_loaded && (r = jig_packs_load(p->statefd, &packs, e))) {
		free_entries(&w);
		return r;
	}
	packs_loaded = true;
	for (size_t k = 0; k < w.n; k++)
		if (!(w.files[k].present = blob_present(p->statefd, w.files[k].hex)))
			need += w.files[k].size;
	if (need && *used == USED_UNKNOWN)
		*used = store_used(p);
	if (need && *used + need > p->store_cap) {
		free_entries(&w);
		return jig_err(e, JIG_E_USAGE,
			       "%s: the Package/0 store is full (%llu of %llu bytes; this artifact needs %llu more); exact retained artifacts stay usable; jig gc --project %s frees what the admitted Plan and retained Run records do not reference (--dry-run first to see how much)",
			       what, (unsigned long long)*used, (unsigned long long)p->store_cap, (unsigned long long)need, p->root);
	}
	r = store_blobs(p->statefd, pfd, w.files, w.n, e);
	free_entries(&w);
	/* Replaced whole, never written in place: two reviews of one new
	 * package both succeed, and a crash leaves no partial manifest that
	 * would then count as present (issue 36). */
	if (r == 0 && !present(p->statefd, mrel)) {
		JIG_FAULT_POINT("store manifest"); /* absent when looked at; another review may write it now */
		r = jig_write_file_replace_at(p->statefd, mrel, canon, strlen(canon), 0600, e);
	}
	*used += need;
	return r;
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
		    (line = jig_credential_line(buf, len, &what)))
			return jig_err(e, JIG_E_USAGE,
				       "flow %s: %s: line %zu: %s; a credential never belongs in a lock or manifest (jig keeps, prints and retains them); remove it and give the registry's credentials to the operator's configuration instead; nothing captured",
				       flow, files[i].name, line, what);
	}
	return 0;
}

int jig_project_capture(struct jig_project *p, bool store, struct jig_error *e)
{
	uint64_t used = USED_UNKNOWN; /* what the store holds, counted when needed */
	for (size_t i = 0; i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		jig_progress_status("capturing flow %s (%zu of %zu)", f->name, i + 1, p->n_flows);
		jig_autoclose int pfd = jig_open_beneath(p->rootfd, f->dir, O_RDONLY | O_DIRECTORY);
		if (pfd < 0)
			return jig_err(e, JIG_E_USAGE, "flow %s: %s: %s", f->name, f->dir, strerror(errno));
		int r = store ? no_credential(pfd, f->name, e) : 0; /* at review: a Run's package is the admitted one */
		if (r)
			return r;
		char what[300];
		snprintf(what, sizeof(what), "flow %s", f->name);
		r = capture_tree(p, pfd, what, f->entry, f->dir, store, false, &used, &f->package_manifest, f->package_sha256, &f->package_bytes,
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
	return capture_tree(p, dirfd, what, NULL, NULL, store, false, used, NULL, sha, bytes, files, e);
}

int jig_store_capture(struct jig_project *p, int dirfd, const char *what, char sha[JIG_SHA256_HEX], uint64_t *bytes,
		      size_t *files, struct jig_error *e)
{
	uint64_t used = USED_UNKNOWN;
	return capture_tree(p, dirfd, what, NULL, NULL, true, true, &used, NULL, sha, bytes, files, e);
}
