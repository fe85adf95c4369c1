#include "proc/lease.h"

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
