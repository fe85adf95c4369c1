/* What this Linux host can enforce, observed by exercising each mechanism
 * (not by reading version numbers): a user namespace is created, bwrap runs
 * a namespaced no-op, a seccomp filter is loaded and seen to act, and the
 * caller's cgroup v2 is checked for delegation and controllers. */
#include "probe.h"

#include <limits.h>

#include "cgroup.h"
#include "compat.h"
#include "filter.h"

/* Report fields are fixed-size by ABI; truncating a long path in a reason
 * is intended. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static struct jig_probe_item *item(struct jig_probe_result *r, const char *name)
{
	if (r->count >= JIG_PROBE_MAX_ITEMS)
		return NULL;
	struct jig_probe_item *it = &r->items[r->count++];
	memset(it, 0, sizeof(*it));
	snprintf(it->name, sizeof(it->name), "%s", name);
	return it;
}

static void set(struct jig_probe_item *it, uint32_t status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set(struct jig_probe_item *it, uint32_t status, const char *fmt, ...)
{
	if (!it)
		return;
	va_list ap;
	va_start(ap, fmt);
	it->status = status;
	vsnprintf(it->reason, sizeof(it->reason), fmt, ap);
	va_end(ap);
}

/* Runs fn in a forked child; returns its exit status or -1. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int try_userns(void *arg)
{
	(void)arg;
	return unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f) ? (errno & 0x7f) : 1;
}

static void probe_userns(struct jig_probe_result *r)
{
	struct jig_probe_item *it = item(r, "userns");
	int st = in_child(try_userns, NULL);
	if (st == 0) {
		set(it, JIG_PROBE_AVAILABLE, "created a user namespace as uid %u", (unsigned)geteuid());
		return;
	}
	char extra[160] = "";
	FILE *f = fopen("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "re");
	if (f) {
		int v = 0;
		if (fscanf(f, "%d", &v) == 1 && v)
			snprintf(extra, sizeof(extra), "; AppArmor restricts unprivileged user namespaces");
		fclose(f);
	}
	set(it, JIG_PROBE_MISSING, "unshare(CLONE_NEWUSER) failed: %s%s; enable unprivileged user namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone)",
	    st > 0 && st < 128 ? strerror(st) : "child failed", extra);
}

static void probe_bwrap(struct jig_probe_result *r)
{
	struct jig_probe_item *it = item(r, "bwrap");
	const char *path = JIG_BWRAP_PATH;
	if (it)
		snprintf(it->path, sizeof(it->path), "%s", path);
	struct stat st;
	if (stat(path, &st) < 0) {
		set(it, JIG_PROBE_MISSING, "%s: %s; install Bubblewrap (Debian package bubblewrap)", path, strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		set(it, JIG_PROBE_MISSING, "%s: not a root-owned regular file that only root can write", path);
		return;
	}
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		/* A setuid bwrap runs with privileges jig does not want to rely on. */
		set(it, JIG_PROBE_MISSING, "%s: is setuid/setgid; jig needs the unprivileged (user namespace) Bubblewrap", path);
		return;
	}
	char out[128];
	char *ver[] = {(char *)path, "--version", NULL};
	if (jig_linux_run_capture(ver, out, sizeof(out)) != 0) {
		set(it, JIG_PROBE_MISSING, "%s --version failed", path);
		return;
	}
	out[strcspn(out, "\n")] = '\0';
	const char *v = strncmp(out, "bubblewrap ", 11) == 0 ? out + 11 : out;
	if (it)
		snprintf(it->version, sizeof(it->version), "%s", v);
	int rc = jig_linux_bwrap_noop();
	if (rc != 0) {
		set(it, JIG_PROBE_MISSING, "%s --unshare-all ... /bin/true exited %d; Bubblewrap cannot create namespaces here", path, rc);
		return;
	}
	set(it, JIG_PROBE_AVAILABLE, "ran a no-op in new user, pid, net, ipc, uts and cgroup namespaces");
}

/* A minimal raw filter (no libseccomp in the module): getppid fails with
 * EXDEV, everything else is allowed. */
static int try_seccomp(void *arg)
{
	(void)arg;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EXDEV & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return 3;
	errno = 0;
	long v = syscall(SYS_getppid);
	return v == -1 && errno == EXDEV ? 0 : 4;
}

static void probe_seccomp(struct jig_probe_result *r)
{
	struct jig_probe_item *it = item(r, "seccomp");
	if (it)
		snprintf(it->version, sizeof(it->version), "filters %s", jig_filter_origin);
	int st = in_child(try_seccomp, NULL);
	if (st == 0)
		set(it, JIG_PROBE_AVAILABLE, "loaded a filter and saw it deny a system call");
	else
		set(it, JIG_PROBE_MISSING, "could not load a seccomp filter (step %d); the kernel needs CONFIG_SECCOMP_FILTER", st);
}

/* Returns 1 when the caller's cgroup v2 is there but not delegated (its
 * path in dir). */
