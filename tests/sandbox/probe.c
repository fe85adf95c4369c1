/* jig-probe: hostile attempts run inside a scope (and a few host-side
 * helpers). Statically linked so a scope needs no binds to run it.
 *
 * Convention for attempts: exit 0 and print "denied: ..." when the attempt
 * failed the way containment demands; exit 1 and print "ESCAPE: ..." when
 * it succeeded. Other subcommands print facts for the test to check. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int denied(const char *what)
{
	printf("denied: %s: %s\n", what, strerror(errno));
	return 0;
}

static int escape(const char *what)
{
	printf("ESCAPE: %s\n", what);
	return 1;
}

static int cmd_read(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return denied(path);
	char c;
	if (read(fd, &c, 1) < 0)
		return denied(path);
	return escape(path);
}

static int cmd_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return denied(path);
	if (write(fd, "x", 1) != 1)
		return denied(path);
	return escape(path);
}

/* Writes up to bytes into path; the tmpfs cap must stop it first. */
static int cmd_fill(const char *path, long long bytes)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return denied(path);
	static char buf[65536];
	memset(buf, 'f', sizeof(buf));
	long long done = 0;
	while (done < bytes) {
		ssize_t w = write(fd, buf, sizeof(buf));
		if (w < 0) {
			printf("wrote %lld bytes, then: %s\n", done, strerror(errno));
			return errno == ENOSPC ? 0 : 1;
		}
		done += w;
	}
	printf("ESCAPE: wrote all %lld bytes\n", done);
	return 1;
}

struct sc {
	const char *name;
	long nr;
	long a[6];
	int want; /* errno the filter must return */
};

/* Every mount the scope sees: "mount TARGET rw|ro FSTYPE SUPER-OPTIONS
 * ROOT" from /proc/self/mountinfo (the per-mount rw/ro flag is what a
 * write checks first). */
static int cmd_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 2;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		char root[1024], target[1024], opts[512], rest[2048];
		if (sscanf(line, "%*d %*d %*s %1023s %1023s %511s %2047[^\n]", root, target, opts, rest) != 4)
			continue;
		/* Optional fields, then "- FSTYPE SOURCE SUPER-OPTIONS". */
		char *sep = strncmp(rest, "- ", 2) == 0 ? rest : strstr(rest, " - ");
		char fstype[64] = "", src[1024] = "", super[1024] = "";
		if (sep)
			sscanf(sep + (sep == rest ? 2 : 3), "%63s %1023s %1023s", fstype, src, super);
		printf("mount %s %s %s %s %s\n", target, strncmp(opts, "rw", 2) == 0 && (opts[2] == ',' || !opts[2]) ? "rw" : "ro",
		       fstype, super, root);
	}
	fclose(f);
	return 0;
}

/* Inside reports (issue 32): what this process reads of itself, as
 * tests/flow/inside.js gives it for a Bun process: {"argv", "environ",
 * "mountinfo", "fds"}, JSON text in a growing buffer. */
struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t c = t->cap ? t->cap : 8192;
		while (c < t->len + n + 1)
			c *= 2;
		char *q = realloc(t->p, c);
		if (!q)
			exit(2);
		t->p = q;
		t->cap = c;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void put_str(struct text *t, const char *s, size_t n)
{
	put(t, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(t, esc, 6);
		} else
			put(t, (const char *)&c, 1);
	}
	put(t, "\"", 1);
}

/* A NUL-separated /proc file as a JSON array of strings. */
static void put_nul_list(struct text *t, const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	put(t, "[", 1);
	for (ssize_t i = 0, k = 0; n > 0 && i < n; k++) {
		size_t l = strnlen(buf + i, (size_t)(n - i));
		if (k)
			put(t, ",", 1);
		put_str(t, buf + i, l);
		i += (ssize_t)l + 1;
	}
	put(t, "]", 1);
}

