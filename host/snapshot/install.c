#include "install.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/module.h>

#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "manifest.h"
#include "signature.h"
#include "snapshot.h"
#include "verify.h"

static int walk_files(int dirfd, const char *prefix, json_t *files, int depth, struct jig_error *e)
{
	if (depth > 16)
		return jig_err(e, JIG_E_USAGE, "%s: nested too deeply", prefix);
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return jig_err(e, JIG_E_INTERNAL, "readdir: %s", strerror(errno));
	}
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char rel[512];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", de->d_name);
		if (!*prefix && jig_manifest_is_reserved(rel))
			continue;
		if (!jig_path_is_normal_relative(rel)) {
			r = jig_err(e, JIG_E_USAGE, "%s: name not allowed in a snapshot", rel);
			break;
		}
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
				break;
			}
			r = walk_files(sub, rel, files, depth + 1, e);
			close(sub);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			r = jig_err(e, JIG_E_USAGE, "%s: only regular files and directories can be in a snapshot", rel);
			break;
		}
		int ffd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		unsigned char sha[JIG_SHA256_LEN];
		uint64_t size;
		if (ffd < 0 || jig_sha256_fd(ffd, &size, sha) < 0) {
			if (ffd >= 0)
				close(ffd);
			r = jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
			break;
		}
		close(ffd);
		char hex[JIG_SHA256_HEX];
		jig_hex(sha, JIG_SHA256_LEN, hex);
		json_array_append_new(files, json_pack("{s:s,s:I,s:s}", "path", rel, "size",
						       (json_int_t)size, "sha256", hex));
	}
	closedir(d);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
		      json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

/* The manifest's file list: "<sha256> <size> <path>\n" per file, sorted by
 * path in byte order. */
static char *file_lines(json_t *files)
{
	size_t n = json_array_size(files), cap = 1;
	json_t **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		v[i] = json_array_get(files, i);
		cap += strlen(json_string_value(json_object_get(v[i], "path"))) + JIG_SHA256_HEX + 24;
	}
	qsort(v, n, sizeof(*v), by_path);
	char *out = malloc(cap);
	size_t len = 0;
	for (size_t i = 0; out && i < n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s %llu %s\n",
					json_string_value(json_object_get(v[i], "sha256")),
					(unsigned long long)json_integer_value(json_object_get(v[i], "size")),
					json_string_value(json_object_get(v[i], "path")));
	if (out)
		out[len] = '\0';
	free(v);
	return out;
}

static int write_replace(int dirfd, const char *name, const char *data, size_t len, struct jig_error *e)
{
	char tmp[128];
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(dirfd, tmp, 0);
	int r = jig_write_file_at(dirfd, tmp, data, len, 0644, e);
	if (r < 0)
		return r;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		unlinkat(dirfd, tmp, 0);
		return jig_err(e, JIG_E_INTERNAL, "%s: rename: %s", name, strerror(errno));
	}
	return 0;
}

