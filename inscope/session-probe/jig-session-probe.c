/* jig-session-probe: the negative-evidence probe (issue 34; docs/session-evidence.md).
 * `jig session --evidence` runs it as the session's program instead of the
 * agent, in the very scope the agent would get, bound read-only from the
 * signed snapshot. It needs no file from the host and trusts nothing it
 * sees: it only reports.
 *
 *   jig-session-probe CHECK...      CHECK = KIND:EXPECT:ID:ARG
 *
 * KIND   read     ARG (a path) can be read (a directory listed, a file read)
 *        write    ARG can be written (a directory: a file created in it and
 *                 removed again; a file: opened for writing, never truncated)
 *        tmpdir   $TMPDIR is exactly ARG (one '*' in ARG stands for the
 *                 launch's session id, [0-9a-f]+): a directory (not a link),
 *                 owned by the probe's uid, mode 0700, writable
 *        env      a variable named ARG is in the environment (its value is
 *                 never read out)
 *        tcp      a TCP connect to ARG (IPv4 "A.B.C.D:PORT") is accepted
 *        connect  ARG = "A.B.C.D:PORT>HOST:PORT": the HTTP proxy at the
 *                 first address answers CONNECT HOST:PORT with a 2xx status
 *        create   the file ARG can be created (its missing parents too, at
 *                 most two); all of it is removed again
 *        rename   ARG can be renamed (to ARG.jig-probe, and back at once)
 *        nest     a nested repository can be planted: ARG, ARG/.git and
 *                 ARG/.git/config created and KEPT (jig's end-of-session
 *                 check must find it; the host removes it afterwards)
 * EXPECT allow | deny (for env: allow = present)
 * ID     [a-z0-9._-]{1,64}
 *
 * stdout: one JSON line per check, in order,
 *   {"id":ID,"kind":KIND,"expected":E,"actual":"allow"|"deny","pass":B,"why":ERRNO}
 * then {"done":N}. Nothing else (the host reads a bounded pipe that also
 * carries stderr, so nothing is written there). A malformed CHECK is
 * reported as actual "error" (never a pass). Exit 0 when every check ran,
 * 2 on a malformed one.
 *
 * Statically linked against musl like jig-scope-init: the scope's binds
 * are the session's, not the probe's. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NET_TIMEOUT_MS 3000

enum { R_ALLOW, R_DENY, R_ERROR };

struct outcome {
	int actual;
	int err; /* errno of the denial (0: none) */
};

static const char *errname(int e)
{
	switch (e) {
	case 0: return "";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EROFS: return "EROFS";
	case ENOTDIR: return "ENOTDIR";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENETUNREACH: return "ENETUNREACH";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case EINVAL: return "EINVAL";
	case ELOOP: return "ELOOP";
	case EXDEV: return "EXDEV";
	case EPROTO: return "EPROTO";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	default: return "other";
	}
}

static struct outcome deny(int err) { return (struct outcome){R_DENY, err}; }
static struct outcome allow(void) { return (struct outcome){R_ALLOW, 0}; }

static struct outcome check_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return deny(errno);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return deny(e);
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = fdopendir(fd);
		if (!d) {
			int e = errno;
			close(fd);
			return deny(e);
		}
		errno = 0;
		struct dirent *de = readdir(d);
		int e = errno;
		closedir(d);
		return de || !e ? allow() : deny(e);
	}
	char c;
	ssize_t n = read(fd, &c, 1);
	int e = errno;
	close(fd);
	return n >= 0 ? allow() : deny(e);
}

static struct outcome write_in_dir(const char *dir)
{
	char name[4200];
	snprintf(name, sizeof(name), "%s/.jig-probe.%ld", dir, (long)getpid());
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return deny(errno);
	close(fd);
	unlink(name); /* the probe leaves nothing behind where it could write */
	return allow();
}

static struct outcome check_write(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return deny(errno);
	if (S_ISDIR(st.st_mode))
		return write_in_dir(path);
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return deny(errno);
	close(fd);
	return allow();
}

