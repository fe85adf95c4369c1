/* Rootless cgroup v2.
 *
 * Where the run's cgroups go (the "delegated subtree" D):
 *  - the caller's cgroup C, if it is delegated to the user (directory,
 *    cgroup.procs and cgroup.subtree_control are the user's) and jig (with,
 *    perhaps, its outer command) is alone in it: jig moves them into
 *    C/jig-supervisor and enables the controllers in C (a systemd scope
 *    started with Delegate=yes);
 *  - else C's parent, if it is delegated to the user and already enables
 *    memory, pids and cpu for its children (C is one delegated leaf among
 *    others, as in the test VM);
 *  - else the launch is refused. There is no fallback to ulimits or
 *    process groups.
 * The run root D/jig-<pid>-<n> enables the controllers for its leaf; the
 * leaf gets memory.max, memory.swap.max=0, memory.oom.group=1, pids.max and
 * cpu.max before any process is in it. */
#include "cgroup.h"
#include "compat.h"

/* Paths are bounded by PATH_MAX; a truncated message is acceptable. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CG_MOUNT "/sys/fs/cgroup"

static void fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

static int write_at(const char *dir, const char *file, const char *val)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(val);
	ssize_t w = write(fd, val, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return w == (ssize_t)len ? 0 : -1;
}

static ssize_t read_at(const char *dir, const char *file, char *buf, size_t cap)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* "key value" lines: value of key, or 0. */
static uint64_t keyed(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, kl) == 0 && l[kl] == ' ')
			return strtoull(l + kl + 1, NULL, 10);
	return 0;
}

static bool owned(const char *dir)
{
	struct stat st;
	char p[PATH_MAX + 64];
	if (stat(dir, &st) < 0 || st.st_uid != geteuid())
		return false;
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	if (access(p, W_OK) < 0)
		return false;
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", dir);
	return access(p, W_OK) == 0;
}

static bool has_words(const char *list, const char *const *words)
{
	char padded[512];
	snprintf(padded, sizeof(padded), " %s ", list);
	for (char *c = padded; *c; c++)
		if (*c == '\n')
			*c = ' ';
	for (; *words; words++) {
		char needle[32];
		snprintf(needle, sizeof(needle), " %s ", *words);
		if (!strstr(padded, needle))
			return false;
	}
	return true;
}

static const char *const controllers[] = {"memory", "pids", "cpu", NULL};

/* The only processes in dir are us and, perhaps, the host's companion
 * (jig run's outer command, named by the host): both may be moved. */
static bool ours_alone_in(const char *dir, pid_t companion)
{
	char buf[256];
	ssize_t n = read_at(dir, "cgroup.procs", buf, sizeof(buf));
	if (n <= 0 || (size_t)n >= sizeof(buf) - 1)
		return false;
	for (char *l = buf; *l;) {
		char *end;
		long pid = strtol(l, &end, 10);
		if (end == l || *end != '\n' || (pid != getpid() && !(companion > 0 && pid == companion)))
			return false;
		l = end + 1;
	}
	return true;
}
int jig_cg_self(char *dir, size_t cap)
{
	char rel[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		char line[PATH_MAX + 8];
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(rel, sizeof(rel), "%s", line + 3);
			}
		fclose(f);
	}
	if (rel[0] != '/' || strstr(rel, "/..") || strstr(rel, "(deleted)"))
		return -1;
	snprintf(dir, cap, CG_MOUNT "%s", strcmp(rel, "/") == 0 ? "" : rel);
	return 0;
}

/* dir's parent inside the cgroup mount, or "" for the root itself. */
static void cg_parent(const char *dir, char *out, size_t cap)
{
	snprintf(out, cap, "%s", dir);
	char *slash = strrchr(out, '/');
	if (slash && slash > out + strlen(CG_MOUNT))
		*slash = '\0';
	else
		out[0] = '\0';
}