int jig_snapshot_create(const char *dir, const char *id, uint64_t sequence, const char *platform,
			const struct jig_create_module *mods, size_t nmods, struct jig_error *e)
{
	jig_autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", dir, strerror(errno));
	json_t *files = json_array(), *modules = json_array();
	int r = walk_files(dfd, "", files, 0, e);
	for (size_t i = 0; r == 0 && i < nmods; i++) {
		char abi[16];
		snprintf(abi, sizeof(abi), "%u.%u", mods[i].abi_major, mods[i].abi_minor);
		json_array_append_new(modules, json_pack("{s:s,s:s,s:s,s:i,s:i,s:s}", "name", mods[i].name,
							 "kind", mods[i].kind, "path", mods[i].path,
							 "abi_major", (int)mods[i].abi_major, "abi_minor",
							 (int)mods[i].abi_minor, "platform", platform));
	}
	char *lines = r < 0 ? NULL : file_lines(files);
	json_decref(files);
	if (r < 0 || !lines) {
		json_decref(modules);
		return r < 0 ? r : jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	size_t flen = strlen(lines);
	unsigned char sha[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(lines, flen, sha);
	jig_hex(sha, sizeof(sha), hex);
	json_t *doc = json_pack("{s:s,s:s,s:I,s:s,s:s,s:I,s:o}", "format", JIG_MANIFEST_FORMAT, "id", id,
				"sequence", (json_int_t)sequence, "platform", platform, "files_sha256", hex,
				"files_size", (json_int_t)flen, "modules", modules);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (!text) {
		free(lines);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	size_t len = strlen(text);
	/* Validate what we write with the same parser jig uses. */
	struct jig_manifest m;
	r = jig_manifest_parse(&m, text, len, lines, flen, e);
	if (r == 0) {
		jig_manifest_free(&m);
		if ((r = write_replace(dfd, "manifest.files", lines, flen, e)) == 0)
			r = write_replace(dfd, "manifest.json", text, len, e);
	}
	free(lines);
	free(text);
	return r;
}

int jig_signature_make(const char *manifest, size_t mlen, const char *key_path, char **out,
		       char keyid[JIG_KEYID_HEX], struct jig_error *e)
{
	size_t n;
	jig_autofree unsigned char *msg = jig_signature_message(manifest, mlen, &n);
	unsigned char sig[JIG_ED25519_SIG_LEN], pub[JIG_ED25519_PUB_LEN];
	if (!msg)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	int r = jig_ed25519_sign_with_file(key_path, msg, n, sig, pub, e);
	if (r < 0)
		return r;
	char sighex[129];
	jig_hex(sig, sizeof(sig), sighex);
	jig_keyid(pub, keyid);
	char *text = NULL;
	if (asprintf(&text, "%s%s %s\n", JIG_SIG_PREFIX, keyid, sighex) < 0)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	*out = text;
	return 0;
}

int jig_snapshot_sign(const char *dir, const char *key_path, char keyid_out[17], struct jig_error *e)
{
	jig_autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", dir, strerror(errno));
	jig_autofree char *m = NULL;
	jig_autofree char *files = NULL;
	jig_autofree char *sig = NULL;
	size_t len, flen;
	int r = jig_read_file_at(dfd, "manifest.json", JIG_MANIFEST_MAX_BYTES, "manifest.json", &m,
				 &len, NULL, e);
	if (r < 0 || (r = jig_read_file_at(dfd, "manifest.files", JIG_MANIFEST_MAX_BYTES,
					    "manifest.files", &files, &flen, NULL, e)) < 0)
		return r;
	struct jig_manifest parsed;
	if ((r = jig_manifest_parse(&parsed, m, len, files, flen, e)) < 0)
		return r;
	jig_manifest_free(&parsed);
	if ((r = jig_signature_make(m, len, key_path, &sig, keyid_out, e)) < 0)
		return r;
	return write_replace(dfd, "manifest.sig", sig, strlen(sig), e);
}

static int remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : unlinkat(parent, name, 0);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR)
			remove_tree(dirfd(d), de->d_name);
		else
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	return unlinkat(parent, name, AT_REMOVEDIR);
}

static int mkdir_p(const char *path, struct jig_error *e)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof(buf))
		return jig_err(e, JIG_E_USAGE, "%s: path too long", path);
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return jig_err(e, JIG_E_USAGE, "%s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_USAGE, "%s: %s", buf, strerror(errno));
	return 0;
}