/* want may hold one '*': the launch's session id, [0-9a-f]+ (the plan
 * prints the TMPDIR before the launch chooses it). */
static bool tmpdir_matches(const char *t, const char *want)
{
	const char *star = strchr(want, '*');
	if (!star)
		return strcmp(t, want) == 0;
	size_t pre = (size_t)(star - want);
	if (strncmp(t, want, pre) != 0)
		return false;
	const char *p = t + pre;
	size_t n = strspn(p, "0123456789abcdef");
	return n > 0 && strcmp(p + n, star + 1) == 0;
}

static struct outcome check_tmpdir(const char *want)
{
	const char *t = getenv("TMPDIR");
	if (!t || !tmpdir_matches(t, want))
		return deny(EINVAL);
	struct stat st;
	if (lstat(t, &st) < 0)
		return deny(errno);
	if (!S_ISDIR(st.st_mode))
		return deny(ENOTDIR);
	if (st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
		return deny(EPERM);
	return write_in_dir(t);
}

static int parse_addr(const char *s, size_t len, struct sockaddr_in *sa)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *colon = strrchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	return inet_pton(AF_INET, buf, &sa->sin_addr) == 1 ? 0 : -1;
}

/* A connected socket, or -errno. */
static int tcp_connect(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int r = poll(&p, 1, NET_TIMEOUT_MS);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		close(fd);
		return -(r == 0 ? ETIMEDOUT : soerr ? soerr : EIO);
	}
	return fd;
}

static struct outcome check_tcp(const char *arg)
{
	struct sockaddr_in sa;
	if (parse_addr(arg, strlen(arg), &sa) < 0)
		return (struct outcome){R_ERROR, EINVAL};
	int fd = tcp_connect(&sa);
	if (fd < 0)
		return deny(-fd);
	close(fd);
	return allow();
}

/* Reads the proxy's status line (bounded in bytes and time). */
static int read_status(int fd)
{
	char buf[512];
	size_t n = 0;
	while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, NET_TIMEOUT_MS) <= 0)
			return -1;
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
	}
	buf[n] = '\0';
	int code;
	return sscanf(buf, "HTTP/1.%*1d %3d", &code) == 1 ? code : -1;
}

static struct outcome check_connect(const char *arg)
{
	const char *gt = strchr(arg, '>');
	struct sockaddr_in sa;
	if (!gt || parse_addr(arg, (size_t)(gt - arg), &sa) < 0 || !gt[1] || strlen(gt + 1) > 300 ||
	    strpbrk(gt + 1, "\r\n "))
		return (struct outcome){R_ERROR, EINVAL};
	int fd = tcp_connect(&sa);
	if (fd < 0)
		return deny(-fd);
	char req[800];
	int len = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", gt + 1, gt + 1);
	if (write(fd, req, (size_t)len) != len) {
		int e = errno;
		close(fd);
		return deny(e);
	}
	int code = read_status(fd);
	close(fd);
	return code >= 200 && code < 300 ? allow() : deny(code < 0 ? EPROTO : EACCES);
}

/* The file path (and up to two missing parents) created, then removed. */
static struct outcome check_create(const char *path)
{
	char dirs[2][4096];
	int made = 0;
	struct stat st;
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(dirs[0]))
		return (struct outcome){R_ERROR, EINVAL};
	/* the missing parents, outermost first */
	char p[4096];
	memcpy(p, path, n + 1);
	char *todo[2];
	int k = 0;
	for (char *sl = strrchr(p, '/'); sl && sl != p && k < 2; sl = strrchr(p, '/')) {
		*sl = '\0';
		if (lstat(p, &st) == 0)
			break;
		todo[k++] = strdup(p);
	}
	int err = 0;
	for (int i = k - 1; i >= 0 && !err; i--) {
		if (todo[i] && mkdir(todo[i], 0700) == 0)
			snprintf(dirs[made++], sizeof(dirs[0]), "%s", todo[i]);
		else
			err = todo[i] ? errno : ENOMEM;
	}
	for (int i = 0; i < k; i++)
		free(todo[i]);
	int fd = err ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && !err)
		err = errno;
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	while (made > 0)
		rmdir(dirs[--made]);
	return err ? deny(err) : allow();
}

