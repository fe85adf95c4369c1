/* The Package/0 store: a captured package materialised into a directory. */
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

#include "flow/pack.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"

/* Is path one of want (a file named there, or below a directory named
 * there)? NULL: every path is. */
static bool wanted(const char *path, const char *const *want, size_t n)
{
	if (!want)
		return true;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(want[i]);
		if (strncmp(path, want[i], l) == 0 && (path[l] == '\0' || path[l] == '/'))
			return true;
	}
	return false;
}

/* Blob sha from a pack into path beneath dirfd: the first copy whose
 * bytes are its digest (a later review captures again a blob of a pack
 * found altered, into a pack of its own). The store's packs are read when
 * the first packed blob is wanted. */
static int from_pack(const struct jig_project *p, struct jig_packs *ps, bool *loaded, int dirfd, const char *path,
		     const char *sha, bool exec, struct jig_error *e)
{
	if (!*loaded) {
		int r = jig_packs_load(p->statefd, ps, e);
		if (r)
			return r;
		*loaded = true;
	}
	const struct jig_pack_entry *x = jig_packs_find(ps, sha);
	if (!x)
		return jig_err(e, JIG_E_INTEGRITY, "store: %s (%s): %s", path, sha, strerror(ENOENT));
	const char *bad = NULL;
	for (; x < ps->v + ps->n && strcmp(x->sha, sha) == 0; x++) {
		jig_autofree unsigned char *buf = malloc(x->len ? (size_t)x->len : 1);
		if (!buf)
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
		int got = jig_pack_read(p->statefd, ps, x, buf);
		if (got != 0) {
			bad = ps->pack[x->pack].sha;
			continue;
		}
		jig_autoclose int out = jig_open_beneath(dirfd, path, O_WRONLY | O_CREAT | O_EXCL);
		if (out < 0)
			return jig_err(e, JIG_E_INTEGRITY, "store: %s (%s): %s", path, sha, strerror(errno));
		for (uint64_t off = 0; off < x->len;) {
			ssize_t n = write(out, buf + off, (size_t)(x->len - off));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return jig_err(e, JIG_E_INTERNAL, "materialise %s: %s", path, n < 0 ? strerror(errno) : "short write");
			off += (uint64_t)n;
		}
		fchmod(out, exec ? 0555 : 0444);
		return 0;
	}
	return jig_err(e, JIG_E_INTEGRITY, "store: blob %s was altered (pack %.12s); review again: it captures the blob again", sha, bad);
}

/* The package's entries (or those of want) into dirfd, each checked
 * against its digest; the manifest is checked against package_sha256
 * whatever is wanted. */