static int probe_cgroup(struct jig_probe_result *r, char *dir, size_t dircap)
{
	static const char *const ctls[] = {"memory", "pids", "cpu"};
	struct jig_probe_item *v2 = item(r, "cgroup2");
	struct jig_probe_item *del = item(r, "cgroup2.delegated");
	struct jig_probe_item *ci[3];
	for (int i = 0; i < 3; i++) {
		char n[32];
		snprintf(n, sizeof(n), "cgroup2.%s", ctls[i]);
		ci[i] = item(r, n);
	}
	struct statfs sf;
	struct jig_host_problem v1;
	if (statfs("/sys/fs/cgroup", &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC) {
		jig_linux_cgroup_v1(&v1);
		set(v2, JIG_PROBE_MISSING, "%s", v1.what);
		set(del, JIG_PROBE_MISSING, "no cgroup v2 hierarchy");
		for (int i = 0; i < 3; i++)
			set(ci[i], JIG_PROBE_MISSING, "no cgroup v2 hierarchy");
		return 0;
	}
	if (jig_cg_self(dir, dircap) < 0) {
		set(v2, JIG_PROBE_MISSING, "/proc/self/cgroup has no cgroup v2 entry");
		set(del, JIG_PROBE_MISSING, "no cgroup v2 entry");
		for (int i = 0; i < 3; i++)
			set(ci[i], JIG_PROBE_MISSING, "no cgroup v2 entry");
		return 0;
	}
	set(v2, JIG_PROBE_AVAILABLE, "cgroup2 mounted at /sys/fs/cgroup");
	if (v2)
		snprintf(v2->path, sizeof(v2->path), "%s", dir);
	if (del)
		snprintf(del->path, sizeof(del->path), "%s", dir);
	struct stat st;
	uid_t uid = geteuid();
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int delegated = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == uid &&
			faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
			faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
	if (delegated)
		set(del, JIG_PROBE_AVAILABLE, "%s is delegated to uid %u", dir, (unsigned)uid);
	else
		set(del, JIG_PROBE_MISSING, "%s is not delegated to uid %u (its directory, cgroup.procs and cgroup.subtree_control must be the user's); run jig in a delegated cgroup, e.g. systemd-run --user --scope -p Delegate=yes",
		    dir, (unsigned)uid);
	char ctl[256] = "";
	int cfd = fd >= 0 ? openat(fd, "cgroup.controllers", O_RDONLY | O_CLOEXEC) : -1;
	if (cfd >= 0) {
		ssize_t n = read(cfd, ctl, sizeof(ctl) - 1);
		ctl[n > 0 ? n : 0] = '\0';
		ctl[strcspn(ctl, "\n")] = '\0';
		close(cfd);
	}
	if (fd >= 0)
		close(fd);
	int missing = 0;
	for (int i = 0; i < 3; i++) {
		if (!ci[i])
			continue;
		snprintf(ci[i]->path, sizeof(ci[i]->path), "%s/cgroup.controllers", dir);
		char padded[260];
		char needle[16];
		snprintf(padded, sizeof(padded), " %s ", ctl);
		snprintf(needle, sizeof(needle), " %s ", ctls[i]);
		if (strstr(padded, needle))
			set(ci[i], delegated ? JIG_PROBE_AVAILABLE : JIG_PROBE_MISSING,
			    delegated ? "controller %s is available to the delegated subtree"
				      : "controller %s exists but the cgroup is not delegated",
			    ctls[i]);
		else {
			set(ci[i], JIG_PROBE_MISSING, "controller %s is not enabled for %s (cgroup.controllers: \"%s\"); enable it in the parent's cgroup.subtree_control",
			    ctls[i], dir, ctl);
			missing = 1;
		}
	}
	return !delegated ? 1 : missing ? 2 : 0;
}

static void problem(struct jig_probe_result *out, const struct jig_host_problem *p)
{
	if (out->problem_count < JIG_PROBE_MAX_PROBLEMS)
		out->problems[out->problem_count++] = *p;
}

int jig_sandbox_linux_probe(void *state, struct jig_probe_result *out)
{
	(void)state;
	if (!out || out->struct_size < offsetof(struct jig_probe_result, problem_count))
		return JIG_MOD_EINVAL;
	out->count = 0;
	probe_userns(out);
	probe_bwrap(out);
	probe_seccomp(out);
	char dir[PATH_MAX];
	int cg = probe_cgroup(out, dir, sizeof(dir));
	if (out->struct_size < sizeof(*out))
		return JIG_MOD_OK; /* a host of ABI 1.1 */
	/* The named problems, in the words a launch refuses with. */
	out->problem_count = jig_linux_problems(out->problems, JIG_PROBE_MAX_PROBLEMS, 1);
	struct jig_host_problem p;
	if (cg == 1) {
		jig_linux_no_delegation(&p, dir);
		problem(out, &p);
	} else if (cg == 2) {
		jig_linux_cgroup_controllers(&p, dir);
		problem(out, &p);
	}
	return JIG_MOD_OK;
}