static int copy_file(int srcdir, const char *rel, int dstroot, struct jig_error *e)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", rel);
	/* Create parent directories beneath dstroot. */
	int cur = dup(dstroot);
	char *c = buf;
	for (char *slash; cur >= 0 && (slash = strchr(c, '/')); c = slash + 1) {
		*slash = '\0';
		mkdirat(cur, c, 0755);
		int next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		cur = next;
	}
	if (cur < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: cannot create directory: %s", rel, strerror(errno));
	jig_autoclose int dcur = cur;
	jig_autoclose int in = jig_open_beneath(srcdir, rel, O_RDONLY);
	if (in < 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s: cannot open: %s", rel, strerror(errno));
	jig_autoclose int out = openat(dcur, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: cannot create: %s", rel, strerror(errno));
	char chunk[1 << 16];
	for (;;) {
		ssize_t n = read(in, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return jig_err(e, JIG_E_INTERNAL, "%s: read: %s", rel, strerror(errno));
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, chunk + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return jig_err(e, JIG_E_INTERNAL, "%s: write: %s", rel, strerror(errno));
			off += w;
		}
	}
	/* Helpers under libexec/ are executed (bound into scopes); nothing in a
	 * snapshot is ever writable but by its owner. */
	mode_t mode = strncmp(rel, "libexec/", 8) == 0 ? 0755 : 0644;
	if (fchmod(out, mode) < 0 || fsync(out) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
	return 0;
}

int jig_snapshot_install(const char *dir, const char *prefix, struct jig_error *e)
{
	struct jig_snapshot src, staged;
	char libdir[PATH_MAX], snapdir[PATH_MAX + 16], stagepath[PATH_MAX + 160], stagename[128];
	jig_autoclose int libfd = -1;
	jig_autoclose int snapfd = -1;
	int r = jig_snapshot_open_dir(&src, dir, e);
	if (r < 0)
		return r;
	if ((r = jig_snapshot_verify_all(&src, NULL, e)) < 0)
		goto out_src;
	snprintf(libdir, sizeof(libdir), "%s/lib/jig", prefix);
	snprintf(snapdir, sizeof(snapdir), "%s/snapshots", libdir);
	if ((r = mkdir_p(snapdir, e)) < 0)
		goto out_src;
	libfd = open(libdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snapfd = openat(libfd, "snapshots", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (libfd < 0 || snapfd < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "%s: %s", snapdir, strerror(errno));
		goto out_src;
	}
	/* Rollback protection at install time, against the record. */
	struct jig_snapshot_state state;
	bool present;
	if ((r = jig_snapshot_state_read(libfd, &state, &present, e)) < 0)
		goto out_src;
	if (present && (r = jig_snapshot_check_state(&src, &state, e)) < 0)
		goto out_src;

	snprintf(stagename, sizeof(stagename), ".staging-%s", src.m.id);
	remove_tree(snapfd, stagename); /* leftovers of an interrupted install */
	if (mkdirat(snapfd, stagename, 0755) < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "%s/%s: %s", snapdir, stagename, strerror(errno));
		goto out_src;
	}
	int stfd = openat(snapfd, stagename, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (stfd < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "%s/%s: %s", snapdir, stagename, strerror(errno));
		goto out_stage;
	}
	for (size_t i = 0; r == 0 && i < src.m.nfiles; i++)
		r = copy_file(src.dirfd, src.m.files[i].path, stfd, e);
	if (r == 0)
		r = copy_file(src.dirfd, "manifest.files", stfd, e);
	if (r == 0)
		r = copy_file(src.dirfd, "manifest.json", stfd, e);
	if (r == 0)
		r = copy_file(src.dirfd, "manifest.sig", stfd, e);
	fsync(stfd);
	close(stfd);
	if (r < 0)
		goto out_stage;

	/* The copy is what jig will load: verify it, not the source. */
	snprintf(stagepath, sizeof(stagepath), "%s/%s", snapdir, stagename);
	if ((r = jig_snapshot_open_dir(&staged, stagepath, e)) < 0)
		goto out_stage;
	r = jig_snapshot_verify_all(&staged, NULL, e);
	if (r == 0 && memcmp(staged.manifest_sha256, src.manifest_sha256, JIG_SHA256_LEN) != 0)
		r = jig_err(e, JIG_E_INTEGRITY, "%s: manifest changed while installing", stagepath);
	jig_snapshot_close(&staged);
	if (r < 0)
		goto out_stage;

	if (renameat2(snapfd, stagename, snapfd, src.m.id, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST) {
			r = jig_err(e, JIG_E_INTERNAL, "%s/%s: %s", snapdir, src.m.id, strerror(errno));
			goto out_stage;
		}
		/* Reinstalling the very same snapshot is fine; another one under
		 * the same id is not. */
		struct jig_snapshot old;
		char oldpath[PATH_MAX + 160];
		snprintf(oldpath, sizeof(oldpath), "%s/%s", snapdir, src.m.id);
		if ((r = jig_snapshot_open_dir(&old, oldpath, e)) == 0) {
			if (memcmp(old.manifest_sha256, src.manifest_sha256, JIG_SHA256_LEN) != 0)
				r = jig_err(e, JIG_E_INTEGRITY,
					    "%s: another snapshot with id %s is installed; give the new one a new id",
					    oldpath, src.m.id);
			else
				r = jig_snapshot_verify_all(&old, NULL, e);
			jig_snapshot_close(&old);
		}
		if (r < 0)
			goto out_stage;
		remove_tree(snapfd, stagename);
	}
	fsync(snapfd);

	/* Record first, then switch: a crash between the two leaves an install
	 * jig refuses (older current than the record), never an accepted rollback. */
	char sha[JIG_SHA256_HEX], *rec = NULL, target[128];
	jig_hex(src.manifest_sha256, JIG_SHA256_LEN, sha);
	if (asprintf(&rec, "{\"format\": \"%s\", \"sequence\": %llu, \"manifest_sha256\": \"%s\"}\n",
		     JIG_STATE_FORMAT, (unsigned long long)src.m.sequence, sha) < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		goto out_src;
	}
	r = write_replace(libfd, JIG_STATE_FILE, rec, strlen(rec), e);
	free(rec);
	if (r < 0)
		goto out_src;
	snprintf(target, sizeof(target), "snapshots/%s", src.m.id);
	unlinkat(libfd, ".current.new", 0);
	if (symlinkat(target, libfd, ".current.new") < 0 ||
	    renameat(libfd, ".current.new", libfd, "current") < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "%s/current: cannot switch: %s", libdir, strerror(errno));
		goto out_src;
	}
	fsync(libfd);
	r = 0;
	goto out_src;
out_stage:
	remove_tree(snapfd, stagename);
out_src:
	jig_snapshot_close(&src);
	return r;
}