static void report(struct text *t)
{
	/* The descriptors first, before anything else is opened. */
	char fds[64][256];
	int open_fd[64], nfd = 0;
	for (int fd = 0; fd < 64; fd++) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, fds[nfd], sizeof(fds[nfd]) - 1);
		if (n < 0)
			continue;
		fds[nfd][n] = '\0';
		open_fd[nfd++] = fd;
	}
	put(t, "{\"argv\":", 8);
	put_nul_list(t, "/proc/self/cmdline");
	put(t, ",\"environ\":", 11);
	put_nul_list(t, "/proc/self/environ");
	put(t, ",\"mountinfo\":", 13);
	char buf[65536];
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;
	while (fd >= 0 && len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	if (fd >= 0)
		close(fd);
	put_str(t, buf, len);
	put(t, ",\"fds\":{", 8);
	for (int i = 0; i < nfd; i++) {
		char key[16];
		int k = snprintf(key, sizeof(key), "%s\"%d\":", i ? "," : "", open_fd[i]);
		put(t, key, (size_t)k);
		put_str(t, fds[i], strlen(fds[i]));
	}
	put(t, "}}", 2);
}

static void put_base64(struct text *t, const unsigned char *d, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
		char q[4] = {a[v >> 18 & 63], a[v >> 12 & 63], i + 1 < n ? a[v >> 6 & 63] : '=', i + 2 < n ? a[v & 63] : '='};
		put(t, q, 4);
	}
}

/* Installed in a test snapshot in place of jig-http-worker: answers, as a
 * response to any request, with its inside report as the body, so a test
 * can compare the worker's scope with the Plan. */
static int cmd_as_http_worker(void)
{
	struct text r = {0}, out = {0};
	report(&r);
	const char *head = "{\"format\": \"jig-http-result/1\", \"outcome\": \"response\", \"status\": 200, \"headers\": {}, \"connect_ms\": 0, \"total_ms\": 0, \"body_base64\": \"";
	put(&out, head, strlen(head));
	put_base64(&out, (const unsigned char *)r.p, r.len);
	put(&out, "\"}\n", 3);
	fwrite(out.p, 1, out.len, stdout);
	return 0;
}

/* Installed in a test snapshot in place of jig-acp-worker: answers any
 * turn with its inside report as the answer's text. */
static int cmd_as_acp_worker(void)
{
	struct text r = {0}, out = {0};
	report(&r);
	const char *head = "{\"format\": \"jig-acp-result/1\", \"outcome\": \"answer\", \"stop_reason\": \"end_turn\", \"text\": ";
	put(&out, head, strlen(head));
	put_str(&out, r.p, r.len);
	put(&out, "}\n", 2);
	fwrite(out.p, 1, out.len, stdout);
	return 0;
}

/* What the standard streams are: "fd N -> LINK" on stderr, then stdin
 * copied to stdout. */
static int cmd_stdio(void)
{
	for (int fd = 0; fd < 3; fd++) {
		char link[64], target[512];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "fd %d -> %s\n", fd, n > 0 ? target : strerror(errno));
	}
	char buf[4096];
	ssize_t n;
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	return 0;
}

/* The payload against pid 1 (the trusted launcher, same uid inside the
 * user namespace): every re-tuning call must be refused; the same calls on
 * the caller itself must still work. */
