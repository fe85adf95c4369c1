#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/trace.h>

#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "signature.h"

/* <prefix> of the running executable (<prefix>/bin/jig, or one of jig's
 * programs in <prefix>/libexec/). The executable's own location is the
 * trusted input; no environment variable can redirect it. */
static int install_prefix(char exe[PATH_MAX], struct jig_error *e)
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	if (n < 0)
		return jig_err(e, JIG_E_INTERNAL, "/proc/self/exe: %s (is /proc mounted?)", strerror(errno));
	exe[n] = '\0';
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			return jig_err(e, JIG_E_INTERNAL, "cannot locate jig's installation from %s", exe);
		*slash = '\0';
	}
	return 0;
}

int jig_snapshot_default_libdir(char *out, size_t cap, struct jig_error *e)
{
	char exe[PATH_MAX];
	int rc = install_prefix(exe, e);
	if (rc)
		return rc;
	/* <prefix>/bin/jig -> <prefix>/lib/jig. */
	if ((size_t)snprintf(out, cap, "%s/lib/jig", exe[0] ? exe : "") >= cap)
		return jig_err(e, JIG_E_INTERNAL, "installation path too long");
	return 0;
}

int jig_program_open(const char *name, struct jig_error *e)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	struct stat self, st;
	int rc = install_prefix(exe, e);
	if (rc)
		return rc;
	if ((size_t)snprintf(path, sizeof(path), "%s/libexec/%s", exe, name) >= sizeof(path))
		return jig_err(e, JIG_E_INTERNAL, "installation path too long");
	if (stat("/proc/self/exe", &self) < 0)
		return jig_err(e, JIG_E_INTERNAL, "/proc/self/exe: %s (is /proc mounted?)", strerror(errno));
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "%s: %s; jig's installation is incomplete (reinstall jig)", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != self.st_uid) ||
	    (st.st_mode & 022)) {
		close(fd);
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s is not a regular file of root's or jig's owner, writable by no one else; it is not run",
			       path);
	}
	return fd;
}

static bool owner_ok(const struct jig_snapshot *s, uid_t uid)
{
	return uid == 0 || uid == s->installer_uid;
}

