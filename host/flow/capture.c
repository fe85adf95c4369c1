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
#include <unistd.h>

#include "flow/binding.h"
#include "flow/deps.h"
#include "flow/tree.h"
#include "util/cleanup.h"
#include "util/crypto.h"
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
	struct jig_error *e;
};

/* Streams fd into the store as blobs/<hex> unless it is already there.
 * *new_bytes counts what had to be written. */
static int hash_fd(int fd, unsigned char out[JIG_SHA256_LEN])
{
	return jig_sha256_fd(fd, NULL, out);
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
			else if (hash_fd(fd, h) < 0)
				r = jig_err(w->e, JIG_E_USAGE, "flow %s: %s: read: %s", w->flow, rel, strerror(errno));
			else {
				jig_hex(h, JIG_SHA256_LEN, hex);
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

/* Copies rel (beneath srcfd) to the store as blobs/<hex>, checking the hash
 * of the bytes written; atomic (temporary name, then rename). */
static int store_blob(int statefd, int srcfd, const char *rel, const char *hex, struct jig_error *e)
{
	char dst[128], tmp[160];
	snprintf(dst, sizeof(dst), "store/blobs/%s", hex);
	snprintf(tmp, sizeof(tmp), "store/blobs/.tmp-%d-%s", (int)getpid(), hex);
	jig_autoclose int in = jig_open_beneath(srcfd, rel, O_RDONLY | O_NONBLOCK);
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
	if (!r && (fsync(out) < 0 || renameat(statefd, tmp, statefd, dst) < 0))
		r = jig_err(e, JIG_E_INTERNAL, "store: %s: %s", dst, strerror(errno));
	if (r)
		unlinkat(statefd, tmp, 0);
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
	if (jig_tree_mount_id(pfd, &w.mnt) < 0) {
		json_decref(w.files);
		return jig_err(e, JIG_E_USAGE, "%s: cannot tell its mount: %s", what, strerror(errno));
	}
	int r = walk_dir(&w, pfd, "", 0);
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
	if (keep) { /* the package's files, for a Plan difference (flow/plan_diff.h) */
		json_decref(*keep);
		*keep = json_incref(man);
	}
	/* What this artifact needs that the store does not hold yet. */
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", sha);
	uint64_t need = present(p->statefd, mrel) ? 0 : strlen(canon);
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
	for (size_t k = 0; r == 0 && k < n; k++) {
		json_t *fe = json_array_get(sorted, k);
		const char *hex = json_string_value(json_object_get(fe, "sha256"));
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", hex);
		if (!present(p->statefd, brel))
			r = store_blob(p->statefd, pfd, json_string_value(json_object_get(fe, "path")), hex, e);
	}
	if (r == 0 && !present(p->statefd, mrel))
		r = jig_write_file_at(p->statefd, mrel, canon, strlen(canon), 0600, e);
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

int jig_project_capture(struct jig_project *p, bool store, struct jig_error *e)
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
