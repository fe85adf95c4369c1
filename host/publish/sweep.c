#include "publish/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "publish/run_lease.h"
#include "publish/publish.h"
#include "sandbox/door.h"
#include "snapshot/snapshot.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

struct sweeper {
	const struct jig_sweep *sw;
	int basefd;
	int removed;
	/* The sandbox door, opened for the first Run that needs it. */
	bool door_tried, have_door;
	struct jig_snapshot s;
	struct jig_sandbox sb;
	char door_err[600];
};

static void say(struct sweeper *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct sweeper *w, const char *fmt, ...)
{
	char line[1400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (w->sw->say)
		w->sw->say(w->sw->ctx, line);
}

#define KEPT "kept the abandoned Run %s/%s: "
#define BY_HAND "; remove it by hand once its owner is gone (docs/reliability.md, \"Leftovers\")"

static int door_cgroups(struct sweeper *w, pid_t pid, const char *where, char *removed, size_t rlen, char *err,
			size_t elen)
{
	if (!w->door_tried) {
		char libdir[PATH_MAX];
		struct jig_error e = {0};
		w->door_tried = true;
		if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) == 0 && jig_snapshot_open_installed(&w->s, libdir, &e) == 0) {
			if (jig_sandbox_open(&w->sb, &w->s, &e) == 0)
				w->have_door = true;
			else
				jig_snapshot_close(&w->s);
		}
		if (!w->have_door)
			snprintf(w->door_err, sizeof(w->door_err), "cannot load the sandbox module to check its cgroups: %.500s", e.msg);
	}
	if (!w->have_door) {
		snprintf(err, elen, "%s", w->door_err);
		return -1;
	}
	return jig_sandbox_sweep(&w->sb, pid, where, removed, rlen, err, elen) == JIG_MOD_OK ? 0 : -1;
}

