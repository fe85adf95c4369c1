/* Why a Linux host cannot run bwrap-based containment, by name, with the
 * operator's remedy: the commonest reasons, each recognised from what the
 * host shows (sysctls, file modes, file system types, cgroup ownership).
 * jig host check lists them; a launch refuses with the first one, in the
 * same words. */
#include "compat.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int jig_linux_run_capture(char *const argv[], char *out, size_t cap)
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
	if (cap)
		out[got] = '\0';
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int jig_linux_bwrap_noop(void)
{
	char out[64];
	char *run[] = {JIG_BWRAP_PATH, "--unshare-all", "--die-with-parent", "--new-session",
		       "--cap-drop", "ALL", "--ro-bind", "/", "/", "--proc", "/proc",
		       "--dev", "/dev", "--", "/bin/true", NULL};
	return jig_linux_run_capture(run, out, sizeof(out));
}

struct found {
	struct jig_host_problem *p;
	uint32_t n, max;
};

static void add(struct found *f, const char *id, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(struct found *f, const char *id, const char *remedy, const char *fmt, ...)
{
	if (f->n >= f->max)
		return;
	struct jig_host_problem *p = &f->p[f->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->id, sizeof(p->id), "%s", id);
	snprintf(p->remedy, sizeof(p->remedy), "%s", remedy);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
}

/* A sysctl's value, or dflt when the kernel has no such knob. */
static long sysctl_value(const char *file, long dflt)
{
	FILE *f = fopen(file, "re");
	long v = dflt;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* Returns 0 when bwrap is usable as a file (checked before it is run). */
static int check_bwrap(struct found *f)
{
	struct stat st;
	if (stat(JIG_BWRAP_PATH, &st) < 0) {
		add(f, "bwrap-missing",
		    "install Bubblewrap: sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf install bubblewrap (Fedora)",
		    "%s: %s; jig needs Bubblewrap", JIG_BWRAP_PATH, strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID))) {
		add(f, "bwrap-setuid",
		    "use the unprivileged Bubblewrap: sudo chmod u-s,g-s " JIG_BWRAP_PATH
		    " (unprivileged user namespaces must be enabled), or install the distribution's non-setuid bubblewrap package",
		    "%s is setuid/setgid (a setuid-only Bubblewrap); jig needs one that creates user namespaces unprivileged",
		    JIG_BWRAP_PATH);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    access(JIG_BWRAP_PATH, X_OK) < 0) {
		add(f, "bwrap-unsafe", "reinstall Bubblewrap from the distribution's package (root-owned, mode 0755)",
		    "%s is not a root-owned executable that only root can write", JIG_BWRAP_PATH);
		return -1;
	}
	return 0;
}

static void check_userns(struct found *f, int bwrap_ok)
{
	if (sysctl_value("/proc/sys/user/max_user_namespaces", 1) == 0)
		add(f, "userns-disabled",
		    "sudo sysctl -w user.max_user_namespaces=15000, and keep it: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/50-userns.conf",
		    "user namespaces are disabled (user.max_user_namespaces is 0)");
	if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone", 1) == 0)
		add(f, "userns-disabled",
		    "sudo sysctl -w kernel.unprivileged_userns_clone=1, and keep it: echo kernel.unprivileged_userns_clone=1 | sudo tee /etc/sysctl.d/50-userns.conf",
		    "user namespaces are disabled (kernel.unprivileged_userns_clone is 0)");
	/* Ubuntu 23.10+: unprivileged user namespaces are allowed only to
	 * programs whose AppArmor profile says userns. A problem only if
	 * Bubblewrap itself is refused (a profile for it is the fix). */
	if (bwrap_ok && f->n == 0 &&
	    sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) != 0 &&
	    jig_linux_bwrap_noop() != 0)
		add(f, "apparmor-userns",
		    "allow Bubblewrap user namespaces with an AppArmor profile: /etc/apparmor.d/bwrap with 'abi <abi/4.0>, include <tunables/global> profile bwrap " JIG_BWRAP_PATH
		    " flags=(unconfined) { userns, }', then sudo apparmor_parser -r /etc/apparmor.d/bwrap",
		    "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and %s was refused one",
		    JIG_BWRAP_PATH);
}

/* The controllers jig needs that /proc/cgroups shows bound to a v1
 * hierarchy (hierarchy id > 0), as "memory, pids": one read of the file. */
static size_t v1_bound(char *out, size_t cap)
{
	static const char *const ctls[] = {"memory", "pids", "cpu"};
	int bound[3] = {0};
	FILE *f = fopen("/proc/cgroups", "re");
	if (f) {
		char name[64], line[256];
		int hier, n, en;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%63s %d %d %d", name, &hier, &n, &en) == 4)
				for (int i = 0; i < 3; i++)
					if (strcmp(name, ctls[i]) == 0)
						bound[i] = hier > 0;
		fclose(f);
	}
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < 3; i++)
		if (bound[i])
			len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", ctls[i]);
	return len;
}

#define CGROUP_V1_REMEDY                                                                                  \
	"boot with cgroup v2 only: add systemd.unified_cgroup_hierarchy=1 to GRUB_CMDLINE_LINUX in "      \
	"/etc/default/grub, run sudo update-grub and reboot (remove any cgroup_no_v1= or "               \
	"systemd.legacy_systemd_cgroup_controller settings)"

int jig_linux_cgroup_v1(struct jig_host_problem *p)
{
	char bound[64];
	size_t len = v1_bound(bound, sizeof(bound));
	struct statfs sf;
	struct found f = {p, 0, 1};
	if (statfs("/sys/fs/cgroup", &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC)
		add(&f, "cgroup-v1", CGROUP_V1_REMEDY, "/sys/fs/cgroup is not a cgroup v2 file system%s%s%s",
		    len ? " (controllers " : "", bound, len ? " are bound to cgroup v1)" : "");
	else if (len)
		add(&f, "cgroup-v1", CGROUP_V1_REMEDY,
		    "controllers %s are bound to cgroup v1 hierarchies, so cgroup v2 cannot enforce them", bound);
	return (int)f.n;
}

void jig_linux_no_delegation(struct jig_host_problem *p, const char *cgroup)
{
	struct found f = {p, 0, 1};
	add(&f, "no-delegation",
	    "start jig from a login session with a systemd user manager (jig then asks it for a scope with Delegate=yes; "
	    "for services: loginctl enable-linger USER), or run it under systemd-run --user --scope -p Delegate=yes jig ...",
	    "%s is not a delegated cgroup v2 subtree of uid %u with memory, pids and cpu", cgroup, (unsigned)geteuid());
}

void jig_linux_cgroup_controllers(struct jig_host_problem *p, const char *cgroup)
{
	struct found f = {p, 0, 1};
	add(&f, "cgroup-controllers",
	    "delegate all three: sudo systemctl edit user@.service, add [Service] Delegate=pids memory cpu, then log in again",
	    "the delegated cgroup %s lacks some of memory, pids and cpu", cgroup);
}

uint32_t jig_linux_problems(struct jig_host_problem *p, uint32_t max, int with_cgroup)
{
	struct found f = {p, 0, max};
	int bwrap_ok = check_bwrap(&f) == 0;
	check_userns(&f, bwrap_ok);
	if (with_cgroup && f.n < f.max)
		f.n += (uint32_t)jig_linux_cgroup_v1(&f.p[f.n]);
	return f.n;
}

void jig_linux_problem_text(const struct jig_host_problem *p, char *out, size_t cap)
{
	snprintf(out, cap, "%s: %s; to fix: %s", p->id, p->what, p->remedy);
}