static int cmd_tune_pid1(void)
{
	struct rlimit rl = {1024, 1024};
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	struct sched_param sp = {0};
	unsigned long attr[14] = {56}; /* struct sched_attr, size 56, SCHED_OTHER */
	struct iovec iov = {.iov_base = &rl, .iov_len = sizeof(rl)};
	int pidfd = (int)syscall(SYS_pidfd_open, 1, 0);
	const struct sc other[] = {
		{"prlimit64(1, NOFILE, new)", SYS_prlimit64, {1, RLIMIT_NOFILE, (long)&rl, 0}, EPERM},
		{"prlimit64(1, CORE, new)", SYS_prlimit64, {1, RLIMIT_CORE, (long)&rl, 0}, EPERM},
		{"prlimit64(1|1<<32, NOFILE, new)", SYS_prlimit64, {(long)(1 | (1UL << 32)), RLIMIT_NOFILE, (long)&rl, 0}, EPERM},
		{"setpriority(PROCESS, 1)", SYS_setpriority, {PRIO_PROCESS, 1, 10}, EPERM},
		{"setpriority(PGRP, 0)", SYS_setpriority, {PRIO_PGRP, 0, 10}, EPERM},
		{"setpriority(USER, 0)", SYS_setpriority, {PRIO_USER, 0, 10}, EPERM},
		{"sched_setaffinity(1)", SYS_sched_setaffinity, {1, sizeof(set), (long)&set}, EPERM},
		{"sched_setscheduler(1)", SYS_sched_setscheduler, {1, SCHED_BATCH, (long)&sp}, EPERM},
		{"sched_setparam(1)", SYS_sched_setparam, {1, (long)&sp}, EPERM},
		{"sched_setattr(1)", SYS_sched_setattr, {1, (long)attr, 0}, EPERM},
		{"ioprio_set(PROCESS, 1)", SYS_ioprio_set, {1, 1, (2 << 13) | 7}, EPERM},
		{"ioprio_set(PGRP, 0)", SYS_ioprio_set, {2, 0, (2 << 13) | 7}, EPERM},
		{"ioprio_set(USER, uid)", SYS_ioprio_set, {3, (long)getuid(), (2 << 13) | 7}, EPERM},
		{"process_madvise(pidfd of 1)", SYS_process_madvise, {pidfd, (long)&iov, 1, 0 /* MADV_NORMAL */, 0}, EPERM},
		{"modify_ldt(read)", SYS_modify_ldt, {0, (long)attr, sizeof(attr)}, EPERM},
		{"modify_ldt(write)", SYS_modify_ldt, {1, (long)attr, 16}, EPERM},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		const struct sc *c = &other[i];
		errno = 0;
		long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
		bool ok = r == -1 && errno == c->want;
		printf("%s %s: %s\n", ok ? "denied" : "ALLOWED", c->name, r == -1 ? strerror(errno) : "returned");
		bad += !ok;
	}
	/* On itself: pid 0, as glibc's setrlimit, nice and sched_setaffinity do. */
	struct rlimit cur;
	getrlimit(RLIMIT_NOFILE, &cur);
	rl = cur;
	const struct sc self[] = {
		{"prlimit64(0, NOFILE, new)", SYS_prlimit64, {0, RLIMIT_NOFILE, (long)&rl, 0}, 0},
		{"prlimit64(1, NOFILE, read only)", SYS_prlimit64, {1, RLIMIT_NOFILE, 0, (long)&cur}, 0},
		{"setpriority(PROCESS, 0)", SYS_setpriority, {PRIO_PROCESS, 0, 5}, 0},
		{"sched_setaffinity(0)", SYS_sched_setaffinity, {0, sizeof(set), (long)&set}, 0},
		{"sched_setscheduler(0)", SYS_sched_setscheduler, {0, SCHED_BATCH, (long)&sp}, 0},
		{"ioprio_set(PROCESS, 0)", SYS_ioprio_set, {1, 0, (2 << 13) | 7}, 0},
	};
	for (size_t i = 0; i < sizeof(self) / sizeof(self[0]); i++) {
		const struct sc *c = &self[i];
		long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
		printf("%s %s on itself: %s\n", r == 0 ? "works" : "BROKEN", c->name, r == 0 ? "returned" : strerror(errno));
		bad += r != 0;
	}
	return bad ? 1 : 0;
}

static int inet(int type, int port)
{
	int s = socket(AF_INET, type, 0);
	if (s < 0)
		return denied("socket(AF_INET)");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return denied("connect 127.0.0.1");
	if (send(s, "probe", 5, 0) < 0)
		return denied("send 127.0.0.1");
	if (type == SOCK_DGRAM) {
		/* A datagram goes out either way; only the host listener can tell
		 * whether it arrived. */
		printf("sent a datagram (the host listener must not see it)\n");
		return 0;
	}
	return escape("connected to host loopback");
}

