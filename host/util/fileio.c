#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#include "cleanup.h"
#include "limits.h"

bool jig_path_is_normal_relative(const char *rel)
{
	size_t n = strlen(rel);
	if (n == 0 || n > 255 || rel[0] == '/' || rel[n - 1] == '/')
		return false;
	const char *c = rel;
	while (*c) {
		const char *end = strchrnul(c, '/');
		size_t len = (size_t)(end - c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		for (const char *p = c; p < end; p++) {
			char ch = *p;
			bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-' || ch == '@' ||
				  ch == '+';
			if (!ok)
				return false;
		}
		c = *end ? end + 1 : end;
	}
	return true;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* The length of the UTF-8 sequence at p (at most end - p bytes), or 0
 * when it is not one: overlong forms, surrogates and code points over
 * U+10FFFF are not UTF-8. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (n == 0 || (size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

const char *jig_package_path_rule(const char *rel)
{
	size_t n = strlen(rel);
	if (n == 0)
		return "is empty";
	if (rel[0] == '/')
		return "is absolute (starts with \"/\")";
	if (n > JIG_PACKAGE_PATH_MAX)
		return "is over " STR(JIG_PACKAGE_PATH_MAX) " bytes (the file system's PATH_MAX, less the tree's own place)";
	const unsigned char *c = (const unsigned char *)rel, *end = c + n;
	for (;;) {
		const unsigned char *e = (const unsigned char *)strchrnul((const char *)c, '/');
		size_t len = (size_t)(e - c);
		if (len == 0)
			return "has an empty component (\"//\", or a \"/\" at its end)";
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return len == 1 ? "has a \".\" component" : "has a \"..\" component";
		if (len > 255)
			return "has a component over 255 bytes (the file system's NAME_MAX)";
		for (const unsigned char *p = c; p < e;) {
			size_t k = utf8_seq(p, e);
			if (k == 0)
				return "is not valid UTF-8";
			if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] < 0xa0))
				return "has a control character";
			p += k;
		}
		if (e == end)
			return NULL;
		c = e + 1;
	}
}

DIR *jig_dir_open(int dirfd)
{
	int fd = dirfd >= 0 ? dup(dirfd) : -1;
	if (dirfd < 0)
		errno = EBADF;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	rewinddir(d);
	return d;
}

struct dirent *jig_dir_next(DIR *d)
{
	struct dirent *de;
	while ((de = readdir(d)) && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0))
		;
	return de;
}

int jig_open_beneath(int dirfd, const char *rel, int flags)
{
	if (jig_package_path_rule(rel)) {
		errno = EINVAL;
		return -1;
	}
	char buf[JIG_PACKAGE_PATH_MAX + 1];
	strcpy(buf, rel);
	int cur = dirfd;
	char *c = buf;
	for (;;) {
		char *slash = strchr(c, '/');
		int fd;
		if (slash) {
			*slash = '\0';
			fd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		} else {
			fd = openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
		}
		if (cur != dirfd)
			jig_closep(&cur);
		if (fd < 0 || !slash)
			return fd;
		cur = fd;
		c = slash + 1;
	}
}

int jig_read_file_at(int dirfd, const char *rel, size_t cap, const char *what, char **out,
		     size_t *len, struct stat *st, struct jig_error *e)
{
	jig_autoclose int fd = jig_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP)
			return jig_err(e, JIG_E_INTEGRITY, "%s: is a symbolic link; refusing to follow it", what);
		return jig_err(e, JIG_E_INTEGRITY, "%s: cannot open: %s", what, strerror(errno));
	}
	return jig_read_fd(fd, cap, what, out, len, st, e);
}