static int check_node(const struct jig_snapshot *s, const struct stat *st, const char *what,
		      struct jig_error *e)
{
	if (!owner_ok(s, st->st_uid))
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s: owned by uid %u, not root or the installing user (uid %u); reinstall the snapshot",
			       what, (unsigned)st->st_uid, (unsigned)s->installer_uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s: writable by group or others (mode %04o); reinstall the snapshot or chmod go-w",
			       what, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* The first dlen bytes of f's path, a directory beneath the snapshot,
 * opened one component at a time with every directory checked and no link
 * followed; dlen 0 is the snapshot directory itself. A descriptor the
 * caller owns, or < 0. */
static int open_parent(const struct jig_snapshot *s, const struct jig_manifest_file *f, size_t dlen,
		       const char *what, struct jig_error *e)
{
	char buf[256];
	if (dlen >= sizeof(buf))
		return jig_err(e, JIG_E_INTEGRITY, "%s: path too long", f->path);
	memcpy(buf, f->path, dlen);
	buf[dlen] = '\0';
	int cur = fcntl(s->dirfd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", what, strerror(errno));
	for (char *c = dlen ? buf : NULL; c;) {
		char *next = strchr(c, '/');
		if (next)
			*next++ = '\0';
		int fd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(cur);
		struct stat st;
		int r = fd < 0 ? jig_err(e, JIG_E_INTEGRITY,
					 saved == ELOOP || saved == ENOTDIR ? "%s: is a symbolic link or not the listed kind of file; refusing it%s"
									   : "%s: cannot open: %s",
					 what, saved == ELOOP || saved == ENOTDIR ? "" : strerror(saved))
			       : fstat(fd, &st) < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", what, strerror(errno))
						    : check_node(s, &st, what, e);
		if (r < 0) {
			if (fd >= 0)
				close(fd);
			return r;
		}
		cur = fd;
		c = next;
	}
	return cur;
}

/* What a listed file must be: a regular file (not a link), the installer's
 * or root's, not group- or world-writable, of the listed size. */
static int check_listed(const struct jig_snapshot *s, const struct jig_manifest_file *f, const struct stat *st,
			const char *what, struct jig_error *e)
{
	if (S_ISLNK(st->st_mode))
		return jig_err(e, JIG_E_INTEGRITY, "%s: is a symbolic link or not the listed kind of file; refusing it", what);
	int r = check_node(s, st, what, e);
	if (r == 0 && !S_ISREG(st->st_mode))
		r = jig_err(e, JIG_E_INTEGRITY, "%s: not a regular file", what);
	if (r == 0 && (uint64_t)st->st_size != f->size)
		r = jig_err(e, JIG_E_INTEGRITY, "%s: size %lld bytes, manifest lists %llu", what, (long long)st->st_size,
			    (unsigned long long)f->size);
	return r;
}

/* "a/b" (or "b" when a is empty) into out, without printf: it runs once
 * per listed file. Cut at cap - 1. */
static void join(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = 0;
	if (la) {
		n = la < cap - 1 ? la : cap - 1;
		memcpy(out, a, n);
		if (n < cap - 1)
			out[n++] = '/';
	}
	size_t m = lb < cap - 1 - n ? lb : cap - 1 - n;
	memcpy(out + n, b, m);
	out[n + m] = '\0';
}

static const char *base_name(const struct jig_manifest_file *f, size_t *dlen)
{
	const char *slash = strrchr(f->path, '/');
	*dlen = slash ? (size_t)(slash - f->path) : 0;
	return slash ? slash + 1 : f->path;
}

/* Walks rel beneath the snapshot directory, checking every directory on the
 * way and the final file; no symlink is followed anywhere. */
int jig_snapshot_open_file(const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   struct jig_error *e)
{
	char what[PATH_MAX + 300];
	snprintf(what, sizeof(what), "%s/%s", s->dirpath, f->path);
	size_t dlen;
	const char *base = base_name(f, &dlen);
	int dir = open_parent(s, f, dlen, what, e);
	if (dir < 0)
		return dir;
	int fd = openat(dir, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	int saved = errno;
	close(dir);
	if (fd < 0)
		return jig_err(e, JIG_E_INTEGRITY,
			       saved == ELOOP ? "%s: is a symbolic link or not the listed kind of file; refusing it%s" : "%s: cannot open: %s",
			       what, saved == ELOOP ? "" : strerror(saved));
	struct stat st;
	int r = fstat(fd, &st) < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", what, strerror(errno))
				   : check_listed(s, f, &st, what, e);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int jig_snapshot_stat_file(const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   struct jig_snapshot_dirmemo *memo, struct stat *st, struct jig_error *e)
{
	char what[PATH_MAX + 300];
	join(what, sizeof(what), s->dirpath, f->path);
	size_t dlen;
	const char *base = base_name(f, &dlen);
	if (dlen >= sizeof(memo->dir))
		return jig_err(e, JIG_E_INTEGRITY, "%s: path too long", what);
	if (memo->fd < 0 || strlen(memo->dir) != dlen || memcmp(memo->dir, f->path, dlen) != 0) {
		if (memo->fd >= 0)
			close(memo->fd);
		memo->dir[0] = '\0';
		if ((memo->fd = open_parent(s, f, dlen, what, e)) < 0)
			return memo->fd;
		memcpy(memo->dir, f->path, dlen);
		memo->dir[dlen] = '\0';
	}
	if (fstatat(memo->fd, base, st, AT_SYMLINK_NOFOLLOW) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s: cannot stat: %s", what, strerror(errno));
	return check_listed(s, f, st, what, e);
}

static int open_common(struct jig_snapshot *s, int dirfd, const char *dirpath, uid_t installer,
		       const struct jig_signature_memo *memo, struct jig_error *e)
{
	char what[PATH_MAX + 64];
	jig_autofree char *sig = NULL;
	jig_autofree char *files = NULL;
	size_t slen, flen;
	int r;
	memset(s, 0, sizeof(*s));
	s->dirfd = dirfd;
	s->installer_uid = installer;
	if (!(s->dirpath = strdup(dirpath))) {
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		goto fail;
	}
	struct stat st;
	if (fstat(dirfd, &st) < 0) {
		r = jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", dirpath, strerror(errno));
		goto fail;
	}
	if ((r = check_node(s, &st, dirpath, e)) < 0)
		goto fail;
	snprintf(what, sizeof(what), "%s/manifest.json", dirpath);
	if ((r = jig_read_file_at(dirfd, "manifest.json", JIG_MANIFEST_MAX_BYTES, what,
				  &s->manifest_bytes, &s->manifest_len, &st, e)) < 0 ||
	    (r = check_node(s, &st, what, e)) < 0)
		goto fail;
	snprintf(what, sizeof(what), "%s/manifest.sig", dirpath);
	if ((r = jig_read_file_at(dirfd, "manifest.sig", JIG_SIG_MAX_BYTES, what, &sig, &slen, &st,
				  e)) < 0 ||
	    (r = check_node(s, &st, what, e)) < 0)
		goto fail;
	/* The signature gates everything: nothing in the manifest is believed,
	 * not even its JSON structure, before it verifies. */
	if ((r = jig_signature_verify_memo(s->manifest_bytes, s->manifest_len, sig, slen, &s->anchor,
					   s->keyid, memo, e)) < 0)
		goto fail;
	JIG_TRACE_POINT("snapshot: manifest read, signature verified");
	jig_sha256(s->manifest_bytes, s->manifest_len, s->manifest_sha256);
	snprintf(what, sizeof(what), "%s/manifest.files", dirpath);
	if ((r = jig_read_file_at(dirfd, "manifest.files", JIG_MANIFEST_MAX_BYTES, what, &files, &flen,
				  &st, e)) < 0 ||
	    (r = check_node(s, &st, what, e)) < 0)
		goto fail;
	if ((r = jig_manifest_parse(&s->m, s->manifest_bytes, s->manifest_len, files, flen, e)) < 0)
		goto fail;
	JIG_TRACE_POINT("snapshot: manifest parsed");
	if (strcmp(s->m.platform, jig_host_platform()) != 0) {
		r = jig_err(e, JIG_E_INTEGRITY,
			    "%s: snapshot is for platform %s, this host is %s; install the snapshot built for this host",
			    dirpath, s->m.platform, jig_host_platform());
		goto fail;
	}
	return 0;
fail:
	s->dirfd = -1; /* the caller owns dirfd on failure */
	jig_snapshot_close(s);
	return r;
}

int jig_snapshot_open_dir(struct jig_snapshot *s, const char *dirpath, struct jig_error *e)
{
	return jig_snapshot_open_dir_memo(s, dirpath, NULL, e);
}

int jig_snapshot_open_dir_memo(struct jig_snapshot *s, const char *dirpath, const struct jig_signature_memo *memo,
			       struct jig_error *e)
{
	int fd = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: cannot open snapshot directory: %s", dirpath,
			       strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", dirpath, strerror(errno));
	}
	int r = open_common(s, fd, dirpath, st.st_uid, memo, e);
	if (r < 0)
		close(fd);
	return r;
}

int jig_snapshot_state_read(int libfd, struct jig_snapshot_state *st, bool *present,
			    struct jig_error *e)
{
	static const char *const keys[] = {"format", "sequence", "manifest_sha256", NULL};
	jig_autofree char *buf = NULL;
	size_t len;
	*present = false;
	int probe = openat(libfd, JIG_STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (probe < 0 && errno == ENOENT)
		return 0;
	if (probe >= 0)
		close(probe);
	int r = jig_read_file_at(libfd, JIG_STATE_FILE, 4096, "install record " JIG_STATE_FILE,
				 &buf, &len, NULL, e);
	if (r < 0)
		return r;
	json_t *o = NULL;
	const char *fmt, *sha;
	if ((r = jig_json_parse_object(buf, len, "install record", &o, e)) < 0)
		return r;
	if ((r = jig_json_only_keys(o, keys, "install record", e)) < 0 ||
	    (r = jig_json_get_string(o, "format", "install record", &fmt, e)) < 0 ||
	    (r = jig_json_get_uint(o, "sequence", "install record", 1, JIG_SEQUENCE_MAX,
				   &st->sequence, e)) < 0 ||
	    (r = jig_json_get_string(o, "manifest_sha256", "install record", &sha, e)) < 0)
		goto out;
	if (strcmp(fmt, JIG_STATE_FORMAT) != 0 || jig_unhex(sha, st->manifest_sha256, JIG_SHA256_LEN) < 0) {
		r = jig_err(e, JIG_E_INTEGRITY, "install record: malformed; reinstall the snapshot");
		goto out;
	}
	*present = true;
	r = 0;
out:
	json_decref(o);
	return r;
}

int jig_snapshot_check_state(const struct jig_snapshot *s, const struct jig_snapshot_state *st,
			     struct jig_error *e)
{
	if (s->m.sequence < st->sequence)
		return jig_err(e, JIG_E_INTEGRITY,
			       "snapshot %s: rollback refused: sequence %llu is lower than the accepted sequence %llu",
			       s->m.id, (unsigned long long)s->m.sequence,
			       (unsigned long long)st->sequence);
	if (s->m.sequence == st->sequence &&
	    memcmp(s->manifest_sha256, st->manifest_sha256, JIG_SHA256_LEN) != 0) {
		char want[JIG_SHA256_HEX], got[JIG_SHA256_HEX];
		jig_hex(st->manifest_sha256, JIG_SHA256_LEN, want);
		jig_hex(s->manifest_sha256, JIG_SHA256_LEN, got);
		return jig_err(e, JIG_E_INTEGRITY,
			       "snapshot %s: sequence %llu was accepted with manifest sha256 %s, this one is %s; refusing the substitute",
			       s->m.id, (unsigned long long)s->m.sequence, want, got);
	}
	return 0;
}

int jig_snapshot_open_installed(struct jig_snapshot *s, const char *libdir, struct jig_error *e)
{
	return jig_snapshot_open_installed_memo(s, libdir, NULL, e);
}

int jig_snapshot_open_installed_memo(struct jig_snapshot *s, const char *libdir, const struct jig_signature_memo *memo,
				     struct jig_error *e)
{
	jig_autoclose int libfd = open(libdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (libfd < 0)
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s: no jig installation here (%s); install a snapshot with 'jig-snapshot install'",
			       libdir, strerror(errno));
	struct stat st;
	if (fstat(libfd, &st) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", libdir, strerror(errno));
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return jig_err(e, JIG_E_INTEGRITY, "%s: writable by group or others (mode %04o); chmod go-w",
			       libdir, (unsigned)(st.st_mode & 07777));
	uid_t installer = st.st_uid;

	/* current is the one symlink jig reads, and it must say exactly
	 * "snapshots/<id>"; it is never followed by the kernel. */
	char target[128];
	ssize_t n = readlinkat(libfd, "current", target, sizeof(target) - 1);
	if (n < 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s/current: %s; install a snapshot with 'jig-snapshot install'",
			       libdir, errno == EINVAL ? "not a symbolic link" : strerror(errno));
	target[n] = '\0';
	const char *id = target + strlen("snapshots/");
	if (strncmp(target, "snapshots/", strlen("snapshots/")) != 0 || !jig_name_is_valid(id))
		return jig_err(e, JIG_E_INTEGRITY, "%s/current: points to \"%s\", not snapshots/<id>",
			       libdir, target);
	jig_autoclose int snaps = openat(libfd, "snapshots", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (snaps < 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s/snapshots: %s", libdir, strerror(errno));
	struct jig_snapshot probe = {.installer_uid = installer};
	if (fstat(snaps, &st) < 0 || check_node(&probe, &st, "snapshots directory", e) < 0)
		return -JIG_E_INTEGRITY;
	int dirfd = openat(snaps, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/snapshots/%s", libdir, id);
	if (dirfd < 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s: %s", path,
			       errno == ELOOP || errno == ENOTDIR ? "not a directory (symbolic link?)" : strerror(errno));
	int r = open_common(s, dirfd, path, installer, memo, e);
	if (r < 0) {
		close(dirfd);
		return r;
	}
	if (strcmp(s->m.id, id) != 0) {
		r = jig_err(e, JIG_E_INTEGRITY, "%s: manifest id is \"%s\", directory is \"%s\"", path,
			    s->m.id, id);
		goto fail;
	}
	struct jig_snapshot_state state;
	bool present;
	if ((r = jig_snapshot_state_read(libfd, &state, &present, e)) < 0)
		goto fail;
	if (!present) {
		r = jig_err(e, JIG_E_INTEGRITY,
			    "%s/" JIG_STATE_FILE ": missing, so rollback cannot be checked; install the snapshot with 'jig-snapshot install'",
			    libdir);
		goto fail;
	}
	if ((r = jig_snapshot_check_state(s, &state, e)) < 0)
		goto fail;
	if (s->m.sequence > state.sequence) {
		r = jig_err(e, JIG_E_INTEGRITY,
			    "snapshot %s: sequence %llu was not installed through 'jig-snapshot install' (the record says %llu)",
			    s->m.id, (unsigned long long)s->m.sequence, (unsigned long long)state.sequence);
		goto fail;
	}
	return 0;
fail:
	jig_snapshot_close(s);
	return r;
}

void jig_snapshot_close(struct jig_snapshot *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	s->dirfd = -1;
	free(s->dirpath);
	free(s->manifest_bytes);
	jig_manifest_free(&s->m);
	s->dirpath = NULL;
	s->manifest_bytes = NULL;
}

/* Every entry under the snapshot directory must be listed (or be one of the
 * manifest files or a directory on a listed path). */
static int walk_unlisted(const struct jig_snapshot *s, int dirfd, const char *prefix, int depth,
			 struct jig_error *e)
{
	if (depth > 16)
		return jig_err(e, JIG_E_INTEGRITY, "%s/%s: directories nested too deeply", s->dirpath, prefix);
	int fd = dup(dirfd);
	if (fd < 0)
		return jig_err(e, JIG_E_INTERNAL, "dup: %s", strerror(errno));
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", s->dirpath, strerror(errno));
	}
	rewinddir(d);
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char rel[512];
		join(rel, sizeof(rel), prefix, de->d_name);
		if (!*prefix && jig_manifest_is_reserved(rel))
			continue;
		if (jig_manifest_find_file(&s->m, rel))
			continue;
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = jig_err(e, JIG_E_INTERNAL, "%s/%s: %s", s->dirpath, rel, strerror(errno));
			break;
		}
		/* A directory on some listed file's path: the first path after
		 * "rel/" in sort order starts with it ('/' sorts before any name
		 * character a normalised path has, except '-' and '.'). */
		bool on_path = false;
		size_t n = strlen(rel);
		size_t lo = 0, hi = s->m.nfiles;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int c = strncmp(s->m.files[mid].path, rel, n);
			if (c < 0 || (c == 0 && (unsigned char)s->m.files[mid].path[n] < '/'))
				lo = mid + 1;
			else
				hi = mid;
		}
		on_path = lo < s->m.nfiles && strncmp(s->m.files[lo].path, rel, n) == 0 && s->m.files[lo].path[n] == '/';
		if (!S_ISDIR(st.st_mode) || !on_path) {
			r = jig_err(e, JIG_E_INTEGRITY,
				    "%s/%s: not listed in the manifest; remove it or reinstall the snapshot",
				    s->dirpath, rel);
			break;
		}
		int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = jig_err(e, JIG_E_INTEGRITY, "%s/%s: %s", s->dirpath, rel, strerror(errno));
			break;
		}
		r = walk_unlisted(s, sub, rel, depth + 1, e);
		close(sub);
	}
	closedir(d);
	return r;
}

/* Opens f and checks its bytes against the manifest; the fd, or < 0. */
int jig_snapshot_open_hashed(const struct jig_snapshot *s, const struct jig_manifest_file *f, struct jig_error *e)
{
	int fd = jig_snapshot_open_file(s, f, e);
	if (fd < 0)
		return fd;
	unsigned char got[JIG_SHA256_LEN];
	uint64_t size;
	int r = 0;
	if (jig_sha256_fd(fd, &size, got) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s/%s: read: %s", s->dirpath, f->path, strerror(errno));
	else if (size != f->size || memcmp(got, f->sha256, JIG_SHA256_LEN) != 0) {
		char want[JIG_SHA256_HEX], have[JIG_SHA256_HEX];
		jig_hex(f->sha256, JIG_SHA256_LEN, want);
		jig_hex(got, JIG_SHA256_LEN, have);
		r = jig_err(e, JIG_E_INTEGRITY,
			    "%s/%s: sha256 %s, manifest lists %s; the file was altered, reinstall the snapshot",
			    s->dirpath, f->path, have, want);
	}
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

int jig_snapshot_open_listed(const struct jig_snapshot *s, const char *path, bool hash, struct jig_error *e)
{
	for (size_t i = 0; i < s->m.nfiles; i++)
		if (strcmp(s->m.files[i].path, path) == 0)
			return hash ? jig_snapshot_open_hashed(s, &s->m.files[i], e) : jig_snapshot_open_file(s, &s->m.files[i], e);
	return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; reinstall jig", s->m.id, path);
}

int jig_snapshot_check_unlisted(const struct jig_snapshot *s, struct jig_error *e)
{
	return walk_unlisted(s, s->dirfd, "", 0, e);
}
