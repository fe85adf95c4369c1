/* The abandoned-session sweep (jig_session_rt_sweep, session/runtime.h).
 * Every check must agree that no owner lives before a directory goes;
 * everything else keeps it and says why in one line. */
#include "session/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "proc/lease.h"
#include "state/state.h"
#include "util/note.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

/* The cgroup v2 hierarchy the recorded cgroup is looked up in. */
#define CGROUP2_ROOT "/sys/fs/cgroup"

static void kept(const char *dir, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kept(const char *dir, const char *name, const char *fmt, ...)
{
	char why[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	jig_note("kept the session directory %s/%s: %s; remove it by hand once its owner is gone", dir, name, why);
}

/* <32 hex> or <32 hex>.new (a session being made) */
static bool session_name(const char *n)
{
	size_t i = 0;
	while (i < 32 && ((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
		i++;
	return i == 32 && (n[32] == '\0' || strcmp(n + 32, ".new") == 0);
}

/* The recorded cgroup: 0 absent or "populated 0", 1 populated, -1 cannot tell. */
static int cgroup_state(const char *cg)
{
	char path[PATH_MAX], buf[512];
	if (snprintf(path, sizeof(path), CGROUP2_ROOT "%s", cg) >= (int)sizeof(path))
		return -1;
	jig_autoclose int fd = jig_open_dir_nofollow(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	jig_autoclose int ev = openat(fd, "cgroup.events", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = ev >= 0 ? read(ev, buf, sizeof(buf) - 1) : -1;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, "populated ", 10) == 0)
			return l[10] == '0' && (l[11] == '\n' || l[11] == '\0') ? 0 : l[10] == '1' ? 1 : -1;
	return -1;
}

/* NULL when the facts of the (taken) lease prove no owner lives; else why not. */
static const char *still_owned(json_t *doc, char *why, size_t cap)
{
	char boot[64];
	json_t *pid = json_object_get(doc, "pid"), *start = json_object_get(doc, "start"), *cg = json_object_get(doc, "cgroup");
	const char *rec = json_string_value(json_object_get(doc, "boot_id"));
	if (strcmp(json_string_value(json_object_get(doc, "format")) ?: "", JIG_SESSION_LEASE_FORMAT) != 0 || !rec ||
	    !json_is_integer(pid) || !json_is_integer(start) || json_integer_value(pid) <= 0 || !(json_is_null(cg) || (json_is_string(cg) && jig_session_cgroup_path_ok(json_string_value(cg)))))
		return snprintf(why, cap, "its lease is not a whole %s document", JIG_SESSION_LEASE_FORMAT), why;
	if (json_integer_value(json_object_get(doc, "uid")) != (json_int_t)geteuid())
		return snprintf(why, cap, "its lease names another uid"), why;
	if (jig_boot_id(boot, sizeof(boot)) < 0)
		return snprintf(why, cap, "cannot read this boot's id: %s", strerror(errno)), why;
	if (strcmp(boot, rec) == 0) {
		enum jig_proc_life l = jig_proc_life((pid_t)json_integer_value(pid), (unsigned long long)json_integer_value(start));
		if (l == JIG_PROC_ALIVE)
			return snprintf(why, cap, "its lease is free, but its owner (pid %lld) still runs", (long long)json_integer_value(pid)), why;
		if (l == JIG_PROC_UNKNOWN)
			return snprintf(why, cap, "cannot check its owner (pid %lld) in /proc", (long long)json_integer_value(pid)), why;
	}
	int c = json_is_string(cg) ? cgroup_state(json_string_value(cg)) : 0;
	if (c != 0)
		return snprintf(why, cap, c > 0 ? "its cgroup still has processes (populated 1)" : "cannot read its cgroup's cgroup.events"), why;
	return NULL;
}

/* Decides on the lease's bytes (taken): true when the directory may go. */
static bool abandoned(const char *buf, size_t len, const char *dir, const char *name)
{
	char why[400];
	struct jig_error e = {0};
	json_t *doc = NULL;
	if (len == 0)
		return kept(dir, name, "its lease is empty"), false;
	if (jig_json_parse_object(buf, len, "its lease", &doc, &e) < 0)
		return kept(dir, name, "its lease cannot be read as JSON"), false;
	const char *no = still_owned(doc, why, sizeof(why));
	json_decref(doc);
	if (no)
		kept(dir, name, "%s", no);
	return !no;
}

/* One session directory: 1 removed, 0 kept (or gone meanwhile). */
static int sweep_one(int sfd, const char *dir, const char *name)
{
	struct stat st, dst;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & ~JIG_RUN_DIR_ENDING & 07777) != 0700)
		return kept(dir, name, "not a directory of the caller's with mode 0700"), 0;
	jig_autoclose int dfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0 || dst.st_ino != st.st_ino || dst.st_dev != st.st_dev)
		return 0; /* gone or replaced meanwhile */
	/* The lease through the store (decision 232): the caller's, 0600, one
	 * link, no link followed, taken (its lock free) and bounded; anything
	 * else is not acted on. */
	jig_autoclose int lfd = -1;
	jig_autofree char *buf = NULL;
	size_t len = 0;
	struct jig_error le = {0};
	int t = jig_state_lease_take(dfd, JIG_LEASE_FILE, JIG_LEASE_MAX_BYTES, "its lease", &lfd, &buf, &len, &le);
	if (t == -JIG_E_USAGE) {
		/* Removed a moment ago by its owner (the lease goes just before the directory)? */
		nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
		if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		/* Decision 188: marked and empty, its owner was killed as it
		 * removed it (lease gone, rmdir not yet): removed here. */
		if ((dst.st_mode & JIG_RUN_DIR_ENDING) && st.st_ino == dst.st_ino && st.st_dev == dst.st_dev &&
		    unlinkat(sfd, name, AT_REMOVEDIR) == 0) {
			jig_note("removed the empty session directory %s/%s: its owner was killed as it removed it", dir, name);
			return 1;
		}
		return kept(dir, name, "it has no lease"), 0;
	}
	if (t < 0)
		return kept(dir, name, "%s", le.msg), 0;
	if (t == 0 || !abandoned(buf, len, dir, name))
		return 0; /* held (a live session), removed meanwhile, or kept */
	jig_lease_remove_dir_at(sfd, name);
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return kept(dir, name, "it could not be removed entirely (a mount inside it?)"), 0;
	jig_note("removed the abandoned session directory %s/%s (its lease is free and its owner and cgroup are gone)", dir, name);
	return 1;
}

int jig_session_rt_sweep(struct jig_error *e)
{
	char dir[4096];
	int sfd = jig_runtime_jig_dir("sessions", dir, sizeof(dir), e);
	if (sfd < 0)
		return sfd;
	size_t n;
	jig_name *names = jig_dir_names(sfd, session_name, 4096, &n);
	int removed = 0;
	for (size_t i = 0; i < n; i++)
		removed += sweep_one(sfd, dir, names[i]);
	free(names);
	close(sfd);
	return removed;
}
