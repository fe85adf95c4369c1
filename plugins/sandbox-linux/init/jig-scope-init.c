/* jig-scope-init: the trusted launcher inside every scope (PID 1 of the
 * scope's pid namespace, bound read-only at /.jig/init).
 *
 *   jig-scope-init [--tty] [+net] KEEP CWD HOLD N NAME=VALUE... -- PROGRAM [ARGS...]
 *
 * --tty: descriptor 0 is jig's pty slave (never the operator's terminal);
 * the payload starts in a session of its own with it as its controlling
 * terminal (TIOCSCTTY), so it gets job control and SIGWINCH.
 * "+net": the scope has exact loopback endpoints; the supervisor creates
 * their listening sockets in our network namespace before the payload
 * starts (ask_net).
 * KEEP is the comma-separated list of descriptor numbers the policy selects
 * ("-" for none), CWD the working directory, HOLD a directory to open and
 * hand to the supervisor before the payload starts ("-" for none; "+PATH":
 * the supervisor mounts the output at PATH from outside, ask_output), and the
 * N NAME=VALUE strings
 * the payload's whole environment. Descriptor JIG_REPORT_FD carries reports
 * to the supervisor.
 *
 * It makes itself non-dumpable (so the payload cannot open /proc/1/fd or
 * read its memory), closes every other descriptor, refuses to start the
 * payload if any capability is left or seccomp/no_new_privs are not in
 * force, becomes the subreaper, starts the payload with only the selected
 * descriptors, and reports every termination it reaps: the real signal
 * number and core flag, or the exit status. It exits with the payload.
 * Statically linked against musl, without libcap (issue 14: it is hashed
 * and started on every launch, so it is kept small): it needs nothing
 * from the scope's binds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../report.h"

#define MAX_KEEP 64

extern char **environ;

static void report(const struct jig_report *r)
{
	struct jig_report copy = *r;
	copy.magic = JIG_REPORT_MAGIC;
	while (write(JIG_REPORT_FD, &copy, sizeof(copy)) < 0 && errno == EINTR)
		;
}

static _Noreturn void refuse(const char *what, int err);

/* Sends the report r with n (<= 2) descriptors (SCM_RIGHTS) to the
 * supervisor; false if it did not go whole. */
static bool send_fds(const struct jig_report *r, const int *fds, size_t n)
{
	struct iovec iov = {.iov_base = (void *)r, .iov_len = sizeof(*r)};
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = CMSG_SPACE(n * sizeof(int))};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(JIG_REPORT_FD, &m, 0) == (ssize_t)sizeof(*r);
}

/* Sends an open descriptor of dir to the supervisor (SCM_RIGHTS) and
 * closes ours: the supervisor can then read the directory after every
 * writer in the scope is gone. */
static void hand_over(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		refuse("cannot open the held directory", errno);
	struct jig_report r = {.magic = JIG_REPORT_MAGIC, .kind = JIG_REPORT_HELD};
	if (!send_fds(&r, &fd, 1))
		refuse("cannot hand over the held directory", errno);
	close(fd);
}

/* The output with hidden import stages (HOLD "+PATH"): our mount
 * namespace and PATH (the mount point) to the supervisor, which mounts
 * the output's public directory there from outside; the payload starts
 * only after its answer. Nothing of the output is ever opened here. */
static void ask_output(const char *dir)
{
	int fds[2] = {open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC),
		      open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
	if (fds[0] < 0 || fds[1] < 0)
		refuse(fds[0] < 0 ? "cannot open the scope's mount namespace" : "cannot open the output's mount point", errno);
	struct jig_report r = {.magic = JIG_REPORT_MAGIC, .kind = JIG_REPORT_OUTPUT};
	if (!send_fds(&r, fds, 2))
		refuse("cannot ask for the output", errno);
	close(fds[0]);
	close(fds[1]);
	struct jig_report a;
	ssize_t n;
	while ((n = read(JIG_REPORT_FD, &a, sizeof(a))) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(a) || a.magic != JIG_REPORT_MAGIC || a.kind != JIG_REPORT_OUTPUT_READY)
		refuse("the supervisor did not answer for the output", n < 0 ? errno : 0);
	if (a.err) {
		a.what[sizeof(a.what) - 1] = '\0';
		refuse(a.what, a.err);
	}
}

/* Exact loopback endpoints ("+net"): our network namespace to the
 * supervisor, which creates the listening sockets there from outside;
 * the payload starts only after its answer. */
static void ask_net(void)
{
	int ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		refuse("cannot open the scope's network namespace", errno);
	struct jig_report r = {.magic = JIG_REPORT_MAGIC, .kind = JIG_REPORT_NET};
	if (!send_fds(&r, &ns, 1))
		refuse("cannot ask for the network endpoints", errno);
	close(ns);
	struct jig_report a;
	ssize_t n;
	while ((n = read(JIG_REPORT_FD, &a, sizeof(a))) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(a) || a.magic != JIG_REPORT_MAGIC || a.kind != JIG_REPORT_NET_READY)
		refuse("the supervisor did not answer for the network endpoints", n < 0 ? errno : 0);
	if (a.err) {
		a.what[sizeof(a.what) - 1] = '\0';
		refuse(a.what, a.err);
	}
}

static _Noreturn void refuse(const char *what, int err)
{
	struct jig_report r = {.kind = JIG_REPORT_REFUSED, .err = err};
	snprintf(r.what, sizeof(r.what), "%s", what);
	report(&r);
	_exit(126);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor not in keep[0..n) (sorted). */
static void close_others(const int *keep, int n)
{
	unsigned from = 0;
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > from && syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0) < 0)
			refuse("close_range", errno);
		from = (unsigned)keep[i] + 1;
	}
	if (syscall(SYS_close_range, from, ~0u, 0) < 0)
		refuse("close_range", errno);
}