/* The lease's text (from its start), or NULL. */
static json_t *read_lease(int fd, size_t *len, char *why, size_t cap)
{
	jig_autofree char *buf = NULL;
	struct stat st;
	struct jig_error e = {0};
	json_t *doc = NULL;
	*len = 0;
	if (lseek(fd, 0, SEEK_SET) < 0 || jig_read_fd(fd, JIG_LEASE_MAX_BYTES, "its lease", &buf, len, &st, &e) < 0 ||
	    (*len && jig_json_parse_object(buf, *len, "its lease", &doc, &e) < 0)) {
		snprintf(why, cap, "%.400s", e.msg[0] ? e.msg : strerror(errno));
		return NULL;
	}
	if (doc && strcmp(json_string_value(json_object_get(doc, "format")) ?: "", JIG_LEASE_FORMAT) != 0) {
		snprintf(why, cap, "its lease is not a %s document", JIG_LEASE_FORMAT);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

enum life { GONE = JIG_PROC_GONE, REUSED = JIG_PROC_REUSED, ALIVE = JIG_PROC_ALIVE, UNKNOWN = JIG_PROC_UNKNOWN };

/* Is the process {pid, start} of the lease still running? */
static enum life life(json_t *proc, int *pid)
{
	json_t *p = json_object_get(proc, "pid"), *s = json_object_get(proc, "start");
	*pid = (int)json_integer_value(p);
	if (!json_is_integer(p) || !json_is_integer(s))
		return UNKNOWN;
	return (enum life)jig_proc_life(*pid, (unsigned long long)json_integer_value(s));
}

/* Does the held lease name an owner that still runs (a live Run)? */
static bool owner_alive(json_t *doc)
{
	char boot[64];
	int pid;
	if (!doc || jig_boot_id(boot, sizeof(boot)) < 0)
		return true; /* cannot tell: a live Run being set up, say */
	if (strcmp(boot, json_string_value(json_object_get(doc, "boot_id")) ?: "") != 0)
		return false;
	enum life o = life(json_object_get(doc, "outer"), &pid), c = life(json_object_get(doc, "coordinator"), &pid);
	return o == ALIVE || c == ALIVE || o == UNKNOWN || c == UNKNOWN;
}

/* The recorded stage of the Run in run_dir: 1 removed, 0 none there, -1
 * kept (why). */
static int remove_stage(json_t *stage, const char *run_dir, char *why, size_t cap)
{
	const char *path = json_string_value(json_object_get(stage, "path"));
	if (json_is_null(stage) || !stage)
		return 0;
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *name = slash ? slash + 1 : "";
	char parent[PATH_MAX], ours[NAME_MAX + 1];
	jig_publish_stage_name(ours, sizeof(ours), run_dir, ""); /* ".jig-stage-XXXXXX-" */
	if (!slash || strncmp(name, ours, strlen(ours)) != 0 || strchr(name, '/') ||
	    snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path) >= (int)sizeof(parent))
		return snprintf(why, cap, "its lease names no stage jig makes"), -1;
	if (!parent[0])
		strcpy(parent, "/");
	jig_autoclose int pfd = jig_open_dir_nofollow(parent);
	struct stat st;
	if (pfd < 0)
		return errno == ENOENT ? 0 : (snprintf(why, cap, "the stage's directory %.300s: %s", parent, strerror(errno)), -1);
	if (fstat(pfd, &st) < 0 || (json_int_t)st.st_dev != json_integer_value(json_object_get(stage, "dev")) ||
	    (json_int_t)st.st_ino != json_integer_value(json_object_get(stage, "ino")))
		return snprintf(why, cap, "%.300s is no longer the directory the stage was made in", parent), -1;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (snprintf(why, cap, "its stage %.300s: %s", path, strerror(errno)), -1);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return snprintf(why, cap, "%.300s is not a stage directory of the caller's", path), -1;
	jig_remove_tree(pfd, name);
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return snprintf(why, cap, "its stage %.300s could not be removed entirely", path), -1;
	return 1;
}

/* Removes the run directory name, its lease last (as a Run does: a
 * concurrent sweep never sees it without one); true when it is gone. */
static bool remove_run_dir(struct sweeper *w, const char *name)
{
	struct stat st;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", w->sw->base, name);
	jig_lease_remove_run_dir(path);
	return fstatat(w->basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Only the lease in it, empty and free: the lease was locked before it
 * got its name, so every process of the Run is gone, and the coordinator
 * died before it wrote the lease (it does that first): nothing else of
 * the Run can exist. */
static bool only_lease(int dfd)
{
	int fd = dup(dfd), n = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, JIG_LEASE_FILE))
			n++;
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	return d && n == 0;
}

/* Takes the lease: 1 taken, 0 a live Run (or removed meanwhile), -1 kept. */
static int take(struct sweeper *w, int lfd, char *why, size_t cap)
{
	int waited = 0, limit = w->sw->wait_ms > 0 ? w->sw->wait_ms : 2000;
	for (;;) {
		if (flock(lfd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK)
			return snprintf(why, cap, "cannot lock its lease: %s", strerror(errno)), -1;
		size_t len;
		char ignored[8];
		json_t *doc = read_lease(lfd, &len, ignored, sizeof(ignored));
		bool live = doc && owner_alive(doc);
		json_decref(doc);
		if (live)
			return 0; /* a live Run: never touched */
		if (waited >= limit)
			return snprintf(why, cap, "its lease is held by a live process, but %s",
					doc ? "the owners it names are gone" : len ? "it cannot be read" : "it is empty"), -1;
		nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
		waited += 50;
	}
	struct stat st;
	return fstat(lfd, &st) == 0 && st.st_nlink == 0 ? 0 : 1; /* 0: another sweep removed it */
}

/* true when the Run's owners are gone (gone says how, *other_boot and
 * *pid_in_use what is known of the coordinator's pid); false with why. */
static bool abandoned(json_t *doc, char *gone, size_t gcap, bool *other_boot, bool *pid_in_use, char *why, size_t cap)
{
	char boot[64];
	int opid, cpid;
	if (json_integer_value(json_object_get(doc, "uid")) != (json_int_t)geteuid())
		return snprintf(why, cap, "its lease was written by uid %lld", (long long)json_integer_value(json_object_get(doc, "uid"))), false;
	if (jig_boot_id(boot, sizeof(boot)) < 0)
		return snprintf(why, cap, "cannot read this boot's id: %s", strerror(errno)), false;
	*other_boot = strcmp(boot, json_string_value(json_object_get(doc, "boot_id")) ?: "") != 0;
	enum life o = life(json_object_get(doc, "outer"), &opid), c = life(json_object_get(doc, "coordinator"), &cpid);
	if (*other_boot)
		return snprintf(gone, gcap, "it was left before the last boot"), true;
	if (o == UNKNOWN || c == UNKNOWN)
		return snprintf(why, cap, "cannot check its outer command (pid %d) and coordinator (pid %d) in /proc", opid, cpid), false;
	if (o == ALIVE || c == ALIVE)
		return snprintf(why, cap, "its lease is free, but its %s (pid %d) still runs", o == ALIVE ? "outer command" : "coordinator",
				o == ALIVE ? opid : cpid), false;
	*pid_in_use = c == REUSED;
	return snprintf(gone, gcap, "its outer command (pid %d) and coordinator (pid %d) are gone", opid, cpid), true;
}

/* The cgroups of an abandoned Run: true when none is left. */
static bool cgroups(struct sweeper *w, json_t *doc, const char *name, char *why, size_t cap)
{
	char removed[4096] = "", err[700] = "";
	pid_t pid = (pid_t)json_integer_value(json_object_get(json_object_get(doc, "coordinator"), "pid"));
	const char *where = json_string_value(json_object_get(doc, "cgroup"));
	int r = w->sw->cgroups ? w->sw->cgroups(w->sw->ctx, pid, where, removed, sizeof(removed), err, sizeof(err))
			       : door_cgroups(w, pid, where, removed, sizeof(removed), err, sizeof(err));
	char *save = NULL;
	for (char *l = strtok_r(removed, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		say(w, "removed a cgroup of the abandoned Run %s/%s: %s", w->sw->base, name, l);
	if (r < 0)
		snprintf(why, cap, "%.600s", err[0] ? err : "its cgroups could not be removed");
	return r == 0;
}

/* long: one Run's checks in order, each keeping everything on failure */
static void sweep_run(struct sweeper *w, const char *name)
{
	char why[800] = "", gone[200] = "";
	struct stat st, dst;
	if (fstatat(w->basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return; /* not the caller's: never considered */
	jig_autoclose int dfd = openat(w->basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0 || dst.st_ino != st.st_ino || dst.st_dev != st.st_dev)
		return; /* gone meanwhile, or not the caller's */
	jig_autoclose int lfd = openat(dfd, JIG_LEASE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0 && errno == ENOENT) {
		/* A Run makes its lease just after its directory and removes it
		 * just before it: look again a moment later. */
		nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
		if (fstatat(w->basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || faccessat(dfd, JIG_LEASE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return;
		/* Decision 188: marked and empty, a Run killed between its lease's
		 * unlink and its rmdir (a new Run's mkdtemp is 0700). */
		if (fstat(dfd, &dst) == 0 && (dst.st_mode & JIG_RUN_DIR_ENDING) && st.st_ino == dst.st_ino && st.st_dev == dst.st_dev &&
		    unlinkat(w->basefd, name, AT_REMOVEDIR) == 0) {
			w->removed++;
			say(w, "removed the empty run directory %s/%s: its Run was killed as it removed it", w->sw->base, name);
			return;
		}
		say(w, KEPT "it has no lease (left by a jig without one, or by one killed as it made the directory)" BY_HAND, w->sw->base, name);
		return;
	}
	if (lfd < 0) {
		say(w, KEPT "its lease: %s" BY_HAND, w->sw->base, name, strerror(errno));
		return;
	}
	if (fstat(lfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		say(w, KEPT "its lease is not a file of the caller's" BY_HAND, w->sw->base, name);
		return;
	}
	int t = take(w, lfd, why, sizeof(why));
	if (t <= 0) {
		if (t < 0)
			say(w, KEPT "%s" BY_HAND, w->sw->base, name, why);
		return;
	}
	size_t len;
	json_t *doc = read_lease(lfd, &len, why, sizeof(why));
	bool other_boot = false, pid_in_use = false;
	if (!doc && len == 0 && !why[0] && only_lease(dfd)) {
		if (remove_run_dir(w, name)) {
			w->removed++;
			say(w, "removed the run directory %s/%s: its Run ended before it started (its lease is empty)", w->sw->base, name);
		} else
			say(w, KEPT "its run directory could not be removed entirely" BY_HAND, w->sw->base, name);
		return;
	}
	if (!doc)
		say(w, KEPT "%s" BY_HAND, w->sw->base, name, why[0] ? why : "its lease is empty");
	else if (!abandoned(doc, gone, sizeof(gone), &other_boot, &pid_in_use, why, sizeof(why)))
		say(w, KEPT "%s" BY_HAND, w->sw->base, name, why);
	else if (!other_boot && pid_in_use)
		say(w, KEPT "%s, but pid %lld is in use again, so the cgroups named after it cannot be told from the new process's; the next jig run tries again",
		    w->sw->base, name, gone, (long long)json_integer_value(json_object_get(json_object_get(doc, "coordinator"), "pid")));
	else if (!other_boot && !cgroups(w, doc, name, why, sizeof(why)))
		say(w, KEPT "%s" BY_HAND, w->sw->base, name, why);
	else {
		int s = remove_stage(json_object_get(doc, "stage"), name, why, sizeof(why));
		if (s < 0)
			say(w, KEPT "%s" BY_HAND, w->sw->base, name, why);
		else {
			if (s > 0)
				say(w, "removed the publication stage of the abandoned Run %s/%s: %s", w->sw->base, name,
				    json_string_value(json_object_get(json_object_get(doc, "stage"), "path")));
			if (remove_run_dir(w, name)) {
				w->removed++;
				say(w, "removed the run directory of an abandoned Run: %s/%s (%s)", w->sw->base, name, gone);
			} else
				say(w, KEPT "its run directory could not be removed entirely" BY_HAND, w->sw->base, name);
		}
	}
	json_decref(doc);
}

static bool run_dir_name(const char *name)
{
	return strncmp(name, JIG_RUN_DIR_PREFIX, strlen(JIG_RUN_DIR_PREFIX)) == 0;
}

int jig_sweep(const struct jig_sweep *sw)
{
	struct sweeper w = {.sw = sw};
	w.basefd = open(sw->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n;
	jig_name *names = jig_dir_names(w.basefd, run_dir_name, 4096, &n);
	for (size_t i = 0; i < n; i++)
		sweep_run(&w, names[i]);
	free(names);
	if (w.have_door) {
		jig_sandbox_close(&w.sb);
		jig_snapshot_close(&w.s);
	}
	if (w.basefd >= 0)
		close(w.basefd);
	return w.removed;
}