static int materialise(const struct jig_project *p, const char *package_sha256, int dirfd, const char *const *want,
		       size_t n_want, struct jig_error *e)
{
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", package_sha256);
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	int r = jig_read_file_at(p->statefd, mrel, 4 << 20, "package manifest", &buf, &len, &st, e);
	if (r)
		return r;
	char hex[JIG_SHA256_HEX];
	jig_sha256_hex(buf, len, hex);
	if (strcmp(hex, package_sha256) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "store: package %s was altered; remove %s/.jig and review again", package_sha256, p->root);
	json_t *man = NULL;
	if ((r = jig_json_parse_object(buf, len, "package manifest", &man, e)))
		return r;
	json_t *files = json_object_get(man, "files");
	struct jig_packs packs = {0};
	bool packs_loaded = false;
	for (size_t i = 0; r == 0 && i < json_array_size(files); i++) {
		json_t *fe = json_array_get(files, i);
		const char *path = json_string_value(json_object_get(fe, "path"));
		const char *sha = json_string_value(json_object_get(fe, "sha256"));
		int exec = json_is_true(json_object_get(fe, "exec"));
		if (!path || !sha || jig_package_path_rule(path)) {
			r = jig_err(e, JIG_E_INTEGRITY, "store: package %s: bad entry", package_sha256);
			break;
		}
		if (!wanted(path, want, n_want))
			continue;
		/* Parent directories. */
		char tmp[JIG_PACKAGE_PATH_MAX + 1];
		snprintf(tmp, sizeof(tmp), "%s", path);
		for (char *s = strchr(tmp, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			if (mkdirat(dirfd, tmp, 0755) < 0 && errno != EEXIST)
				r = jig_err(e, JIG_E_INTERNAL, "materialise %s: %s", tmp, strerror(errno));
			*s = '/';
		}
		char brel[128];
		snprintf(brel, sizeof(brel), "store/blobs/%s", sha);
		jig_autoclose int in = r ? -1 : openat(p->statefd, brel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (!r && in < 0 && errno == ENOENT) { /* not loose: from a pack */
			r = from_pack(p, &packs, &packs_loaded, dirfd, path, sha, exec, e);
			continue;
		}
		jig_autoclose int out = r ? -1 : jig_open_beneath(dirfd, path, O_WRONLY | O_CREAT | O_EXCL);
		if (!r && (in < 0 || out < 0))
			r = jig_err(e, JIG_E_INTEGRITY, "store: %s (%s): %s", path, sha, strerror(errno));
		struct jig_sha256_ctx *c = r ? NULL : jig_sha256_begin();
		char chunk[65536];
		ssize_t n;
		while (c && (n = read(in, chunk, sizeof(chunk))) > 0) {
			jig_sha256_update(c, chunk, (size_t)n);
			if (write(out, chunk, (size_t)n) != n) {
				r = jig_err(e, JIG_E_INTERNAL, "materialise %s: %s", path, strerror(errno));
				break;
			}
		}
		if (c) {
			unsigned char h[JIG_SHA256_LEN];
			char got[JIG_SHA256_HEX];
			jig_sha256_end(c, h);
			jig_hex(h, JIG_SHA256_LEN, got);
			if (!r && strcmp(got, sha) != 0)
				r = jig_err(e, JIG_E_INTEGRITY, "store: blob %s was altered; remove %s/.jig and review again", sha, p->root);
			if (!r)
				fchmod(out, exec ? 0555 : 0444);
		}
	}
	jig_packs_free(&packs);
	json_decref(man);
	return r;
}

int jig_store_materialise(const struct jig_project *p, const char *package_sha256, int dirfd,
			  struct jig_error *e)
{
	return materialise(p, package_sha256, dirfd, NULL, 0, e);
}

int jig_store_materialise_deps(const struct jig_project *p, const char *package_sha256, int dirfd,
			       struct jig_error *e)
{
	static const char *const first[] = {JIG_DEPS_MANIFEST, JIG_DEPS_LOCK};
	int r = materialise(p, package_sha256, dirfd, first, 2, e);
	if (r)
		return r;
	/* The patches package.json names: what deps.c reads besides. An
	 * unreadable or malformed manifest names none; deps.c refuses it. */
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error ignored = {0};
	json_t *m = NULL;
	if (jig_read_file_at(dirfd, JIG_DEPS_MANIFEST, JIG_DEPS_MANIFEST_MAX, JIG_DEPS_MANIFEST, &buf, &len, NULL, &ignored) < 0 ||
	    jig_json_parse_object(buf, len, JIG_DEPS_MANIFEST, &m, &ignored) < 0)
		return 0;
	json_t *patches = json_object_get(m, "patchedDependencies");
	const char *want[JIG_DEPS_MAX_PATCHES];
	size_t n = 0;
	const char *k;
	json_t *v;
	if (json_is_object(patches) && json_object_size(patches) <= JIG_DEPS_MAX_PATCHES)
		json_object_foreach(patches, k, v) {
			const char *path = json_string_value(v);
			if (path && jig_path_is_normal_relative(path) && !wanted(path, first, 2) && !wanted(path, want, n))
				want[n++] = path;
		}
	r = n ? materialise(p, package_sha256, dirfd, want, n, e) : 0;
	json_decref(m);
	return r;
}