/* Exact network grants (issue 34): connects to ip:port (in the scope's
 * own network namespace), sends msg, half-closes and prints the reply
 * ("reply: ..."), or "denied: ..." when nothing answers there. */
static int tcp_to(const char *ip, int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = errno;
		close(s);
		errno = err;
		return -1;
	}
	return s;
}

/* Reads until the end of an HTTP head (or EOF, or cap bytes) into buf. */
static size_t read_head(int s, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t k = read(s, buf + n, 1);
		if (k <= 0)
			break;
		n++;
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	buf[n] = '\0';
	return n;
}

static int read_rest(int s)
{
	char buf[4096];
	size_t n = 0;
	ssize_t k;
	while (n + 1 < sizeof(buf) && (k = read(s, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	printf("reply: %s\n", buf);
	return 0;
}

static int cmd_talk(const char *ip, int port, const char *msg)
{
	alarm(20);
	int s = tcp_to(ip, port);
	if (s < 0)
		return denied(ip);
	if (write(s, msg, strlen(msg)) < 0)
		return denied("send");
	shutdown(s, SHUT_WR);
	return read_rest(s);
}

/* Talks to jig's CONNECT relay at 127.0.0.1:port: mode "connect" (a
 * CONNECT to target, then "ping" through it), "get" (a plain GET), "big"
 * (a head past 8 KiB), "flood" (65 idle connections, then a CONNECT on
 * the last and on the first). Prints "status: LINE" (or "(closed)"). */
static int proxy_status(int s)
{
	char head[1024];
	read_head(s, head, sizeof(head));
	head[strcspn(head, "\r\n")] = '\0';
	printf("status: %s\n", head[0] ? head : "(closed)");
	return strncmp(head, "HTTP/1.1 200 ", 13) == 0;
}

static int cmd_proxy(int port, const char *mode, const char *target)
{
	alarm(30);
	char req[10240];
	int s = tcp_to("127.0.0.1", port);
	if (s < 0)
		return denied("connect to the proxy");
	if (!strcmp(mode, "get"))
		snprintf(req, sizeof(req), "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	else if (!strcmp(mode, "big")) {
		int n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nX: ", target);
		memset(req + n, 'a', 9000);
		req[n + 9000] = '\0';
	} else
		snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (!strcmp(mode, "flood")) {
		int c[65];
		c[0] = s;
		for (int i = 1; i < 65; i++)
			if ((c[i] = tcp_to("127.0.0.1", port)) < 0)
				return denied("connect to the proxy");
		usleep(500000);
		printf("the 65th: ");
		(void)!write(c[64], req, strlen(req));
		proxy_status(c[64]);
		printf("the first: ");
		(void)!write(c[0], req, strlen(req));
		return proxy_status(c[0]) ? 0 : 1;
	}
	(void)!write(s, req, strlen(req));
	if (!proxy_status(s) || strcmp(mode, "connect"))
		return 0;
	(void)!write(s, "ping", 4);
	shutdown(s, SHUT_WR);
	return read_rest(s);
}

static int cmd_abstract(const char *name)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return denied("socket(AF_UNIX)");
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 > sizeof(a.sun_path))
		return 2;
	memcpy(a.sun_path + 1, name, n);
	if (connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0)
		return denied("connect @abstract");
	return escape("connected to a host abstract socket");
}

static int cmd_socket(int fam, int type, const char *what)
{
	int s = socket(fam, type, 0);
	if (s < 0)
		return denied(what);
	return escape(what);
}



static int cmd_syscalls(void)
{
	const long bad = 1; /* a bad pointer: an allowed call fails with EFAULT */
	const struct sc calls[] = {
		{"ptrace", SYS_ptrace, {2 /* PTRACE_PEEKDATA */, 0x7ffffff0}, EPERM},
		{"process_vm_readv", SYS_process_vm_readv, {0x7ffffff0, 0, 1, 0, 1, 0}, EPERM},
		{"process_vm_writev", SYS_process_vm_writev, {0x7ffffff0, 0, 1, 0, 1, 0}, EPERM},
		{"pidfd_getfd", SYS_pidfd_getfd, {-1, 0, 0}, EPERM},
		{"kcmp", SYS_kcmp, {0x7ffffff0, 0x7ffffff0, 0, 0, 0}, EPERM},
		{"keyctl", SYS_keyctl, {0x7fff}, EPERM},
		{"add_key", SYS_add_key, {bad, bad, 0, 0, 0}, EPERM},
		{"request_key", SYS_request_key, {bad, bad, 0, 0}, EPERM},
		{"bpf", SYS_bpf, {-1, 0, 0}, EPERM},
		{"perf_event_open", SYS_perf_event_open, {bad, 0, -1, -1, 0}, EPERM},
		{"userfaultfd", SYS_userfaultfd, {~0L}, EPERM},
		{"io_uring_setup", SYS_io_uring_setup, {1, bad}, EPERM},
		{"io_uring_enter", SYS_io_uring_enter, {-1, 0, 0, 0, 0, 0}, EPERM},
		{"io_uring_register", SYS_io_uring_register, {-1, 0, 0, 0}, EPERM},
		{"unshare(0)", SYS_unshare, {0}, EPERM},
		{"setns", SYS_setns, {-1, 0}, EPERM},
		{"clone(NEWUSER)", SYS_clone, {CLONE_NEWUSER | CLONE_THREAD}, EPERM},
		{"clone(NEWNS)", SYS_clone, {CLONE_NEWNS | CLONE_THREAD}, EPERM},
		{"clone(NEWPID)", SYS_clone, {CLONE_NEWPID | CLONE_THREAD}, EPERM},
		{"clone(NEWNET)", SYS_clone, {CLONE_NEWNET | CLONE_THREAD}, EPERM},
		{"clone(NEWCGROUP)", SYS_clone, {CLONE_NEWCGROUP | CLONE_THREAD}, EPERM},
		{"clone3", SYS_clone3, {0, 0}, ENOSYS},
		{"mount", SYS_mount, {bad, bad, bad, 0, 0}, EPERM},
		{"umount2", SYS_umount2, {bad, 0}, EPERM},
		{"pivot_root", SYS_pivot_root, {bad, bad}, EPERM},
		{"chroot", SYS_chroot, {bad}, EPERM},
		{"open_tree", SYS_open_tree, {-1, bad, 0}, EPERM},
		{"move_mount", SYS_move_mount, {-1, bad, -1, bad, 0}, EPERM},
		{"fsopen", SYS_fsopen, {bad, 0}, EPERM},
		{"fsconfig", SYS_fsconfig, {-1, 0, 0, 0, 0}, EPERM},
		{"fsmount", SYS_fsmount, {-1, 0, 0}, EPERM},
		{"fspick", SYS_fspick, {-1, bad, 0}, EPERM},
		{"mount_setattr", SYS_mount_setattr, {-1, bad, 0, 0, 0}, EPERM},
		{"init_module", SYS_init_module, {0, 0, bad}, EPERM},
		{"finit_module", SYS_finit_module, {-1, bad, 0}, EPERM},
		{"delete_module", SYS_delete_module, {bad, 0}, EPERM},
		{"kexec_load", SYS_kexec_load, {0, 0, 0, 0}, EPERM},
		{"kexec_file_load", SYS_kexec_file_load, {-1, -1, 0, 0, 0}, EPERM},
		{"personality(READ_IMPLIES_EXEC)", SYS_personality, {READ_IMPLIES_EXEC}, EPERM},
		{"personality(ADDR_NO_RANDOMIZE)", SYS_personality, {ADDR_NO_RANDOMIZE}, EPERM},
		{"socket(AF_NETLINK)", SYS_socket, {AF_NETLINK, SOCK_RAW, 0}, EAFNOSUPPORT},
		{"socket(AF_PACKET)", SYS_socket, {AF_PACKET, SOCK_RAW, 0}, EAFNOSUPPORT},
		{"socket(AF_VSOCK)", SYS_socket, {AF_VSOCK, SOCK_STREAM, 0}, EAFNOSUPPORT},
		{"socket(AF_INET|high bits)", SYS_socket, {(long)(AF_INET | (1UL << 32)), SOCK_STREAM, 0}, EAFNOSUPPORT},
	};
	int bad_count = 0;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		const struct sc *c = &calls[i];
		errno = 0;
		long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
		int e = errno;
		if (r == 0 && c->nr == SYS_clone)
			_exit(0); /* a child: cannot happen with CLONE_THREAD and no VM */
		bool ok = r == -1 && e == c->want;
		printf("%s %s: %s\n", ok ? "denied" : "ALLOWED", c->name, r == -1 ? strerror(e) : "returned");
		bad_count += !ok;
	}
	return bad_count ? 1 : 0;
}

