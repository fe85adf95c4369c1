#include "publish/run_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "publish/publish.h"

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

