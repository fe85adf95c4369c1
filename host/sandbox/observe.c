/* What the host reads of its scopes while they run (sandbox/observe.h):
 * the Linux backend makes, for each launch of this process, a cgroup
 * jig-<pid>-<n>-<t> beneath the delegated cgroup (ours, or our parent once
 * we were moved aside into jig-supervisor), with one leaf per scope. */
#include "sandbox/observe.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CG_MOUNT "/sys/fs/cgroup"

/* A small cgroup file's first line (kernel text), or "" . */
static void cg_read(int dir, const char *name, char *buf, size_t cap)
{
	buf[0] = '\0';
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* A number of a cgroup file, or null ("max" and anything else). */
static json_t *cg_num(int dir, const char *name, const char *key)
{
	char buf[512];
	cg_read(dir, name, buf, sizeof(buf));
	if (key) { /* cpu.stat: its first line is "usage_usec N" */
		size_t k = strlen(key);
		if (strncmp(buf, key, k) != 0 || buf[k] != ' ')
			return json_null();
		memmove(buf, buf + k + 1, strlen(buf + k + 1) + 1);
	}
	char *end;
	unsigned long long v = strtoull(buf, &end, 10);
	return end != buf && *end == '\0' ? json_integer((json_int_t)v) : json_null();
}

static json_t *scope_now(int leaf, const char *name, long long left)
{
	char cpu_max[64];
	cg_read(leaf, "cpu.max", cpu_max, sizeof(cpu_max));
	json_t *s = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:s}", "name", name, "state", "running", "memory_bytes",
			      cg_num(leaf, "memory.current", NULL), "memory_max_bytes", cg_num(leaf, "memory.max", NULL),
			      "tasks", cg_num(leaf, "pids.current", NULL), "tasks_max", cg_num(leaf, "pids.max", NULL),
			      "cpu_usec", cg_num(leaf, "cpu.stat", "usage_usec"), "cpu_max", cpu_max);
	if (s && left >= 0)
		json_object_set_new(s, "deadline_left_ms", json_integer(left));
	return s;
}

/* The scope leaves beneath every jig-<pid>-* directory of dir. */
static void observe_in(const char *dir, const char *prefix, size_t max, long long left, json_t *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) && json_array_size(out) < max) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		int root = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *rd = root >= 0 ? fdopendir(root) : NULL;
		struct dirent *le;
		while (rd && (le = readdir(rd)) && json_array_size(out) < max) {
			if (le->d_type != DT_DIR || le->d_name[0] == '.')
				continue;
			int leaf = openat(dirfd(rd), le->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			json_t *s = leaf >= 0 ? scope_now(leaf, le->d_name, left) : NULL;
			if (s)
				json_array_append_new(out, s);
			if (leaf >= 0)
				close(leaf);
		}
		if (rd)
			closedir(rd);
		else if (root >= 0)
			close(root);
	}
	if (d)
		closedir(d);
}

/* The scopes of this process now: the sandbox makes them beneath the
 * delegated cgroup, which is ours or our parent (as its recovery looks
 * for them). At most max. */
json_t *jig_sandbox_observe(size_t max, long long left)
{
	json_t *out = json_array();
	char rel[1100] = "", line[1100], dir[1200];
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(rel, sizeof(rel), "%s", line + 3);
		}
	if (f)
		fclose(f);
	if (!out || rel[0] != '/' || strstr(rel, "/.."))
		return out;
	snprintf(dir, sizeof(dir), CG_MOUNT "%s", strcmp(rel, "/") == 0 ? "" : rel);
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "jig-%d-", (int)getpid());
	observe_in(dir, prefix, max, left, out);
	char *base = strrchr(dir, '/');
	if (base && base > dir + strlen(CG_MOUNT)) {
		*base = '\0';
		observe_in(dir, prefix, max, left, out);
	}
	return out;
}
