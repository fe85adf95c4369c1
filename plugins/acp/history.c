/* A client's retained session history (Codex's rollout files): written
 * into the client's private HOME before it starts, collected from there
 * after it exited cleanly. Every path is relative, of plain names, and
 * walked without following a link. */
#include "history.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPTH_MAX 4	    /* components of a path below the history directory */
#define ENTRIES_MAX 4096    /* directory entries looked at while collecting */
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

static int bad(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -1;
}

bool jig_acp_history_id_ok(const char *id)
{
	size_t n = strlen(id);
	return n > 0 && n <= 128 && strspn(id, NAME_CHARS) == n && id[0] != '.';
}

/* 1..DEPTH_MAX components of NAME_CHARS, none "." or "..". */
bool jig_acp_history_path_ok(const char *p)
{
	size_t parts = 0;
	const char *c = p;
	if (!*p || strlen(p) > 512)
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || strspn(c, NAME_CHARS) < n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (++parts > DEPTH_MAX)
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

/* The rollout name of a session: "rollout-…-ID.jsonl". */
static bool owned_name(const char *name, const char *id)
{
	size_t n = strlen(name), k = strlen(id);
	return n >= 8 + 1 + k + 6 && strncmp(name, "rollout-", 8) == 0 && strcmp(name + n - 6, ".jsonl") == 0 &&
	       name[n - 6 - k - 1] == '-' && strncmp(name + n - 6 - k, id, k) == 0;
}

/* Opens (creating with mkdir, if create) each directory of rel below
 * dirfd without following links. The last component is a directory too. */
static int open_dirs(int dirfd, const char *rel, bool create, char *why, size_t cap)
{
	char buf[520];
	if ((size_t)snprintf(buf, sizeof(buf), "%s", rel) >= sizeof(buf))
		return bad(why, cap, "a history path in the client's HOME is too long");
	int fd = dup(dirfd);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
		if (create && mkdirat(fd, c, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return bad(why, cap, "cannot create %s in the client's HOME: %s", rel, strerror(errno));
		}
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		close(fd);
		if (next < 0)
			return bad(why, cap, "%s in the client's HOME: %s", rel, err == ELOOP || err == ENOTDIR ? "not a directory" : strerror(err));
		fd = next;
	}
	return fd < 0 ? bad(why, cap, "dup: %s", strerror(errno)) : fd;
}

static int open_home(const char *home, char *why, size_t cap)
{
	int fd = home && home[0] == '/' ? open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	return fd < 0 ? bad(why, cap, "the client's HOME (%s) cannot be opened", home ? home : "unset") : fd;
}

int jig_acp_history_restore(const char *home, const char *dir, const char *path, const char *bytes, size_t len, char *why,
			    size_t cap)
{
	char parent[520];
	if ((size_t)snprintf(parent, sizeof(parent), "%s/%s", dir, path) >= sizeof(parent))
		return bad(why, cap, "the restored history's path is too long");
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	int hfd = open_home(home, why, cap);
	if (hfd < 0)
		return -1;
	int dfd = open_dirs(hfd, parent, true, why, cap);
	close(hfd);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0)
		return bad(why, cap, "cannot write the restored history: %s", strerror(errno));
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, bytes + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return bad(why, cap, "cannot write the restored history: %s", w < 0 ? strerror(errno) : "short write");
		}
		off += (size_t)w;
	}
	return close(fd) < 0 ? bad(why, cap, "cannot write the restored history: %s", strerror(errno)) : 0;
}

struct found {
	char path[520]; /* below the history directory */
	int fd;		/* the first match, opened from the directory the walk holds */
	int n;		/* matches */
	size_t seen;
};

static int find(int dirfd, const char *prefix, int depth, const char *id, struct found *f, char *why, size_t cap)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return bad(why, cap, "cannot read the history directory: %s", strerror(errno));
	}
	int r = 0;
	for (struct dirent *de; r == 0 && (de = readdir(d));) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++f->seen > ENTRIES_MAX) {
			r = bad(why, cap, "the history directory holds more than %d entries", ENTRIES_MAX);
			break;
		}
		char rel[520];
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", de->d_name) >= sizeof(rel)) {
			r = bad(why, cap, "the history directory holds a path over %zu bytes", sizeof(rel) - 1);
			break;
		}
		struct stat st;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (owned_name(de->d_name, id)) {
			if (!S_ISREG(st.st_mode)) {
				r = bad(why, cap, "the session's history is not a regular file");
				break;
			}
			/* Opened here, from this directory's fd: a path opened
			 * again from the top could pass through a link put in
			 * since (O_NOFOLLOW covers only its last name). */
			if (f->n++ == 0) {
				snprintf(f->path, sizeof(f->path), "%s", rel);
				f->fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
				if (f->fd < 0) {
					r = bad(why, cap, "cannot open the session's history: %s", strerror(errno));
					break;
				}
			}
		} else if (S_ISDIR(st.st_mode) && depth + 1 < DEPTH_MAX) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = find(sub, rel, depth + 1, id, f, why, cap);
				close(sub);
			}
		}
	}
	closedir(d);
	return r;
}

/* Text the host can keep as one JSON string at most twice its size: UTF-8
 * (checked by the caller's json_stringn), no control byte but tab and
 * newline, complete lines. */
static int text_ok(const char *p, size_t n, char *why, size_t cap)
{
	if (n == 0 || p[n - 1] != '\n')
		return bad(why, cap, "the session's history is empty or ends in an incomplete line");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 && p[i] != '\n' && p[i] != '\t')
			return bad(why, cap, "the session's history holds a control byte");
	return 0;
}

int jig_acp_history_collect(const char *home, const char *dir, const char *id, int64_t max, char **bytes, size_t *len,
			    char path[520], char *why, size_t cap)
{
	*bytes = NULL;
	*len = 0;
	if (!jig_acp_history_id_ok(id))
		return bad(why, cap, "the client's session id is not a plain name; its history is not collected");
	int hfd = open_home(home, why, cap);
	if (hfd < 0)
		return -1;
	int dfd = open_dirs(hfd, dir, false, why, cap);
	close(hfd);
	if (dfd < 0)
		return -1;
	struct found f = {.fd = -1};
	int r = find(dfd, "", 0, id, &f, why, cap);
	close(dfd);
	if (r == 0 && f.n != 1)
		r = bad(why, cap, f.n ? "the session has %d history files, not one" : "the client left no history for its session",
			f.n);
	/* What is kept must be restorable: jig_acp_history_restore takes
	 * only such a path. */
	if (r == 0 && !jig_acp_history_path_ok(f.path))
		r = bad(why, cap, "the session's history is not at a path of 1-%d plain names; not collected", DEPTH_MAX);
	int fd = f.fd;
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return bad(why, cap, "cannot open the session's history");
	}
	if (st.st_size > max) {
		close(fd);
		return bad(why, cap, "the session's history is %lld bytes, over %lld", (long long)st.st_size, (long long)max);
	}
	char *b = malloc((size_t)st.st_size + 1);
	size_t off = 0;
	while (b && off < (size_t)st.st_size) {
		ssize_t n = read(fd, b + off, (size_t)st.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (!b || off != (size_t)st.st_size) {
		free(b);
		return bad(why, cap, "cannot read the session's history");
	}
	b[off] = '\0';
	if (text_ok(b, off, why, cap) < 0) {
		free(b);
		return -1;
	}
	snprintf(path, 520, "%s", f.path);
	*bytes = b;
	*len = off;
	return 0;
}