static int cmd_tiocsti(int highbit)
{
	char c = 'X';
	unsigned long req = TIOCSTI | (highbit ? (1UL << 32) : 0);
	long r = syscall(SYS_ioctl, 0, req, &c);
	if (r == 0)
		return escape(highbit ? "TIOCSTI (high bits) injected a character" : "TIOCSTI injected a character");
	printf("%s TIOCSTI%s: %s\n", errno == EPERM ? "denied" : "ALLOWED", highbit ? "|1<<32" : "",
	       strerror(errno));
	r = syscall(SYS_ioctl, 0, (unsigned long)0x541C | (highbit ? (1UL << 32) : 0), &c);
	printf("%s TIOCLINUX: %s\n", r == -1 && errno == EPERM ? "denied" : "ALLOWED", strerror(errno));
	return errno == EPERM ? 0 : 1;
}

static int cmd_int80(void)
{
	long ret;
	/* i386 getpid (20) through the compat entry point. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	printf("ESCAPE: int 0x80 returned %ld\n", ret);
	return 1;
}

static int cmd_x32(void)
{
	long r = syscall(0x40000000L | SYS_getpid);
	printf("ESCAPE: x32 getpid returned %ld (%s)\n", r, r < 0 ? strerror(errno) : "ok");
	return 1;
}

static int cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 2;
	int self = dirfd(d);
	struct dirent *e;
	int first = 1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self) {
			printf("%s%s", first ? "" : " ", e->d_name);
			first = 0;
		}
	printf("\n");
	closedir(d);
	return 0;
}

/* Every other visible process: its fd directory, memory and environment
 * must be closed to us. */
static int cmd_procs(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 2;
	struct dirent *e;
	int leaks = 0, seen = 0;
	pid_t me = getpid();
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid <= 0 || pid == me)
			continue;
		seen++;
		const char *what[] = {"fd", "mem", "environ"};
		for (int i = 0; i < 3; i++) {
			char p[64];
			snprintf(p, sizeof(p), "/proc/%d/%s", pid, what[i]);
			int fd = open(p, O_RDONLY | (i == 0 ? O_DIRECTORY : 0));
			if (fd >= 0) {
				char buf[16];
				ssize_t n = i == 0 ? 1 : read(fd, buf, sizeof(buf));
				if (n > 0) {
					printf("ESCAPE: opened %s\n", p);
					leaks++;
				}
				close(fd);
			} else {
				printf("denied: %s: %s\n", p, strerror(errno));
			}
		}
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/fd/100", pid);
		if (open(p, O_RDONLY) >= 0) {
			printf("ESCAPE: opened %s\n", p);
			leaks++;
		}
	}
	closedir(d);
	printf("other processes visible: %d\n", seen);
	return leaks ? 1 : 0;
}