static struct outcome check_rename(const char *path)
{
	char to[4200];
	snprintf(to, sizeof(to), "%s.jig-probe", path);
	if (rename(path, to) < 0)
		return deny(errno);
	rename(to, path); /* the probe leaves the worktree as it found it */
	return allow();
}

static struct outcome check_nest(const char *dir)
{
	char g[4200], c[4200];
	snprintf(g, sizeof(g), "%s/.git", dir);
	snprintf(c, sizeof(c), "%s/.git/config", dir);
	if (mkdir(dir, 0700) < 0)
		return deny(errno);
	int fd = mkdir(g, 0700) == 0 ? open(c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd < 0) {
		int e = errno;
		rmdir(g);
		rmdir(dir);
		return deny(e);
	}
	static const char cfg[] = "[core]\n\tfsmonitor = /nonexistent/jig-evidence-fsmonitor\n";
	ssize_t w = write(fd, cfg, sizeof(cfg) - 1);
	close(fd);
	return w == (ssize_t)sizeof(cfg) - 1 ? allow() : deny(EIO);
}

static bool id_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

static struct outcome run_check(const char *kind, const char *arg)
{
	if (!strcmp(kind, "read"))
		return check_read(arg);
	if (!strcmp(kind, "write"))
		return check_write(arg);
	if (!strcmp(kind, "tmpdir"))
		return check_tmpdir(arg);
	if (!strcmp(kind, "env"))
		return getenv(arg) ? allow() : deny(0);
	if (!strcmp(kind, "tcp"))
		return check_tcp(arg);
	if (!strcmp(kind, "connect"))
		return check_connect(arg);
	if (!strcmp(kind, "create"))
		return check_create(arg);
	if (!strcmp(kind, "rename"))
		return check_rename(arg);
	if (!strcmp(kind, "nest"))
		return check_nest(arg);
	return (struct outcome){R_ERROR, EINVAL};
}

/* KIND:EXPECT:ID:ARG; false when malformed (then nothing is run). */
static bool one(const char *spec)
{
	static const char *const names[] = {"allow", "deny", "error"};
	char kind[16], expect[8], id[65];
	const char *a = strchr(spec, ':'), *b = a ? strchr(a + 1, ':') : NULL, *c = b ? strchr(b + 1, ':') : NULL;
	bool ok = c && (size_t)(a - spec) < sizeof(kind) && (size_t)(b - a - 1) < sizeof(expect) &&
		  id_ok(b + 1, (size_t)(c - b - 1));
	if (ok) {
		memcpy(kind, spec, (size_t)(a - spec));
		kind[a - spec] = '\0';
		memcpy(expect, a + 1, (size_t)(b - a - 1));
		expect[b - a - 1] = '\0';
		memcpy(id, b + 1, (size_t)(c - b - 1));
		id[c - b - 1] = '\0';
		ok = !strcmp(expect, "allow") || !strcmp(expect, "deny");
	}
	if (!ok) {
		printf("{\"id\":\"malformed\",\"kind\":\"\",\"expected\":\"\",\"actual\":\"error\",\"pass\":false,\"why\":\"EINVAL\"}\n");
		return false;
	}
	struct outcome o = run_check(kind, c + 1);
	bool pass = o.actual != R_ERROR && !strcmp(names[o.actual], expect);
	printf("{\"id\":\"%s\",\"kind\":\"%s\",\"expected\":\"%s\",\"actual\":\"%s\",\"pass\":%s,\"why\":\"%s\"}\n", id,
	       o.actual == R_ERROR ? "error" : kind, expect, names[o.actual], pass ? "true" : "false",
	       errname(o.err));
	return o.actual != R_ERROR;
}

int main(int argc, char **argv)
{
	int status = 0;
	for (int i = 1; i < argc; i++) {
		if (!one(argv[i]))
			status = 2;
		fflush(stdout);
	}
	printf("{\"done\":%d}\n", argc - 1);
	return fflush(stdout) == 0 ? status : 1;
}