int jig_read_fd(int fd, size_t cap, const char *what, char **out, size_t *len, struct stat *st, struct jig_error *e)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", what, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return jig_err(e, JIG_E_INTEGRITY, "%s: not a regular file", what);
	if ((uint64_t)sb.st_size > cap)
		return jig_err(e, JIG_E_INTEGRITY, "%s: %lld bytes, more than the %zu allowed", what,
			       (long long)sb.st_size, cap);
	/* Read at most cap+1 so a file that grows after fstat is still caught.
	 * The buffer starts at the size fstat gave (issue 14: a cap-sized one,
	 * 16 MiB for a manifest, was mapped and unmapped on every read) and
	 * grows to cap+1 only if the file turns out longer. */
	size_t room = (size_t)sb.st_size + 1;
	jig_autofree char *buf = malloc(room + 1);
	if (!buf)
		return jig_err(e, JIG_E_INTERNAL, "%s: out of memory", what);
	size_t got = 0;
	while (got <= cap) {
		if (got == room) {
			char *more = realloc(buf, cap + 2);
			if (!more)
				return jig_err(e, JIG_E_INTERNAL, "%s: out of memory", what);
			buf = more;
			room = cap + 1;
		}
		ssize_t n = read(fd, buf + got, room - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return jig_err(e, JIG_E_INTERNAL, "%s: read: %s", what, strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > cap)
		return jig_err(e, JIG_E_INTEGRITY, "%s: more than the %zu bytes allowed", what, cap);
	buf[got] = '\0';
	*out = jig_steal(&buf);
	*len = got;
	if (st)
		*st = sb;
	return 0;
}

int jig_write_file_at(int dirfd, const char *rel, const void *data, size_t len, mode_t mode,
		      struct jig_error *e)
{
	jig_autoclose int fd =
		openat(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: cannot create: %s", rel, strerror(errno));
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return jig_err(e, JIG_E_INTERNAL, "%s: write: %s", rel, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
	return 0;
}

int jig_write_file_replace_at(int dirfd, const char *rel, const void *data, size_t len, mode_t mode,
			      struct jig_error *e)
{
	char tmp[PATH_MAX];
	const char *base = strrchr(rel, '/');
	int dl = base ? (int)(base - rel + 1) : 0;
	if (snprintf(tmp, sizeof(tmp), "%.*s.tmp-%d-%s", dl, rel, (int)getpid(), base ? base + 1 : rel) >= (int)sizeof(tmp))
		return jig_err(e, JIG_E_INTERNAL, "%s: name too long", rel);
	unlinkat(dirfd, tmp, 0); /* this process's own leftover */
	int r = jig_write_file_at(dirfd, tmp, data, len, mode, e);
	if (!r && renameat(dirfd, tmp, dirfd, rel) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s: %s", rel, strerror(errno));
	if (r)
		unlinkat(dirfd, tmp, 0);
	return r;
}

int jig_open_dir_nofollow(const char *path)
{
	char buf[PATH_MAX];
	if (path[0] != '/' || snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return errno = EINVAL, -1;
	int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (char *c = buf + 1, *next; cur >= 0 && *c; c = next) {
		next = strchr(c, '/');
		if (next)
			*next++ = '\0';
		else
			next = c + strlen(c);
		if (!*c)
			continue;
		int fd = strcmp(c, "..") == 0 || strcmp(c, ".") == 0
				 ? (errno = EINVAL, -1)
				 : openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(cur);
		errno = saved;
		cur = fd;
	}
	return cur;
}

/* true when fd (beneath parent) is the root of a mount: another file
 * system, or a bind mount of the same one (statx tells; without it, a
 * device other than parent's). */
static bool mount_root(int parent, int fd)
{
	struct statx sx;
	struct stat a, b;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	return fstat(fd, &a) < 0 || fstatat(parent, ".", &b, 0) < 0 || a.st_dev != b.st_dev;
}

jig_name *jig_dir_names(int dirfd, bool (*keep)(const char *name), size_t max, size_t *n)
{
	DIR *d = dirfd >= 0 ? fdopendir(dup(dirfd)) : NULL;
	struct dirent *de;
	jig_name *names = NULL;
	size_t cap = 0;
	*n = 0;
	while (d && (de = readdir(d))) {
		if (!keep(de->d_name) || *n >= max)
			continue;
		if (*n == cap) {
			void *m = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
			if (!m)
				break;
			names = m;
		}
		snprintf(names[(*n)++], sizeof(names[0]), "%s", de->d_name);
	}
	if (d)
		closedir(d);
	return names;
}

void jig_remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && mount_root(parent, fd)) {
		close(fd);
		return;
	}
	if (fd >= 0) {
		fchmod(fd, 0700);
		DIR *d = fdopendir(fd);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (unlinkat(fd, de->d_name, 0) < 0)
				jig_remove_tree(fd, de->d_name);
		}
		if (d)
			closedir(d);
		else
			close(fd);
	}
	unlinkat(parent, name, AT_REMOVEDIR);
}


int jig_user_dir(const char *var, const char *fallback, char *out, size_t cap)
{
	const char *x = getenv(var), *home = getenv("HOME");
	int n = x && x[0] == '/' ? snprintf(out, cap, "%s/jig", x)
	      : home && home[0] == '/' ? snprintf(out, cap, "%s/%s/jig", home, fallback)
				       : -1;
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

const char *jig_caller_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : NULL;
}

void jig_poke(int fd)
{
	/* The pipe is ours and empty: the write cannot fail. */
	if (write(fd, "x", 1) < 0) {
	}
}