extern char **environ;

static int cmd_env(void)
{
	for (char **e = environ; *e; e++)
		printf("env %s\n", *e);
	/* Everything any visible process shows of its arguments. */
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (atoi(de->d_name) <= 0)
			continue;
		char p[300], buf[4096];
		snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		printf("cmdline %s: %.*s\n", de->d_name, (int)(n > 0 ? n : 0), buf);
	}
	if (d)
		closedir(d);
	return 0;
}

static int cmd_hog(void)
{
	size_t chunk = 16 << 20, total = 0;
	for (;;) {
		char *p = malloc(chunk);
		if (!p) {
			printf("malloc failed at %zu MiB\n", total >> 20);
			return 3;
		}
		memset(p, 1, chunk);
		total += chunk;
	}
}

static int cmd_forkbomb(void)
{
	int made = 0;
	for (;;) {
		pid_t p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p < 0) {
			printf("fork stopped after %d children: %s\n", made, strerror(errno));
			fflush(stdout);
			return errno == EAGAIN ? 0 : 1;
		}
		if (++made > 100000)
			return escape("100000 processes");
	}
}

static double now_s(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmd_spin(int ms)
{
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	while ((now_s(CLOCK_MONOTONIC) - w0) * 1000 < ms)
		;
	double w = now_s(CLOCK_MONOTONIC) - w0, c = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("wall %.3f s cpu %.3f s share %.3f\n", w, c, c / w);
	return 0;
}

/* Double-forked, setsid-detached writer: appends a line to fd 3 every 50 ms
 * forever. The payload itself returns at once (or sleeps, with "wait"). */
static int cmd_detach(int then_sleep)
{
	pid_t p = fork();
	if (p == 0) {
		setsid();
		if (fork() == 0) {
			for (int i = 0;; i++) {
				dprintf(3, "tick %d\n", i);
				usleep(50000);
			}
		}
		_exit(0);
	}
	waitpid(p, NULL, 0);
	printf("detached writer started\n");
	fflush(stdout);
	if (then_sleep)
		sleep(600);
	return 0;
}

/* An orphaned grandchild aborts after 200 ms while the payload sleeps. */
static int cmd_crash_orphan(void)
{
	pid_t p = fork();
	if (p == 0) {
		if (fork() == 0) {
			usleep(200000);
			abort();
		}
		_exit(0);
	}
	waitpid(p, NULL, 0);
	sleep(600);
	return 0;
}

static int cmd_status(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) || !strncmp(line, "Seccomp:", 8) ||
		    !strncmp(line, "Uid", 3))
			fputs(line, stdout);
	if (f)
		fclose(f);
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += atoi(e->d_name) > 0;
	if (d)
		closedir(d);
	printf("pids %d\n", n);
	return 0;
}

