/* What this Linux host can enforce, observed by exercising each mechanism
 * (not by reading version numbers): a user namespace is created, bwrap runs
 * a namespaced no-op, a seccomp filter is loaded and seen to act, and the
 * caller's cgroup v2 is checked for delegation and controllers. */
#include "probe.h"

#include <limits.h>

#include "cgroup.h"

/* Report fields are fixed-size by ABI; truncating a long path in a reason
 * is intended. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
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

/* Runs argv with an empty environment; captures up to cap-1 bytes of stdout. */
static int run_capture(char *const argv[], char *out, size_t cap)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *envp[] = {NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		errno = rc;
		return -1;
	}
	size_t got = 0;
	for (;;) {
		char sink[256];
		char *dst = got + 1 < cap ? out + got : sink;
		size_t room = got + 1 < cap ? cap - 1 - got : sizeof(sink);
		ssize_t n = read(p[0], dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (dst != sink)
			got += (size_t)n;
	}
	out[got] = '\0';
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
	if (run_capture(ver, out, sizeof(out)) != 0) {
		set(it, JIG_PROBE_MISSING, "%s --version failed", path);
		return;
	}
	out[strcspn(out, "\n")] = '\0';
	const char *v = strncmp(out, "bubblewrap ", 11) == 0 ? out + 11 : out;
	if (it)
		snprintf(it->version, sizeof(it->version), "%s", v);
	char *run[] = {(char *)path, "--unshare-all", "--die-with-parent", "--new-session",
		       "--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc",
		       "--dev", "/dev", "--", "/bin/true", NULL};
	int rc = run_capture(run, out, sizeof(out));
	if (rc != 0) {
		set(it, JIG_PROBE_MISSING, "%s --unshare-all ... /bin/true exited %d; Bubblewrap cannot create namespaces here", path, rc);
		return;
	}
	set(it, JIG_PROBE_AVAILABLE, "ran a no-op in new user, pid, net, ipc, uts and cgroup namespaces");
}

static int try_seccomp(void *arg)
{
	(void)arg;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return 2;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EXDEV), SCMP_SYS(getppid), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		return 3;
	errno = 0;
	long v = syscall(SYS_getppid);
	return v == -1 && errno == EXDEV ? 0 : 4;
}

static void probe_seccomp(struct jig_probe_result *r)
{
	struct jig_probe_item *it = item(r, "seccomp");
	const struct scmp_version *v = seccomp_version();
	if (it && v)
		snprintf(it->version, sizeof(it->version), "libseccomp %u.%u.%u", v->major, v->minor, v->micro);
	int st = in_child(try_seccomp, NULL);
	if (st == 0)
		set(it, JIG_PROBE_AVAILABLE, "loaded a filter and saw it deny a system call");
	else
		set(it, JIG_PROBE_MISSING, "could not load a seccomp filter (step %d); the kernel needs CONFIG_SECCOMP_FILTER", st);
}

/* Which v1 hierarchy a controller is bound to (0: none), from /proc/cgroups. */
static int v1_hierarchy(const char *ctl)
{
	FILE *f = fopen("/proc/cgroups", "re");
	if (!f)
		return 0;
	char name[64];
	int hier = 0, n, en, found = 0;
	char line[256];
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d %d %d", name, &hier, &n, &en) == 4 && strcmp(name, ctl) == 0) {
			found = hier;
			break;
		}
	fclose(f);
	return found;
}

static void probe_cgroup(struct jig_probe_result *r)
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
	char why[320] = "";
	if (statfs("/sys/fs/cgroup", &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC) {
		char bound[96] = "";
		size_t len = 0;
		for (int i = 0; i < 3; i++)
			if (v1_hierarchy(ctls[i]) > 0)
				len += (size_t)snprintf(bound + len, sizeof(bound) - len, "%s%s", len ? ", " : "", ctls[i]);
		snprintf(why, sizeof(why), "/sys/fs/cgroup is not a cgroup2 filesystem%s%s%s; boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1)",
			 len ? " (controllers " : "", bound, len ? " are bound to cgroup v1)" : "");
		set(v2, JIG_PROBE_MISSING, "%s", why);
		set(del, JIG_PROBE_MISSING, "no cgroup v2 hierarchy");
		for (int i = 0; i < 3; i++)
			set(ci[i], JIG_PROBE_MISSING, "no cgroup v2 hierarchy");
		return;
	}
	char dir[PATH_MAX];
	if (jig_cg_self(dir, sizeof(dir)) < 0) {
		set(v2, JIG_PROBE_MISSING, "/proc/self/cgroup has no cgroup v2 entry");
		set(del, JIG_PROBE_MISSING, "no cgroup v2 entry");
		for (int i = 0; i < 3; i++)
			set(ci[i], JIG_PROBE_MISSING, "no cgroup v2 entry");
		return;
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
		else
			set(ci[i], JIG_PROBE_MISSING, "controller %s is not enabled for %s (cgroup.controllers: \"%s\"); enable it in the parent's cgroup.subtree_control",
			    ctls[i], dir, ctl);
	}
}

int jig_sandbox_linux_probe(void *state, struct jig_probe_result *out)
{
	(void)state;
	if (!out || out->struct_size < sizeof(*out))
		return JIG_MOD_EINVAL;
	out->count = 0;
	probe_userns(out);
	probe_bwrap(out);
	probe_seccomp(out);
	probe_cgroup(out);
	return JIG_MOD_OK;
}
