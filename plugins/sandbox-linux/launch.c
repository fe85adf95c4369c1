/* The supervisor: starts one scope and stays outside it until it is fenced.
 *
 *   supervisor ── clone3(CLONE_INTO_CGROUP) ──> bwrap (born in the capped leaf)
 *                                                 └─ /.jig/init (PID 1, seccomp, no caps)
 *                                                      └─ payload
 *
 * The child is created inside the scope's cgroup, so there is no moment in
 * which anything of the scope runs uncapped. The supervisor keeps a
 * wall-clock deadline, reads the launcher's termination reports, fences at
 * once on a crash, and always ends with cgroup.kill, "populated 0" and the
 * removal of the cgroups. Only then is the result complete; an unconfirmed
 * fence or cleanup is reported as such. */
#include "launch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jig/trace.h>

#include "cgroup.h"
#include "compat.h"
#include "fault.h"
#include "filter.h"
#include "net.h"
#include "output.h"
#include "report.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define FENCE_TIMEOUT_MS 5000

static void set_error(struct jig_scope_result *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct jig_scope_result *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->error, sizeof(out->error), fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Signals whose default action dumps core: a process dying of one crashed. */
static bool core_signal(int sig)
{
	switch (sig) {
	case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE:
	case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
		return true;
	default:
		return false;
	}
}

/* Cheap fail-closed checks of what bwrap and the cgroup need; a launch
 * refuses with the first named problem, in jig host check's words. */
static int check_host(struct jig_scope_result *out)
{
	struct jig_host_problem p;
	if (jig_linux_problems(&p, 1, 1) == 0)
		return 0;
	jig_linux_problem_text(&p, out->error, sizeof(out->error));
	return -1;
}

struct argv_buf {
	const char **v;
	size_t n, cap;
	char **owned;
	size_t nowned;
};

static int push(struct argv_buf *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 128;
		const char **v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

static const char *own(struct argv_buf *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *own(struct argv_buf *a, const char *fmt, ...)
{
	char **o = realloc(a->owned, (a->nowned + 1) * sizeof(*o));
	if (!o)
		return NULL;
	a->owned = o;
	va_list ap;
	va_start(ap, fmt);
	int r = vasprintf(&o[a->nowned], fmt, ap);
	va_end(ap);
	if (r < 0)
		return NULL;
	return o[a->nowned++];
}

static void argv_free(struct argv_buf *a)
{
	for (size_t i = 0; i < a->nowned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->v);
}

enum mount_kind { M_BIND, M_RW_BIND, M_TMPFS, M_LINK };
struct mount_ent {
	const char *target;
	int kind;
	size_t i;
};

static int cmp_mount(const void *a, const void *b)
{
	return strcmp(((const struct mount_ent *)a)->target, ((const struct mount_ent *)b)->target);
}

/* The output with hidden import stages (ABI 1.5), or NULL. */
static const char *output_path(const struct jig_scope *sc)
{
	if (sc->struct_size < offsetof(struct jig_scope, output_ctx) + sizeof(sc->output_ctx))
		return NULL;
	return sc->output_path;
}

/* The exact loopback endpoints (ABI 1.6): how many. */
static uint32_t listeners(const struct jig_scope *sc)
{
	if (sc->struct_size < offsetof(struct jig_scope, listen_ctx) + sizeof(sc->listen_ctx))
		return 0;
	return sc->n_listeners;
}

static int build_argv(const struct jig_scope *sc, struct argv_buf *a)
{
	int r = 0;
	static const char *const fixed[] = {
		JIG_BWRAP_PATH, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup", "--disable-userns", "--die-with-parent", "--new-session",
		"--as-pid-1", "--clearenv", "--cap-drop", "ALL", "--hostname", "jig", "--dev", "/dev",
		"--proc", "/proc", NULL};
	for (const char *const *f = fixed; *f; f++)
		r |= push(a, *f);
	if (sc->network != JIG_NET_HOST)
		r |= push(a, "--unshare-net");
	r |= push(a, "--seccomp");
	r |= push(a, own(a, "%d", JIG_SECCOMP_FD));
	/* Mounts in target order, so a parent is always mounted before what is
	 * inside it. */
	size_t n = sc->n_binds + sc->n_rw_binds + sc->n_tmpfs + sc->n_symlinks, k = 0;
	struct mount_ent *m = calloc(n + 1, sizeof(*m));
	if (!m)
		return -1;
	for (size_t i = 0; i < sc->n_binds; i++)
		m[k++] = (struct mount_ent){sc->binds[i].target, M_BIND, i};
	for (size_t i = 0; i < sc->n_rw_binds; i++)
		m[k++] = (struct mount_ent){sc->rw_binds[i].target, M_RW_BIND, i};
	for (size_t i = 0; i < sc->n_tmpfs; i++)
		m[k++] = (struct mount_ent){sc->tmpfs[i].target, M_TMPFS, i};
	for (size_t i = 0; i < sc->n_symlinks; i++)
		m[k++] = (struct mount_ent){sc->symlinks[i].target, M_LINK, i};
	qsort(m, n, sizeof(*m), cmp_mount);
	for (size_t i = 0; i < n; i++) {
		if (m[i].kind == M_BIND || m[i].kind == M_RW_BIND) {
			const struct jig_scope_bind *b = m[i].kind == M_BIND ? &sc->binds[m[i].i] : &sc->rw_binds[m[i].i];
			r |= push(a, m[i].kind == M_BIND ? "--ro-bind" : "--bind");
			r |= push(a, b->source);
			r |= push(a, b->target);
		} else if (m[i].kind == M_TMPFS) {
			/* The scope's own, like the host directory it may cover (a
			 * session's TMPDIR is 0700; bwrap's default is 0755). */
			r |= push(a, "--perms");
			r |= push(a, "0700");
			r |= push(a, "--size");
			r |= push(a, own(a, "%llu", (unsigned long long)sc->tmpfs[m[i].i].size_bytes));
			r |= push(a, "--tmpfs");
			r |= push(a, sc->tmpfs[m[i].i].target);
		} else {
			r |= push(a, "--symlink");
			r |= push(a, sc->symlinks[m[i].i].link);
			r |= push(a, sc->symlinks[m[i].i].target);
		}
	}
	free(m);
	r |= push(a, "--ro-bind-fd");
	r |= push(a, own(a, "%d", JIG_INIT_FD));
	r |= push(a, JIG_SCOPE_LAUNCHER);
	/* The root (bwrap's own tmpfs), /dev (bwrap's tmpfs with the device
	 * nodes, its /dev/shm directory and the devpts instance) and /proc are
	 * read-only: the scope writes only to the size-capped tmpfs mounts its
	 * policy lists. The six device nodes (null, zero, full, random,
	 * urandom, tty) stay bind mounts of character devices: they hold no
	 * storage, and bwrap's read-only remount would also make them nodev,
	 * i.e. unusable. */
	static const char *const read_only[] = {"/", "/dev", "/dev/pts", "/proc"};
	for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++) {
		r |= push(a, "--remount-ro");
		r |= push(a, read_only[i]);
	}
	r |= push(a, "--");
	r |= push(a, JIG_SCOPE_LAUNCHER);
	/* Descriptor 0 (jig's pty, never the operator's) becomes the
	 * payload's controlling terminal in its own session. */
	if (sc->controlling_tty)
		r |= push(a, "--tty");
	if (listeners(sc))
		r |= push(a, "+net");
	char keep[4 * 64 + 2] = "-";
	size_t len = 0;
	for (size_t i = 0; i < sc->n_fds; i++)
		len += (size_t)snprintf(keep + len, sizeof(keep) - len, "%s%d", i ? "," : "", sc->fds[i].target);
	r |= push(a, own(a, "%s", keep));
	/* The launcher sets the working directory and the exact environment
	 * (bwrap would add PWD). */
	r |= push(a, sc->cwd);
	const char *op = output_path(sc);
	r |= push(a, op ? own(a, "+%s", op) : sc->hold_path ? sc->hold_path : "-");
	r |= push(a, own(a, "%u", sc->n_env));
	for (size_t i = 0; i < sc->n_env; i++)
		r |= push(a, sc->env[i]);
	r |= push(a, "--");
	for (size_t i = 0; sc->argv[i]; i++)
		r |= push(a, sc->argv[i]);
	return r ? -1 : 0;
}

/* In the child, before exec: every descriptor bwrap gets is placed on its
 * number; everything else is closed. Async-signal-safe only. */
static void child_fds(const struct jig_scope *sc, int seccomp_fd, int report_fd, int err_fd)
{
	int hi[JIG_SCOPE_MAX_FDS + 4];
	int n = (int)sc->n_fds;
	/* First lift every source above all targets (sources and targets may
	 * overlap), then place them. */
	for (int i = 0; i < n; i++)
		if ((hi[i] = fcntl(sc->fds[i].source, F_DUPFD_CLOEXEC, 200)) < 0)
			_exit(120);
	hi[n] = fcntl(seccomp_fd, F_DUPFD_CLOEXEC, 200);
	hi[n + 1] = fcntl(report_fd, F_DUPFD_CLOEXEC, 200);
	hi[n + 2] = fcntl(err_fd, F_DUPFD_CLOEXEC, 200);
	hi[n + 3] = fcntl(sc->init_fd, F_DUPFD_CLOEXEC, 200);
	if (hi[n] < 0 || hi[n + 1] < 0 || hi[n + 2] < 0 || hi[n + 3] < 0)
		_exit(120);
	bool has2 = false;
	for (int i = 0; i < n; i++) {
		if (dup2(hi[i], sc->fds[i].target) < 0)
			_exit(121);
		has2 |= sc->fds[i].target == 2;
	}
	if (dup2(hi[n], JIG_SECCOMP_FD) < 0 || dup2(hi[n + 1], JIG_REPORT_FD) < 0 ||
	    dup2(hi[n + 3], JIG_INIT_FD) < 0)
		_exit(121);
	/* bwrap's own errors go to the supervisor when the policy gives the
	 * scope no stderr; the launcher closes fd 2 then. */
	if (!has2 && dup2(hi[n + 2], 2) < 0)
		_exit(121);
	/* Close everything that is not a target or one of ours. */
	bool keep[JIG_INIT_FD + 1] = {0};
	for (int i = 0; i < n; i++)
		keep[sc->fds[i].target] = true;
	keep[2] |= !has2;
	keep[JIG_SECCOMP_FD] = keep[JIG_REPORT_FD] = keep[JIG_INIT_FD] = true;
	unsigned from = 0;
	for (unsigned fd = 0; fd <= JIG_INIT_FD; fd++)
		if (keep[fd]) {
			if (fd > from)
				syscall(SYS_close_range, from, fd - 1, 0);
			from = fd + 1;
		}
	syscall(SYS_close_range, from, ~0u, 0);
}

static pid_t spawn_in_cgroup(int cgroup_fd, int *pidfd)
{
	struct clone_args ca;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)pidfd;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)cgroup_fd;
	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
}

