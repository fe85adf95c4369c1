/* The per-launch policy cache's files (session/runtime.h):
 * $XDG_RUNTIME_DIR/jig/cache/<sha256>.json. An entry is trusted only after
 * every check; one that fails a check is deleted and the launch fails. */
#include "session/runtime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/limits.h"

#define TMP_PREFIX ".tmp-"

static bool digest_ok(const char *h)
{
	unsigned char raw[JIG_SHA256_LEN];
	return h && strlen(h) == 64 && jig_unhex(h, raw, sizeof(raw)) == 0;
}

/* The cache directory (created 0700, checked), the entry's name and path. */
static int cache_dir(const char *sha256, char *name, size_t ncap, struct jig_policy_cache_ent *ent, struct jig_error *e)
{
	char dir[4096];
	if (!digest_ok(sha256))
		return jig_err(e, JIG_E_INTERNAL, "the policy cache: \"%.80s\" is not a SHA-256 in lowercase hex", sha256 ? sha256 : "");
	int fd = jig_runtime_jig_dir("cache", dir, sizeof(dir), e);
	if (fd < 0)
		return fd;
	snprintf(name, ncap, "%s.json", sha256);
	memset(ent, 0, sizeof(*ent));
	snprintf(ent->path, sizeof(ent->path), "%.4000s/%s", dir, name);
	return fd;
}

/* Every check of an open entry; 0 with *buf, or -code (the caller deletes it). */
static int check_fd(int fd, const struct jig_policy_cache_ent *ent, const char *sha256, char **buf, size_t *len, struct stat *st,
		    struct jig_error *e)
{
	unsigned char sum[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	if (fstat(fd, st) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s: %s", ent->path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s is not a regular file", ent->path);
	if (st->st_uid != geteuid())
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s is owned by uid %u, not the caller", ent->path, (unsigned)st->st_uid);
	if ((st->st_mode & 07777) != 0600)
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s has mode %04o, not 0600", ent->path, (unsigned)(st->st_mode & 07777));
	if (st->st_nlink != 1)
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s has %lu links, not 1 (a hard link)", ent->path,
			       (unsigned long)st->st_nlink);
	if (jig_read_fd(fd, JIG_POLICY_CACHE_MAX_BYTES, ent->path, buf, len, NULL, e) < 0)
		return jig_err_prefix(e, JIG_E_INTEGRITY, "the policy cache entry ");
	jig_sha256(*buf, *len, sum);
	jig_hex(sum, sizeof(sum), hex);
	if (strcmp(hex, sha256) != 0 || (off_t)*len != st->st_size) {
		free(*buf);
		*buf = NULL;
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s: its content's SHA-256 is not its name (tampered)", ent->path);
	}
	return 0;
}

/* Deletes the entry name (whatever it is) and returns r. */
static int drop(int dfd, const char *name, int r)
{
	if (unlinkat(dfd, name, 0) < 0 && (errno == EISDIR || errno == EPERM))
		jig_remove_tree(dfd, name);
	return r;
}

/* Opens name in dfd and checks it; 1 when there is none. */
static int open_checked(int dfd, const char *name, const char *sha256, struct jig_policy_cache_ent *ent, char **buf, size_t *len,
			struct jig_error *e)
{
	struct stat st;
	jig_autoclose int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 && (errno == ELOOP || errno == EMLINK))
		return drop(dfd, name, jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s is a symbolic link; deleted it", ent->path));
	if (fd < 0)
		return drop(dfd, name, jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s: %s; deleted it", ent->path, strerror(errno)));
	struct jig_error why = {0};
	if (check_fd(fd, ent, sha256, buf, len, &st, &why) < 0)
		return drop(dfd, name, jig_err(e, JIG_E_INTEGRITY, "%s; deleted it (the launch stops: an entry is never regenerated silently)", why.msg));
	ent->dev = st.st_dev;
	ent->ino = st.st_ino;
	ent->size = st.st_size;
	return 0;
}

/* Deletes the temporary files of writers that died (their lock is free). */
static void clean_temporaries(int dfd)
{
	DIR *d = fdopendir(dup(dfd));
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
			continue;
		jig_autoclose int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dfd, de->d_name, 0);
	}
	if (d)
		closedir(d);
}