static int find_delegated(pid_t companion, char *out, size_t cap, char *err, size_t errlen)
{
	struct statfs sf;
	if (statfs(CG_MOUNT, &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC) {
		fail(err, errlen, "%s is not a cgroup v2 file system: jig cannot cap memory, tasks and CPU here, so it refuses to launch (see 'jig host check')", CG_MOUNT);
		return -1;
	}
	char c[PATH_MAX];
	if (jig_cg_self(c, sizeof(c)) < 0) {
		fail(err, errlen, "/proc/self/cgroup has no usable cgroup v2 entry; refusing to launch");
		return -1;
	}
	char ctl[256], p[PATH_MAX];
	cg_parent(c, p, sizeof(p));
	/* Already moved aside by an earlier launch of this process (a Flow and
	 * its effects' workers): the delegated cgroup is the parent. */
	const char *base = strrchr(c, '/');
	if (base && strcmp(base, "/jig-supervisor") == 0 && p[0] && owned(p) &&
	    read_at(p, "cgroup.subtree_control", ctl, sizeof(ctl)) >= 0 && has_words(ctl, controllers)) {
		snprintf(out, cap, "%s", p);
		return 0;
	}
	if (owned(c) && ours_alone_in(c, companion)) {
		char sup[PATH_MAX + 32], other[32];
		snprintf(sup, sizeof(sup), "%s/jig-supervisor", c);
		snprintf(other, sizeof(other), "%d", (int)companion);
		if ((mkdir(sup, 0755) < 0 && errno != EEXIST) ||
		    (companion > 0 && write_at(sup, "cgroup.procs", other) < 0 && errno != ESRCH) ||
		    write_at(sup, "cgroup.procs", "0") < 0 ||
		    write_at(c, "cgroup.subtree_control", "+memory +pids +cpu") < 0) {
			fail(err, errlen, "%s: cannot move jig into a child and enable memory, pids and cpu: %s", c, strerror(errno));
			return -1;
		}
		snprintf(out, cap, "%s", c);
		return 0;
	}
	if (p[0] && owned(p) && read_at(p, "cgroup.subtree_control", ctl, sizeof(ctl)) >= 0 &&
	    has_words(ctl, controllers)) {
		snprintf(out, cap, "%s", p);
		return 0;
	}
	/* jig does not fall back to ulimits. */
	struct jig_host_problem pr;
	jig_linux_no_delegation(&pr, c);
	jig_linux_problem_text(&pr, err, errlen);
	return -2;
}

int jig_cg_create(const char *scope, const struct jig_scope_limits *l, pid_t companion, struct jig_cg *cg,
		  char *err, size_t errlen)
{
	memset(cg, 0, sizeof(*cg));
	cg->leaf_fd = cg->events_fd = -1;
	char d[PATH_MAX];
	int fr = find_delegated(companion, d, sizeof(d), err, errlen);
	if (fr < 0)
		return fr;
	static unsigned counter_; /* launches may run concurrently (effects) */
	unsigned counter = __atomic_fetch_add(&counter_, 1, __ATOMIC_RELAXED);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int n = snprintf(cg->root, sizeof(cg->root), "%s/jig-%d-%u-%lx", d, (int)getpid(), counter,
			 (unsigned long)ts.tv_nsec);
	if (n < 0 || (size_t)n >= sizeof(cg->root) ||
	    snprintf(cg->leaf, sizeof(cg->leaf), "%s/%s", cg->root, scope) >= (int)sizeof(cg->leaf)) {
		fail(err, errlen, "cgroup path too long under %s", d);
		return -1;
	}
	if (mkdir(cg->root, 0755) < 0) {
		fail(err, errlen, "%s: cannot create the run's cgroup: %s", cg->root, strerror(errno));
		cg->root[0] = cg->leaf[0] = '\0';
		return -1;
	}
	if (write_at(cg->root, "cgroup.subtree_control", "+memory +pids +cpu") < 0) {
		fail(err, errlen, "%s: cannot enable memory, pids and cpu for the scope: %s", cg->root, strerror(errno));
		goto undo;
	}
	if (mkdir(cg->leaf, 0755) < 0) {
		fail(err, errlen, "%s: cannot create the scope's cgroup: %s", cg->leaf, strerror(errno));
		cg->leaf[0] = '\0';
		goto undo;
	}
	char v[64];
	struct {
		const char *file;
		char val[64];
	} w[5];
	snprintf(w[0].val, sizeof(w[0].val), "%llu", (unsigned long long)l->memory_bytes);
	w[0].file = "memory.max";
	snprintf(w[1].val, sizeof(w[1].val), "0");
	w[1].file = "memory.swap.max";
	snprintf(w[2].val, sizeof(w[2].val), "1");
	w[2].file = "memory.oom.group";
	snprintf(w[3].val, sizeof(w[3].val), "%u", l->tasks);
	w[3].file = "pids.max";
	snprintf(w[4].val, sizeof(w[4].val), "%u 100000", l->cpu_quota_us);
	w[4].file = "cpu.max";
	for (int i = 0; i < 5; i++) {
		if (write_at(cg->leaf, w[i].file, w[i].val) < 0) {
			fail(err, errlen, "%s/%s: cannot set %s: %s; refusing to launch without the limit", cg->leaf,
			     w[i].file, w[i].val, strerror(errno));
			goto undo;
		}
		/* Read back: a limit the kernel did not take is not enforced. */
		bool same = read_at(cg->leaf, w[i].file, v, sizeof(v)) > 0;
		if (same && i == 0) /* the kernel keeps whole pages */
			same = strtoull(v, NULL, 10) == (l->memory_bytes & ~(uint64_t)4095);
		else if (same)
			same = strncmp(v, w[i].val, strlen(w[i].val)) == 0;
		if (!same) {
			fail(err, errlen, "%s/%s reads \"%.*s\" after writing \"%s\"; refusing to launch", cg->leaf,
			     w[i].file, (int)strcspn(v, "\n"), v, w[i].val);
			goto undo;
		}
	}
	cg->leaf_fd = open(cg->leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char ev[PATH_MAX + 32];
	snprintf(ev, sizeof(ev), "%s/cgroup.events", cg->leaf);
	cg->events_fd = open(ev, O_RDONLY | O_CLOEXEC);
	if (cg->leaf_fd < 0 || cg->events_fd < 0) {
		fail(err, errlen, "%s: cannot open the scope's cgroup: %s", cg->leaf, strerror(errno));
		goto undo;
	}
	return 0;
undo:;
	char ignored[16];
	jig_cg_remove(cg, ignored, sizeof(ignored));
	return -1;
}

int jig_cg_populated(const struct jig_cg *cg)
{
	char buf[256];
	if (pread(cg->events_fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	buf[sizeof(buf) - 1] = '\0';
	const char *p = strstr(buf, "populated ");
	return p ? p[10] == '1' : -1;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int jig_cg_fence(const struct jig_cg *cg, int timeout_ms)
{
	if (write_at(cg->leaf, "cgroup.kill", "1") < 0)
		return -1;
	long long end = now_ms() + timeout_ms;
	for (;;) {
		int p = jig_cg_populated(cg);
		if (p == 0)
			return 0;
		if (p < 0)
			return -1;
		long long left = end - now_ms();
		if (left <= 0)
			return -1;
		/* cgroup.events signals a change with POLLPRI; re-read on wakeup,
		 * and at least every 50 ms in case a notification is missed. */
		struct pollfd pfd = {.fd = cg->events_fd, .events = POLLPRI};
		poll(&pfd, 1, left < 50 ? (int)left : 50);
	}
}

void jig_cg_stats(const struct jig_cg *cg, struct jig_scope_result *out)
{
	char buf[1024];
	if (read_at(cg->leaf, "memory.events", buf, sizeof(buf)) > 0)
		out->oom_kills = keyed(buf, "oom_kill");
	if (read_at(cg->leaf, "pids.events", buf, sizeof(buf)) > 0)
		out->pids_max_hits = keyed(buf, "max");
	if (read_at(cg->leaf, "memory.peak", buf, sizeof(buf)) > 0)
		out->memory_peak_bytes = strtoull(buf, NULL, 10);
	if (read_at(cg->leaf, "cpu.stat", buf, sizeof(buf)) > 0) {
		out->cpu_usec = keyed(buf, "usage_usec");
		out->cpu_throttled_usec = keyed(buf, "throttled_usec");
	}
	snprintf(out->cgroup, sizeof(out->cgroup), "%s", cg->leaf);
}

int jig_cg_remove(struct jig_cg *cg, char *err, size_t errlen)
{
	int r = 0;
	if (cg->events_fd >= 0)
		close(cg->events_fd);
	if (cg->leaf_fd >= 0)
		close(cg->leaf_fd);
	cg->events_fd = cg->leaf_fd = -1;
	/* rmdir can race the last exit's bookkeeping (EBUSY); retry briefly. */
	const char *dirs[2] = {cg->leaf, cg->root};
	for (int i = 0; i < 2; i++) {
		if (!dirs[i][0])
			continue;
		int tries = 0;
		while (rmdir(dirs[i]) < 0 && errno != ENOENT) {
			if (errno != EBUSY || ++tries > 100) {
				fail(err, errlen, "%s: cannot remove the cgroup: %s", dirs[i], strerror(errno));
				r = -1;
				break;
			}
			usleep(1000);
		}
	}
	return r;
}

/* Kills, drains and removes dir and the leaves below it. */
static int fence_tree(const char *dir, char *err, size_t errlen)
{
	int r = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		struct jig_cg cg;
		memset(&cg, 0, sizeof(cg));
		snprintf(cg.leaf, sizeof(cg.leaf), "%s/%s", dir, de->d_name);
		char ev[PATH_MAX + 32];
		snprintf(ev, sizeof(ev), "%s/cgroup.events", cg.leaf);
		cg.events_fd = open(ev, O_RDONLY | O_CLOEXEC);
		cg.leaf_fd = -1;
		if (cg.events_fd < 0 || jig_cg_fence(&cg, 5000) < 0) {
			fail(err, errlen, "%s: could not confirm it is empty after cgroup.kill", cg.leaf);
			r = -1;
		}
		if (jig_cg_remove(&cg, err, errlen) < 0)
			r = -1;
	}
	if (d)
		closedir(d);
	if (rmdir(dir) < 0 && errno != ENOENT) {
		fail(err, errlen, "%s: cannot remove: %s", dir, strerror(errno));
		r = -1;
	}
	return r;
}

/* Calls fn for every run cgroup of coordinator pid (jig-<pid>-*) in self
 * and in its parent: where jig_cg_create puts them (find_delegated). */
static int each_run_root(const char *self, int pid, int (*fn)(const char *root, void *ctx), void *ctx)
{
	char dirs[2][PATH_MAX];
	snprintf(dirs[0], sizeof(dirs[0]), "%s", self);
	cg_parent(dirs[0], dirs[1], sizeof(dirs[1]));
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "jig-%d-", pid);
	int r = 0;
	for (int i = 0; i < 2; i++) {
		DIR *d = dirs[i][0] ? opendir(dirs[i]) : NULL;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
				continue;
			char root[PATH_MAX + 300];
			snprintf(root, sizeof(root), "%s/%s", dirs[i], de->d_name);
			if (fn(root, ctx) < 0)
				r = -1;
		}
		if (d)
			closedir(d);
	}
	return r;
}

struct sweep_ctx {
	char *removed, *err;
	size_t removed_len, errlen;
};

static int recover_root(const char *root, void *ctx)
{
	struct sweep_ctx *c = ctx;
	return fence_tree(root, c->err, c->errlen);
}

int jig_cg_recover(int pid, char *err, size_t errlen)
{
	char self[PATH_MAX];
	if (jig_cg_self(self, sizeof(self)) < 0)
		return 0; /* no cgroup v2: nothing can have been created */
	struct sweep_ctx c = {.err = err, .errlen = errlen};
	return each_run_root(self, pid, recover_root, &c);
}

/* Removes dir and the cgroups below it, deepest first, if it is the
 * caller's and holds no process; never kills. */
static int sweep_tree(const char *dir, int depth, struct sweep_ctx *c)
{
	struct stat st;
	char ev[256];
	if (depth > 16) {
		fail(c->err, c->errlen, "cgroup %s: nested deeper than 16 cgroups", dir);
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0; /* removed meanwhile (another sweep) */
		fail(c->err, c->errlen, "cgroup %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		fail(c->err, c->errlen, "cgroup %s: not a cgroup of the caller's", dir);
		return -1;
	}
	if (read_at(dir, "cgroup.events", ev, sizeof(ev)) <= 0 || !strstr(ev, "populated ")) {
		fail(c->err, c->errlen, "cgroup %s: cannot read its cgroup.events", dir);
		return -1;
	}
	if (strstr(ev, "populated 1")) {
		fail(c->err, c->errlen, "cgroup %s: it is not empty (a process is still in it)", dir);
		return -1;
	}
	int r = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX + 300];
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (sweep_tree(sub, depth + 1, c) < 0)
			r = -1;
	}
	if (d)
		closedir(d);
	if (r < 0)
		return r;
	int tries = 0;
	while (rmdir(dir) < 0 && errno != ENOENT) {
		if (errno != EBUSY || ++tries > 100) {
			fail(c->err, c->errlen, "cgroup %s: cannot remove it: %s", dir, strerror(errno));
			return -1;
		}
		usleep(1000);
	}
	size_t used = strlen(c->removed);
	if (used < c->removed_len)
		snprintf(c->removed + used, c->removed_len - used, "%s\n", dir);
	return 0;
}

static int sweep_root(const char *root, void *ctx)
{
	return sweep_tree(root, 0, ctx);
}

int jig_cg_sweep(int pid, const char *where, char *removed, size_t removed_len, char *err, size_t errlen)
{
	char self[PATH_MAX];
	if (removed_len)
		removed[0] = '\0';
	if (where && (where[0] != '/' || strstr(where, "/..") || strlen(where) >= sizeof(self) - sizeof(CG_MOUNT))) {
		fail(err, errlen, "the recorded cgroup \"%.200s\" is not a cgroup path", where);
		return -1;
	}
	if (where)
		snprintf(self, sizeof(self), CG_MOUNT "%s", strcmp(where, "/") == 0 ? "" : where);
	else if (jig_cg_self(self, sizeof(self)) < 0)
		return 0; /* no cgroup v2: nothing can have been created */
	struct sweep_ctx c = {.removed = removed, .removed_len = removed_len, .err = err, .errlen = errlen};
	return each_run_root(self, pid, sweep_root, &c);
}