static int cmd_mknod(const char *path)
{
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0)
		return denied("mknod char device");
	return escape("created a character device");
}

/* Host-side helpers ------------------------------------------------------- */

/* Listens on TCP/UDP loopback port and an abstract unix name; writes every
 * contact to the log, forever (the test kills it). */
static int cmd_listen(int port, const char *abstract, const char *log)
{
	int t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int x = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_un ua = {.sun_family = AF_UNIX};
	size_t n = strlen(abstract);
	memcpy(ua.sun_path + 1, abstract, n);
	if (bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 8) < 0 ||
	    bind(u, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    bind(x, (struct sockaddr *)&ua, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
	    listen(x, 8) < 0) {
		perror("listen");
		return 2;
	}
	FILE *f = fopen(log, "w");
	fprintf(f, "listening\n");
	fflush(f);
	for (;;) {
		char buf[64];
		if (accept(t, NULL, NULL) >= 0)
			fprintf(f, "tcp contact\n");
		if (recv(u, buf, sizeof(buf), 0) > 0)
			fprintf(f, "udp contact\n");
		if (accept(x, NULL, NULL) >= 0)
			fprintf(f, "abstract contact\n");
		fflush(f);
		usleep(20000);
	}
}

/* Holds extra descriptors the scope must not get, then execs argv: fd 7
 * a file without CLOEXEC, fds 8/9 a connected socket pair, fd 10 a
 * directory. */
static int cmd_hold(char **argv)
{
	int f = open("/etc/hostname", O_RDONLY);
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	int d = open("/", O_RDONLY | O_DIRECTORY);
	if (f < 0 || dup2(f, 7) < 0 || dup2(sv[0], 8) < 0 || dup2(sv[1], 9) < 0 || dup2(d, 10) < 0)
		return 2;
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

/* Creates a listening unix socket at path (a stand-in for a bus socket). */
static int cmd_mksock(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	return s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : 2;
}

static int cmd_euid(void)
{
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	return geteuid() == 0 ? escape("euid 0") : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 && !strstr(argv[0], "-worker")) {
		fprintf(stderr, "usage: jig-probe ATTEMPT [ARGS]\n");
		return 2;
	}
	const char *base = strrchr(argv[0], '/');
	if (strcmp(base ? base + 1 : argv[0], "http-worker") == 0)
		return cmd_as_http_worker();
	if (strcmp(base ? base + 1 : argv[0], "acp-worker") == 0)
		return cmd_as_acp_worker();
	const char *c = argv[1];
	const char *a2 = argc > 2 ? argv[2] : "", *a3 = argc > 3 ? argv[3] : "";
	if (!strcmp(c, "read")) return cmd_read(a2);
	if (!strcmp(c, "write")) return cmd_write(a2);
	if (!strcmp(c, "fill")) return cmd_fill(a2, atoll(a3));
	if (!strcmp(c, "tcp")) return inet(SOCK_STREAM, atoi(a2));
	if (!strcmp(c, "udp")) return inet(SOCK_DGRAM, atoi(a2));
	if (!strcmp(c, "abstract")) return cmd_abstract(a2);
	if (!strcmp(c, "talk")) return cmd_talk(a2, atoi(a3), argc > 4 ? argv[4] : "ping");
	if (!strcmp(c, "proxy")) return cmd_proxy(atoi(a2), a3, argc > 4 ? argv[4] : "");
	if (!strcmp(c, "vsock")) return cmd_socket(AF_VSOCK, SOCK_STREAM, "socket(AF_VSOCK)");
	if (!strcmp(c, "raw")) return cmd_socket(AF_INET, SOCK_RAW, "socket(AF_INET, SOCK_RAW)") |
				      cmd_socket(AF_PACKET, SOCK_RAW, "socket(AF_PACKET, SOCK_RAW)");
	if (!strcmp(c, "syscalls")) return cmd_syscalls();
	if (!strcmp(c, "tune-pid1")) return cmd_tune_pid1();
	if (!strcmp(c, "mounts")) return cmd_mounts();
	if (!strcmp(c, "stdio")) return cmd_stdio();
	if (!strcmp(c, "tiocsti")) return cmd_tiocsti(0);
	if (!strcmp(c, "tiocsti-high")) return cmd_tiocsti(1);
	if (!strcmp(c, "int80")) return cmd_int80();
	if (!strcmp(c, "x32")) return cmd_x32();
	if (!strcmp(c, "fds")) return cmd_fds();
	if (!strcmp(c, "procs")) return cmd_procs();
	if (!strcmp(c, "env")) return cmd_env();
	if (!strcmp(c, "hog")) return cmd_hog();
	if (!strcmp(c, "forkbomb")) return cmd_forkbomb();
	if (!strcmp(c, "spin")) return cmd_spin(atoi(a2));
	if (!strcmp(c, "detach")) return cmd_detach(0);
	if (!strcmp(c, "detach-wait")) return cmd_detach(1);
	if (!strcmp(c, "crash-orphan")) return cmd_crash_orphan();
	if (!strcmp(c, "abort")) abort();
	if (!strcmp(c, "sleep")) { sleep((unsigned)atoi(a2)); return 0; }
	if (!strcmp(c, "status")) return cmd_status();
	if (!strcmp(c, "mknod")) return cmd_mknod(a2);
	if (!strcmp(c, "euid")) return cmd_euid();
	if (!strcmp(c, "exit")) return atoi(a2);
	if (!strcmp(c, "listen")) return cmd_listen(atoi(a2), a3, argc > 4 ? argv[4] : "/dev/null");
	if (!strcmp(c, "hold")) return cmd_hold(argv + 2);
	if (!strcmp(c, "mksock")) return cmd_mksock(a2);
	fprintf(stderr, "jig-probe: unknown attempt %s\n", c);
	return 2;
}