/* A locked, written, synced 0600 temporary file, named in tmp. */
static int write_temporary(int dfd, const char *buf, size_t len, char *tmp, size_t cap, struct jig_error *e)
{
	unsigned char rnd[12];
	char hex[25];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return jig_err(e, JIG_E_INTERNAL, "getrandom: %s", strerror(errno));
	jig_hex(rnd, sizeof(rnd), hex);
	snprintf(tmp, cap, TMP_PREFIX "%s", hex);
	int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "the policy cache: cannot create a temporary file: %s", strerror(errno));
	size_t done = 0;
	/* Waits out a cleaner that took the lock in the instant before ours
	 * (it then deletes the name: the rename fails and the caller writes
	 * again). */
	bool ok = flock(fd, LOCK_EX) == 0 && fchmod(fd, 0600) == 0;
	while (ok && done < len) {
		ssize_t n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0;
		done += ok ? (size_t)n : 0;
	}
	if (!ok || fsync(fd) < 0) {
		int err = errno;
		unlinkat(dfd, tmp, 0);
		close(fd);
		return jig_err(e, JIG_E_HOST, "the policy cache: cannot write a temporary file: %s", strerror(err ? err : EIO));
	}
	return fd; /* kept open (and locked) until it has its name */
}

int jig_policy_cache_put(const char *sha256, const char *buf, size_t len, struct jig_policy_cache_ent *ent, struct jig_error *e)
{
	char name[80], tmp[40];
	unsigned char sum[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	if (len > JIG_POLICY_CACHE_MAX_BYTES)
		return jig_err(e, JIG_E_INTERNAL, "the policy cache: %zu bytes, more than the %u allowed", len, (unsigned)JIG_POLICY_CACHE_MAX_BYTES);
	jig_sha256(buf, len, sum);
	jig_hex(sum, sizeof(sum), hex);
	if (!digest_ok(sha256) || strcmp(hex, sha256) != 0)
		return jig_err(e, JIG_E_INTERNAL, "the policy cache: the bytes to cache do not have the SHA-256 %.80s", sha256 ? sha256 : "");
	jig_autoclose int dfd = cache_dir(sha256, name, sizeof(name), ent, e);
	if (dfd < 0)
		return dfd;
	clean_temporaries(dfd);
	int rn = -1, err = ENOENT;
	/* Another launch's cleaning may take a temporary file in the instant
	 * between its creation and its lock: written again then. */
	for (int tries = 0; rn < 0 && err == ENOENT && tries < 3; tries++) {
		int tfd = write_temporary(dfd, buf, len, tmp, sizeof(tmp), e);
		if (tfd < 0)
			return tfd;
		/* Never over an entry that is there: another launch may be about
		 * to recheck it. The one there is checked like any hit instead. */
		rn = renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE);
		err = errno;
		if (rn < 0)
			unlinkat(dfd, tmp, 0);
		close(tfd);
	}
	if (rn < 0 && err != EEXIST)
		return jig_err(e, JIG_E_HOST, "the policy cache: cannot rename the entry into place: %s", strerror(err));
	jig_autofree char *back = NULL;
	size_t blen = 0;
	int r = open_checked(dfd, name, sha256, ent, &back, &blen, e);
	if (r == 1)
		return jig_err(e, JIG_E_HOST, "the policy cache entry %s vanished as it was written (another launch deleted it); try again", ent->path);
	if (r == 0 && (blen != len || memcmp(back, buf, len) != 0))
		return drop(dfd, name, jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s does not hold the bytes written; deleted it", ent->path));
	return r;
}

int jig_policy_cache_get(const char *sha256, char **buf, size_t *len, struct jig_policy_cache_ent *ent, struct jig_error *e)
{
	char name[80];
	*buf = NULL;
	*len = 0;
	jig_autoclose int dfd = cache_dir(sha256, name, sizeof(name), ent, e);
	if (dfd < 0)
		return dfd;
	clean_temporaries(dfd);
	return open_checked(dfd, name, sha256, ent, buf, len, e);
}

int jig_policy_cache_recheck(const struct jig_policy_cache_ent *ent, const char *sha256, struct jig_error *e)
{
	char name[80];
	struct jig_policy_cache_ent now;
	jig_autofree char *buf = NULL;
	size_t len;
	jig_autoclose int dfd = cache_dir(sha256, name, sizeof(name), &now, e);
	if (dfd < 0)
		return dfd;
	if (strcmp(now.path, ent->path) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s is not the one for %s", ent->path, sha256);
	int r = open_checked(dfd, name, sha256, &now, &buf, &len, e);
	if (r == 1)
		return jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s disappeared before the launch; the launch stops", ent->path);
	if (r < 0)
		return r;
	if (now.dev != ent->dev || now.ino != ent->ino || now.size != ent->size)
		return drop(dfd, name, jig_err(e, JIG_E_INTEGRITY, "the policy cache entry %s was replaced after it was checked; deleted it (the launch stops)",
					       ent->path));
	return 0;
}