/* capget(2)'s ABI (<linux/capability.h>, version 3: two 32-bit words per
 * set), declared here: musl's headers do not carry the kernel's. */
struct cap_header {
	uint32_t version;
	int pid;
};
struct cap_data {
	uint32_t effective, permitted, inheritable;
};
#define CAP_VERSION_3 0x20080522

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_IS_SET 1
#endif

static void check_no_capabilities(void)
{
	struct cap_header h = {.version = CAP_VERSION_3, .pid = 0};
	struct cap_data d[2];
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		refuse("capget", errno);
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			refuse("a capability is still in the effective, permitted or inheritable set", 0);
	/* Every capability the running kernel knows, not only those a header
	 * names: PR_CAPBSET_READ answers EINVAL past the kernel's last one. */
	for (unsigned long c = 0;; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (b < 0 && errno == EINVAL && c > 0)
			break;
		if (b < 0)
			refuse("PR_CAPBSET_READ", errno);
		if (b > 0)
			refuse("a capability is still in the bounding set", 0);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
			refuse("a capability is still in the ambient set", 0);
		if (c > 1024)
			refuse("PR_CAPBSET_READ never ends", 0);
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		refuse("no_new_privs is not set", 0);
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		refuse("no seccomp filter is in force", 0);
}

int main(int argc, char **argv)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		refuse("PR_SET_DUMPABLE", errno);
	bool tty = argc > 1 && strcmp(argv[1], "--tty") == 0;
	if (tty) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	bool net = argc > 1 && strcmp(argv[1], "+net") == 0;
	if (net) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 5)
		refuse("usage: jig-scope-init KEEP CWD HOLD N NAME=VALUE... -- PROGRAM [ARGS...]", EINVAL);
	const char *cwd = argv[2], *hold = argv[3];
	char *end;
	long nenv = strtol(argv[4], &end, 10);
	if (*end || nenv < 0 || nenv > 1024 || argc < 5 + nenv + 2 || strcmp(argv[5 + nenv], "--") != 0)
		refuse("usage: jig-scope-init KEEP CWD HOLD N NAME=VALUE... -- PROGRAM [ARGS...]", EINVAL);
	char **envp = argv + 5;
	char **prog = argv + 5 + nenv + 1;
	argv[5 + nenv] = NULL; /* terminates envp */

	int keep[MAX_KEEP + 1], nkeep = 0;
	if (strcmp(argv[1], "-") != 0) {
		for (char *s = argv[1]; *s;) {
			char *end;
			long v = strtol(s, &end, 10);
			if (end == s || v < 0 || v > 63 || nkeep >= MAX_KEEP || (*end && *end != ','))
				refuse("bad descriptor list", EINVAL);
			keep[nkeep++] = (int)v;
			s = *end ? end + 1 : end;
		}
	}
	keep[nkeep++] = JIG_REPORT_FD;
	qsort(keep, (size_t)nkeep, sizeof(int), cmp_int);
	close_others(keep, nkeep);
	if (fcntl(JIG_REPORT_FD, F_SETFD, FD_CLOEXEC) < 0)
		refuse("report descriptor missing", errno);

	check_no_capabilities();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		refuse("PR_SET_CHILD_SUBREAPER", errno);

	if (net)
		ask_net();
	if (hold[0] == '+')
		ask_output(hold + 1);
	else if (strcmp(hold, "-") != 0)
		hand_over(hold);

	pid_t main_pid = fork();
	if (main_pid < 0)
		refuse("fork", errno);
	if (main_pid == 0) {
		/* Only the selected descriptors cross into package code: the
		 * report descriptor is close-on-exec, everything else is gone. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (tty && (setsid() < 0 || ioctl(0, TIOCSCTTY, 0) < 0)) {
			struct jig_report r = {.kind = JIG_REPORT_EXEC_FAILED, .pid = getpid(), .main = 1, .err = errno};
			snprintf(r.what, sizeof(r.what), "the terminal at descriptor 0 as the controlling terminal");
			report(&r);
			_exit(127);
		}
		if (chdir(cwd) < 0) {
			struct jig_report r = {.kind = JIG_REPORT_EXEC_FAILED, .pid = getpid(), .main = 1, .err = errno};
			snprintf(r.what, sizeof(r.what), "working directory %s", cwd);
			report(&r);
			_exit(127);
		}
		/* The environment is exactly the policy's; PATH (if any) is the
		 * policy's too. */
		environ = envp;
		execvp(prog[0], prog);
		struct jig_report r = {.kind = JIG_REPORT_EXEC_FAILED, .pid = getpid(), .main = 1, .err = errno};
		snprintf(r.what, sizeof(r.what), "%s", prog[0]);
		report(&r);
		_exit(127);
	}
	struct jig_report started = {.kind = JIG_REPORT_STARTED, .pid = main_pid, .main = 1};
	report(&started);

	for (;;) {
		int st;
		pid_t pid = wait4(-1, &st, 0, NULL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			_exit(125); /* no child left without the payload's end: cannot happen */
		}
		struct jig_report r = {.pid = pid, .main = pid == main_pid};
		if (WIFSIGNALED(st)) {
			r.kind = JIG_REPORT_SIGNALED;
			r.signal = WTERMSIG(st);
			r.core = WCOREDUMP(st) ? 1 : 0;
		} else {
			r.kind = JIG_REPORT_EXITED;
			r.code = WEXITSTATUS(st);
		}
		report(&r);
		if (pid == main_pid)
			/* Leaving ends the pid namespace: the kernel kills what is left;
			 * the supervisor then fences the cgroup anyway. */
			_exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
	}
}