/* The launcher asks for the output with hidden import stages (mntns and
 * point its descriptors): mounted once, the root to the host, pub held;
 * the answer lets the launcher go on or refuse. */
static void give_output(const struct jig_scope *sc, struct jig_scope_result *out, int fd, int mntns, int point)
{
	struct jig_report a = {.magic = JIG_REPORT_MAGIC, .kind = JIG_REPORT_OUTPUT_READY};
	int root = -1;
	if (!output_path(sc) || out->held_fd >= 0 || mntns < 0 || point < 0) {
		a.err = EPERM;
		snprintf(a.what, sizeof(a.what), "output: not asked for");
	} else if (JIG_FAULT_FAILS("output mount")) { /* test build only */
		a.err = EPERM;
		snprintf(a.what, sizeof(a.what), "output: its tmpfs was not mounted");
	} else if ((a.err = jig_output_project(mntns, point, sc->output_bytes, &root, a.what, sizeof(a.what))) == 0 &&
		   (out->held_fd = openat(root, "pub", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		a.err = errno;
		snprintf(a.what, sizeof(a.what), "output: its public directory");
	}
	if (a.err == 0 && sc->output_ready)
		sc->output_ready(sc->output_ctx, root);
	else if (root >= 0)
		close(root);
	JIG_TRACE_POINT("sandbox: output mounted");
	while (send(fd, &a, sizeof(a), MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* The launcher sends its network namespace (ns): the endpoints' sockets
 * created there, each handed to the host; the answer lets the launcher go
 * on or refuse. Asked once. */
static void give_net(const struct jig_scope *sc, int fd, int ns, bool *asked)
{
	struct jig_report a = {.magic = JIG_REPORT_MAGIC, .kind = JIG_REPORT_NET_READY};
	int fds[JIG_NET_MAX_LISTENERS];
	uint32_t n = listeners(sc);
	if (!n || *asked || ns < 0) {
		a.err = EPERM;
		snprintf(a.what, sizeof(a.what), "network: not asked for");
	} else if (JIG_FAULT_FAILS("net listen")) { /* test build only */
		a.err = EPERM;
		snprintf(a.what, sizeof(a.what), "network: its endpoints were not created");
	} else if ((a.err = jig_net_listen(ns, sc->listeners, n, fds, a.what, sizeof(a.what))) == 0) {
		for (uint32_t i = 0; i < n; i++)
			sc->listen_ready(sc->listen_ctx, i, fds[i]);
	}
	*asked = true;
	JIG_TRACE_POINT("sandbox: network endpoints listening");
	while (send(fd, &a, sizeof(a), MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static void read_reports(const struct jig_scope *sc, int fd, struct jig_scope_result *out, bool *started, bool *main_done,
			 bool *crash, bool *net_asked, char *why, size_t whylen)
{
	struct jig_report r;
	for (;;) {
		union {
			char buf[CMSG_SPACE(2 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
		ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		int passed[2] = {-1, -1};
		for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int)))
				memcpy(passed, CMSG_DATA(c), c->cmsg_len >= CMSG_LEN(2 * sizeof(int)) ? 2 * sizeof(int) : sizeof(int));
		bool good = n == (ssize_t)sizeof(r) && r.magic == JIG_REPORT_MAGIC && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
		if (good && r.kind == JIG_REPORT_HELD && passed[1] < 0 && passed[0] >= 0 && out->held_fd < 0 && !output_path(sc)) {
			out->held_fd = passed[0];
			continue;
		}
		if (good && r.kind == JIG_REPORT_OUTPUT)
			give_output(sc, out, fd, passed[0], passed[1]);
		if (good && r.kind == JIG_REPORT_NET)
			give_net(sc, fd, passed[1] < 0 ? passed[0] : -1, net_asked);
		for (int i = 0; i < 2; i++)
			if (passed[i] >= 0)
				close(passed[i]);
		if (!good)
			return;
		if (r.kind == JIG_REPORT_HELD || r.kind == JIG_REPORT_OUTPUT || r.kind == JIG_REPORT_NET)
			continue;
		r.what[sizeof(r.what) - 1] = '\0';
		switch (r.kind) {
		case JIG_REPORT_STARTED:
			*started = true;
			JIG_TRACE_POINT("sandbox: payload started");
			break;
		case JIG_REPORT_EXEC_FAILED:
			snprintf(why, whylen, "cannot start %s in the scope: %s", r.what, strerror(r.err));
			*main_done = true;
			break;
		case JIG_REPORT_REFUSED:
			snprintf(why, whylen, "the scope's launcher refused to start the payload: %s%s%s", r.what,
				 r.err ? ": " : "", r.err ? strerror(r.err) : "");
			*main_done = true;
			break;
		case JIG_REPORT_EXITED:
			if (r.main) {
				out->exit_status = r.code;
				out->launcher_reported = 1;
				*main_done = true;
			}
			break;
		case JIG_REPORT_SIGNALED:
			if (r.main) {
				out->signal = r.signal;
				out->core_dumped = r.core;
				out->launcher_reported = 1;
				*main_done = true;
			}
			if (r.core || core_signal(r.signal)) {
				if (!r.main || !*crash) {
					out->signal = r.signal;
					out->core_dumped = r.core;
				}
				*crash = true;
			}
			break;
		default:
			return;
		}
	}
}

/* One started scope as the supervisor watches it. */
struct watch {
	int pidfd, rep, errp; /* bwrap's pidfd, the launcher's reports, bwrap's stderr */
	bool started, main_done, crash, timed_out, bwrap_done, rep_live, err_live, net_asked;
	int interrupted;
	char why[400], bwrap_err[400];
	size_t bwrap_err_len;
	siginfo_t bsi;
};

/* Resets out and checks the scope description: JIG_MOD_OK or the error. */
static int check_scope(const struct jig_scope *sc, struct jig_scope_result *out)
{
	if (!out || out->struct_size < sizeof(*out))
		return JIG_MOD_EINVAL;
	uint32_t size = out->struct_size;
	memset(out, 0, sizeof(*out));
	out->struct_size = size;
	out->outcome = JIG_SCOPE_FAILED;
	out->exit_status = -1;
	out->held_fd = -1;
	out->payload_started = JIG_SCOPE_START_NEVER; /* until the launcher reports it */
	if (!sc || sc->struct_size < sizeof(*sc) || !sc->argv || !sc->argv[0] || sc->init_fd < 0 ||
	    !sc->cwd || !sc->name || sc->n_fds > JIG_SCOPE_MAX_FDS || (sc->n_rw_binds && !sc->rw_binds)) {
		set_error(out, "invalid scope description");
		return JIG_MOD_EINVAL;
	}
	uint32_t nl = listeners(sc);
	if (nl && (sc->network != JIG_NET_NONE || !sc->listen_ready || !sc->listeners || nl > JIG_NET_MAX_LISTENERS)) {
		set_error(out, "invalid network endpoints: only in a private network namespace, at most %d, with listen_ready",
			  JIG_NET_MAX_LISTENERS);
		return JIG_MOD_EINVAL;
	}
	for (uint32_t i = 0; i < nl; i++)
		if (sc->listeners[i].ipv4 != 0x7f000001u || sc->listeners[i].port == 0 || sc->listeners[i].reserved) {
			set_error(out, "network endpoint %u: only 127.0.0.1 and a port 1-65535", i);
			return JIG_MOD_EINVAL;
		}
	bool tty0 = false;
	for (size_t i = 0; i < sc->n_fds; i++) {
		if (sc->fds[i].target < 0 || sc->fds[i].target > JIG_SCOPE_MAX_TARGET_FD || fcntl(sc->fds[i].source, F_GETFD) < 0) {
			set_error(out, "descriptor %d for target %d is not open or the target is out of range",
				  sc->fds[i].source, sc->fds[i].target);
			return JIG_MOD_EINVAL;
		}
		tty0 |= sc->fds[i].target == 0 && isatty(sc->fds[i].source);
	}
	if (sc->controlling_tty && !tty0) {
		set_error(out, "a controlling terminal needs a terminal at descriptor 0");
		return JIG_MOD_EINVAL;
	}
	return JIG_MOD_OK;
}

/* Starts bwrap born in the leaf with argv a (the child's end: rep[1],
 * errp[1], seccomp_fd): its pid, or -1 with out's error set. */
static pid_t start(const struct jig_scope *sc, struct jig_scope_result *out, const struct jig_cg *cg,
		   const struct argv_buf *a, int seccomp_fd, int rep_w, int err_w, int *pidfd)
{
	pid_t parent = getpid();
	pid_t pid = spawn_in_cgroup(cg->leaf_fd, pidfd);
	if (pid < 0) {
		set_error(out, "clone3(CLONE_INTO_CGROUP) into %s: %s; jig needs Linux 5.14 or later", cg->leaf,
			  strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* If the supervisor dies, bwrap dies, and with it (--die-with-parent,
		 * PID 1 of the scope) everything in the scope. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(122);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		child_fds(sc, seccomp_fd, rep_w, err_w);
		char *envp[] = {NULL};
		execve(JIG_BWRAP_PATH, (char *const *)a->v, envp);
		_exit(123);
	}
	return pid;
}

/* Waits until bwrap is done, a crash is reported, the deadline passes, the
 * host aborts or an interrupt arrives on sc->interrupt_fd, reading the
 * launcher's reports and bwrap's stderr meanwhile. */
static void supervise(const struct jig_scope *sc, struct jig_scope_result *out, struct watch *w, long long deadline)
{
	int sfd = sc->interrupt_fd;
	while (!w->bwrap_done && !w->crash) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			w->timed_out = true;
			break;
		}
		/* A closed pipe stays readable (POLLHUP); stop polling it. */
		struct pollfd p[5] = {{.fd = w->pidfd, .events = POLLIN},
				      {.fd = w->rep_live ? w->rep : -1, .events = POLLIN},
				      {.fd = w->err_live ? w->errp : -1, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN},
				      {.fd = sc->abort_fd, .events = POLLIN}};
		int n = poll(p, 5, left > 1000 ? 1000 : (int)left);
		if (p[4].revents) {
			out->aborted = 1;
			break;
		}
		if (n < 0 && errno != EINTR)
			break;
		if (p[1].revents) {
			read_reports(sc, w->rep, out, &w->started, &w->main_done, &w->crash, &w->net_asked, w->why, sizeof(w->why));
			if (p[1].revents & POLLHUP && !(p[1].revents & POLLIN))
				w->rep_live = false;
		}
		if (p[2].revents) {
			ssize_t k = read(w->errp, w->bwrap_err + w->bwrap_err_len, sizeof(w->bwrap_err) - 1 - w->bwrap_err_len);
			if (k > 0)
				w->bwrap_err_len += (size_t)k;
			else if (k == 0 || (errno != EAGAIN && errno != EINTR) || w->bwrap_err_len + 1 >= sizeof(w->bwrap_err))
				w->err_live = false;
		}
		if (p[3].revents & POLLIN) {
			struct signalfd_siginfo ssi;
			if (read(sfd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi)) {
				w->interrupted = (int)ssi.ssi_signo;
				break;
			}
		}
		if (p[0].revents & POLLIN) {
			if (waitid(P_PIDFD, (id_t)w->pidfd, &w->bsi, WEXITED) == 0)
				w->bwrap_done = true;
		}
	}
}

/* The outcome from what the supervisor saw, with the cleanup's verdict
 * (fence, removed, rmerr) appended to the error when it is unconfirmed. */
static void verdict(struct jig_scope_result *out, struct watch *w, int fence, int removed, const char *rmerr)
{
	w->bwrap_err[w->bwrap_err_len] = '\0';
	w->bwrap_err[strcspn(w->bwrap_err, "\n")] = '\0';
	const char *why = w->why, *bwrap_err = w->bwrap_err;
	const siginfo_t *bsi = &w->bsi;
	/* The launcher's report that it started the payload; an exec that
	 * failed, or a refusal, is a payload that never ran. */
	bool ran = w->started && !why[0];
	out->payload_started = ran ? JIG_SCOPE_START_RAN : JIG_SCOPE_START_NEVER;
	if (out->oom_kills > 0)
		out->outcome = JIG_SCOPE_OOM;
	else if (w->crash)
		out->outcome = JIG_SCOPE_CRASHED;
	else if (why[0]) {
		/* The launcher could not start the payload (exec failed, refused). */
		out->outcome = JIG_SCOPE_FAILED;
		out->launcher_reported = 0;
		set_error(out, "%s", why);
	} else if (w->timed_out)
		out->outcome = JIG_SCOPE_TIMEOUT;
	else if (out->aborted) {
		out->outcome = JIG_SCOPE_FAILED;
		set_error(out, "ended by the host");
	} else if (w->interrupted) {
		out->outcome = JIG_SCOPE_FAILED;
		out->interrupted_by = w->interrupted;
		set_error(out, "the supervisor received signal %d and fenced the scope", w->interrupted);
	}
	else if (out->launcher_reported)
		out->outcome = out->signal ? JIG_SCOPE_SIGNALED : JIG_SCOPE_EXITED;
	else {
		out->outcome = JIG_SCOPE_FAILED;
		if (why[0])
			set_error(out, "%s", why);
		else if (ran) /* bwrap went while the payload ran: not "never started" */
			set_error(out, "the scope was killed while its payload ran (bwrap %s %d%s%s); the payload's end was not reported",
				  bsi->si_code == CLD_EXITED ? "exited" : "killed by signal", bsi->si_status, bwrap_err[0] ? ": " : "",
				  bwrap_err);
		else if (bwrap_err[0])
			set_error(out, "bwrap: %s", bwrap_err);
		else
			set_error(out, "the scope ended before its payload started (bwrap %s %d)",
				  bsi->si_code == CLD_EXITED ? "exited" : "killed by signal", bsi->si_status);
	}
	if (!out->cleanup_confirmed) {
		size_t l = strlen(out->error);
		snprintf(out->error + l, sizeof(out->error) - l, "%scleanup not confirmed: %s", l ? "; " : "",
			 fence != 0 ? "the cgroup did not report populated 0 after cgroup.kill"
			 : removed != 0 ? rmerr : "bwrap was not reaped");
	}
}

/* check → filter and cgroup → start → supervise → fence → verdict. */
int jig_sandbox_linux_launch(void *state, const struct jig_scope *sc, struct jig_scope_result *out)
{
	(void)state;
	int rc = check_scope(sc, out);
	if (rc != JIG_MOD_OK)
		return rc;
	JIG_TRACE_POINT("sandbox: launch called");
	if (check_host(out) < 0)
		return JIG_MOD_EFAIL;
	JIG_TRACE_POINT("sandbox: host checked");

	struct argv_buf a = {0};
	if (build_argv(sc, &a) < 0) {
		argv_free(&a);
		set_error(out, "out of memory building the bwrap command");
		return JIG_MOD_ENOMEM;
	}
	int seccomp_fd = -1;
	enum jig_filter_net fnet = sc->network == JIG_NET_HOST ? JIG_FILTER_HOST : listeners(sc) ? JIG_FILTER_INET : JIG_FILTER_NONE;
	if (jig_filter_open(fnet, &seccomp_fd, out->error, sizeof(out->error)) < 0) {
		argv_free(&a);
		return JIG_MOD_EFAIL;
	}
	JIG_TRACE_POINT("sandbox: filter built");
	struct jig_cg cg;
	int cr = jig_cg_create(sc->name, &sc->limits, sc->companion_pid, &cg, out->error, sizeof(out->error));
	if (cr < 0) {
		out->needs_delegation = cr == -2;
		close(seccomp_fd);
		argv_free(&a);
		return JIG_MOD_EFAIL;
	}
	int rep[2] = {-1, -1}, errp[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		set_error(out, "pipe: %s", strerror(errno));
		goto early_fail;
	}

	/* An interrupt (^C, hang-up, kill) the host relays on its interrupt_fd
	 * fences the scope instead of leaving it behind. The host's signal
	 * state is the host's: nothing here changes it. */
	JIG_TRACE_POINT("sandbox: cgroup created");
	JIG_FAULT_POINT("scope cgroup"); /* the leaf made, nothing in it yet */
	long long t0 = now_ms();
	struct watch w = {.pidfd = -1, .rep = rep[0], .errp = errp[0], .rep_live = true, .err_live = true};
	if (start(sc, out, &cg, &a, seccomp_fd, rep[1], errp[1], &w.pidfd) < 0)
		goto early_fail;
	JIG_FAULT_POINT("scope launched"); /* bwrap born in the leaf */
	close(rep[1]);
	close(errp[1]);
	close(seccomp_fd);
	seccomp_fd = -1;
	argv_free(&a);
	fcntl(rep[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);

	supervise(sc, out, &w, t0 + (long long)sc->limits.wall_ms);
	JIG_TRACE_POINT("sandbox: payload ended");
	JIG_FAULT_POINT("scope fence"); /* the payload ended, the scope not yet fenced */
	/* Fence: always, also after a clean exit (detached descendants). */
	int populated = jig_cg_populated(&cg);
	out->fenced = populated != 0;
	int fence = jig_cg_fence(&cg, FENCE_TIMEOUT_MS);
	if (!w.bwrap_done && waitid(P_PIDFD, (id_t)w.pidfd, &w.bsi, WEXITED) == 0)
		w.bwrap_done = true;
	read_reports(sc, rep[0], out, &w.started, &w.main_done, &w.crash, &w.net_asked, w.why, sizeof(w.why));
	out->wall_ms = (uint64_t)(now_ms() - t0);
	jig_cg_stats(&cg, out);
	char rmerr[300] = "";
	int removed = jig_cg_remove(&cg, rmerr, sizeof(rmerr));
	out->cleanup_confirmed = fence == 0 && removed == 0 && w.bwrap_done;
	JIG_TRACE_POINT("sandbox: fenced and removed");
	close(rep[0]);
	close(errp[0]);
	close(w.pidfd);
	verdict(out, &w, fence, removed, rmerr);
	return JIG_MOD_OK;

early_fail:
	for (int i = 0; i < 2; i++) {
		if (rep[i] >= 0)
			close(rep[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	if (seccomp_fd >= 0)
		close(seccomp_fd);
	argv_free(&a);
	char ignored[16];
	jig_cg_remove(&cg, ignored, sizeof(ignored));
	return JIG_MOD_EFAIL;
}
