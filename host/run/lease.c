#include "run/lease.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/publish.h"
#include "util/fault.h"
#include "util/fileio.h"

int jig_proc_start(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : -2;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int saved = errno;
	close(fd);
	if (n < 0)
		return errno = saved, saved == ESRCH ? -1 : -2;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": the comm may hold anything but the last
	 * ')' ends it; starttime is the 20th field after it. */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return errno = EINVAL, -2;
	char *end;
	errno = 0;
	*start = strtoull(p + 1, &end, 10);
	return end == p + 1 || errno ? (errno = EINVAL, -2) : 0;
}

enum jig_proc_life jig_proc_life(pid_t pid, unsigned long long start)
{
	unsigned long long now;
	if (pid <= 0)
		return JIG_PROC_UNKNOWN;
	int r = jig_proc_start(pid, &now);
	return r == -1 ? JIG_PROC_GONE : r < 0 ? JIG_PROC_UNKNOWN : now == start ? JIG_PROC_ALIVE : JIG_PROC_REUSED;
}

int jig_boot_id(char *out, size_t cap)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return out[0] ? 0 : -1;
}

/* This process's cgroup v2 path ("0::" of /proc/self/cgroup), or NULL. */
static json_t *own_cgroup(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 8];
	json_t *v = NULL;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::/", 4) == 0) {
			line[strcspn(line, "\n")] = '\0';
			json_decref(v);
			v = json_string(line + 3);
		}
	if (f)
		fclose(f);
	return v ? v : json_null();
}

/* The stage's absolute path and its directory's identity, or null. */
static json_t *stage_facts(const char *output, const char *run_dir)
{
	char buf[PATH_MAX], parent[PATH_MAX], stage[NAME_MAX + 1], full[PATH_MAX + NAME_MAX + 2];
	if (!output || snprintf(buf, sizeof(buf), "%s", output) >= (int)sizeof(buf))
		return json_null();
	char *slash = strrchr(buf, '/');
	const char *name = slash ? slash + 1 : buf;
	if (slash)
		*slash = '\0';
	struct stat st;
	if (!realpath(slash ? (slash == buf ? "/" : buf) : ".", parent) || stat(parent, &st) < 0)
		return json_null();
	jig_publish_stage_name(stage, sizeof(stage), run_dir, name);
	snprintf(full, sizeof(full), "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, stage);
	return json_pack("{s:s,s:I,s:I}", "path", full, "dev", (json_int_t)st.st_dev, "ino", (json_int_t)st.st_ino);
}

int jig_lease_create(struct jig_lease *l, const char *run_dir, const char *output, struct jig_error *e)
{
	char boot[64], path[PATH_MAX];
	l->doc = NULL;
	snprintf(path, sizeof(path), "%s/" JIG_LEASE_FILE, run_dir);
	/* Locked before it has its name (a rename keeps the inode and so the
	 * lock): a sweep never finds this Run's lease free while it lives. */
	int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	l->fd = dfd < 0 ? -1 : openat(dfd, JIG_LEASE_FILE ".new", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int bad = l->fd < 0 || flock(l->fd, LOCK_EX) < 0 || renameat(dfd, JIG_LEASE_FILE ".new", dfd, JIG_LEASE_FILE) < 0;
	int err = errno;
	if (dfd >= 0)
		close(dfd);
	if (bad)
		return jig_err(e, JIG_E_INTERNAL, "%s: cannot create and lock the Run's lease: %s", path, strerror(err));
	if (jig_boot_id(boot, sizeof(boot)) < 0)
		return jig_err(e, JIG_E_HOST, "/proc/sys/kernel/random/boot_id: cannot read it (the Run's lease needs it): %s",
			       strerror(errno));
	l->doc = json_pack("{s:s,s:s,s:I,s:s,s:o,s:o}", "format", JIG_LEASE_FORMAT, "boot_id", boot, "uid",
			   (json_int_t)geteuid(), "run_dir", run_dir, "cgroup", own_cgroup(), "stage",
			   stage_facts(output, run_dir));
	return l->doc ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

static json_t *process(pid_t pid)
{
	unsigned long long start = 0;
	if (jig_proc_start(pid, &start) < 0)
		return NULL;
	return json_pack("{s:i,s:I}", "pid", (int)pid, "start", (json_int_t)start);
}

int jig_lease_write(struct jig_lease *l, pid_t outer)
{
	json_t *me = process(getpid()), *parent = process(outer);
	if (!me || !parent || json_object_set_new(l->doc, "coordinator", me) < 0 ||
	    json_object_set_new(l->doc, "outer", parent) < 0)
		return errno = errno ? errno : ENOMEM, -1;
	char *txt = json_dumps(l->doc, JSON_COMPACT | JSON_SORT_KEYS);
	size_t len = txt ? strlen(txt) : 0;
	ssize_t w = txt && len <= JIG_LEASE_MAX_BYTES ? pwrite(l->fd, txt, len, 0) : -1;
	free(txt);
	if (w != (ssize_t)len)
		return errno = errno ? errno : EIO, -1;
	return 0;
}

void jig_lease_close(struct jig_lease *l)
{
	if (l->fd >= 0)
		close(l->fd);
	json_decref(l->doc);
	l->fd = -1;
	l->doc = NULL;
}

void jig_lease_remove_dir_at(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(dup(fd)) : NULL;
	struct dirent *de;
	if (fd >= 0)
		fchmod(fd, 0700 | JIG_RUN_DIR_ENDING); /* the end mark: before the lease goes */
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, JIG_LEASE_FILE) &&
		    unlinkat(fd, de->d_name, 0) < 0) /* a file; else a directory */
			jig_remove_tree(fd, de->d_name);
	if (d)
		closedir(d);
	if (fd >= 0) {
		unlinkat(fd, JIG_LEASE_FILE, 0);
		close(fd);
		JIG_FAULT_POINT("run dir end"); /* the lease gone, the (marked) directory not yet */
	}
	jig_remove_tree(parent, name); /* what is left, then the directory */
}

void jig_lease_remove_run_dir(const char *run_dir)
{
	jig_lease_remove_dir_at(AT_FDCWD, run_dir);
}
