#include "session/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "proc/lease.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"

/* Opens the next component c beneath cur (closed) with no-follow; on
 * failure says which component of path broke which rule. */
static int step(int cur, const char *c, const char *path, struct jig_error *e)
{
	int fd = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = errno;
	struct stat st;
	bool link = fd < 0 && fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
	close(cur);
	if (fd >= 0)
		return fd;
	if (link)
		return jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR %s: its component \"%s\" is a symbolic link (no symlink may be on the path)", path, c);
	return jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR %s: its component \"%s\": %s", path, c, strerror(err));
}

/* The checked directory's descriptor, its path in out. */
static int runtime_fd(char *out, size_t n, struct jig_error *e)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	char want[64];
	snprintf(want, sizeof(want), "/run/user/%u", (unsigned)geteuid());
	if (!x || !*x)
		return jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR is not set: jig session needs it to be %s (the caller's login runtime directory)", want);
	if (strcmp(x, want) != 0)
		return jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR is not %s (the caller's uid's runtime directory), refusing it", want);
	if (snprintf(out, n, "%s", want) >= (int)n)
		return jig_err(e, JIG_E_INTERNAL, "XDG_RUNTIME_DIR: the buffer is too small");
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "/: %s", strerror(errno));
	const char *comps[] = {"run", "user", want + strlen("/run/user/")};
	for (size_t i = 0; i < 3; i++)
		if ((fd = step(fd, comps[i], want, e)) < 0)
			return fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return close(fd), jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR %s: %s", want, strerror(errno));
	if (st.st_uid != geteuid())
		return close(fd), jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR %s is owned by uid %u, not by the caller (uid %u)", want,
					  (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & 07777) != 0700)
		return close(fd), jig_err(e, JIG_E_HOST, "XDG_RUNTIME_DIR %s has mode %04o, not 0700", want, (unsigned)(st.st_mode & 07777));
	return fd;
}

int jig_runtime_dir(char *out, size_t n, struct jig_error *e)
{
	int fd = runtime_fd(out, n, e);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* name beneath parent (path): created 0700 if absent, opened no-follow, the
 * caller's with mode 0700; parent is closed. */
static int private_dir(int parent, const char *name, const char *path, struct jig_error *e)
{
	struct stat st;
	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return close(parent), jig_err(e, JIG_E_HOST, "%s/%s: cannot create it: %s", path, name, strerror(errno));
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = errno;
	close(parent);
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "%s/%s: %s", path, name,
			       err == ELOOP || err == ENOTDIR ? "not a directory (a symbolic link or a file), refusing it" : strerror(err));
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700)
		return close(fd), jig_err(e, JIG_E_HOST, "%s/%s: not a directory of the caller's with mode 0700 (uid %u, mode %04o), refusing it",
					  path, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return fd;
}

int jig_runtime_jig_dir(const char *sub, char *out, size_t n, struct jig_error *e)
{
	char base[64], jig[96];
	int fd = runtime_fd(base, sizeof(base), e);
	if (fd < 0)
		return fd;
	snprintf(jig, sizeof(jig), "%s/jig", base);
	if ((fd = private_dir(fd, "jig", base, e)) < 0 || (fd = private_dir(fd, sub, jig, e)) < 0)
		return fd;
	if (snprintf(out, n, "%s/%s", jig, sub) >= (int)n)
		return close(fd), jig_err(e, JIG_E_INTERNAL, "%s/%s: the buffer is too small", jig, sub);
	return fd;
}

/* The lease's facts: who holds it (boot id, uid, pid and its start time)
 * and the scope's cgroup (NULL: not known yet); malloc'd text, or NULL. */
static char *lease_text(const char *cgroup)
{
	char boot[64];
	unsigned long long start;
	if (jig_boot_id(boot, sizeof(boot)) < 0 || jig_proc_start(getpid(), &start) < 0)
		return NULL;
	json_t *doc = json_pack("{s:s,s:s,s:I,s:i,s:I,s:o}", "format", JIG_SESSION_LEASE_FORMAT, "boot_id", boot, "uid",
				(json_int_t)geteuid(), "pid", (int)getpid(), "start", (json_int_t)start, "cgroup",
				cgroup ? json_string(cgroup) : json_null());
	char *txt = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (txt && strlen(txt) > JIG_LEASE_MAX_BYTES)
		free(txt), txt = NULL;
	return txt;
}

/* In the staging directory sfd/stage: the lease (locked, written) and tmp/. */
static int fill_stage(struct jig_session_rt *rt, int sfd, const char *stage, struct jig_error *e)
{
	rt->root_fd = openat(sfd, stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rt->root_fd < 0 || fchmod(rt->root_fd, 0700) < 0)
		return jig_err(e, JIG_E_HOST, "%s: cannot open the session's directory: %s", rt->root, strerror(errno));
	/* Locked and written before it has its name (the store's lease,
	 * decision 232): a sweep never finds it free or empty while its owner
	 * lives. */
	jig_autofree char *txt = lease_text(NULL);
	if (!txt)
		return jig_err(e, JIG_E_HOST, "%s/" JIG_LEASE_FILE ": cannot record the boot id, pid and start time: %s", rt->root,
			       strerror(errno ? errno : EIO));
	if ((rt->lease_fd = jig_state_lease_create(rt->root_fd, JIG_LEASE_FILE, txt, strlen(txt), e)) < 0)
		return jig_err_prefix(e, JIG_E_HOST, "%s/", rt->root);
	if (mkdirat(rt->root_fd, "tmp", 0700) < 0 || fchmodat(rt->root_fd, "tmp", 0700, AT_SYMLINK_NOFOLLOW) < 0)
		return jig_err(e, JIG_E_HOST, "%s: cannot create it 0700: %s", rt->tmpdir, strerror(errno));
	return 0;
}

int jig_session_rt_open(struct jig_session_rt *rt, struct jig_error *e)
{
	unsigned char rnd[16];
	char sessions[4096], stage[64];
	memset(rt, 0, sizeof(*rt));
	rt->root_fd = rt->lease_fd = -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return jig_err(e, JIG_E_INTERNAL, "getrandom: %s", strerror(errno));
	jig_hex(rnd, sizeof(rnd), rt->id);
	jig_autoclose int sfd = jig_runtime_jig_dir("sessions", sessions, sizeof(sessions), e);
	if (sfd < 0)
		return sfd;
	snprintf(rt->root, sizeof(rt->root), "%.4000s/%s", sessions, rt->id);
	snprintf(rt->tmpdir, sizeof(rt->tmpdir), "%.4000s/%s/tmp", sessions, rt->id);
	/* Made under a staging name and renamed whole: a sweep never finds
	 * the session's name without a held, written lease. */
	snprintf(stage, sizeof(stage), "%s.new", rt->id);
	if (mkdirat(sfd, stage, 0700) < 0)
		return jig_err(e, JIG_E_HOST, "%s/%s: cannot create the session's directory: %s", sessions, stage, strerror(errno));
	int r = fill_stage(rt, sfd, stage, e);
	if (r == 0 && renameat2(sfd, stage, sfd, rt->id, RENAME_NOREPLACE) < 0)
		r = jig_err(e, JIG_E_HOST, "%s: cannot name the session's directory: %s", rt->root, strerror(errno));
	if (r < 0) {
		jig_lease_remove_dir_at(sfd, stage);
		jig_closep(&rt->root_fd);
		jig_closep(&rt->lease_fd);
		rt->root_fd = rt->lease_fd = -1;
	}
	return r;
}

bool jig_session_cgroup_path_ok(const char *p)
{
	size_t n = strlen(p);
	if (n < 2 || n > 1024 || p[0] != '/' || p[n - 1] == '/' || strstr(p, "//") || strstr(p, "/./") ||
	    strstr(p, "/../") || (n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
		return false;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

int jig_session_rt_set_cgroup(struct jig_session_rt *rt, const char *cgroup, struct jig_error *e)
{
	if (!cgroup || !jig_session_cgroup_path_ok(cgroup))
		return jig_err(e, JIG_E_INTERNAL, "the session's cgroup is not an absolute cgroup v2 path");
	jig_autofree char *txt = lease_text(cgroup);
	if (rt->lease_fd < 0 || !txt || jig_state_lease_rewrite(rt->lease_fd, txt, strlen(txt)) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s/" JIG_LEASE_FILE ": cannot record the cgroup: %s", rt->root, strerror(errno ? errno : EIO));
	return 0;
}

void jig_session_rt_close(struct jig_session_rt *rt)
{
	struct stat a, b;
	char parent[4096];
	const char *slash = strrchr(rt->root, '/');
	if (rt->root_fd >= 0 && slash && snprintf(parent, sizeof(parent), "%.*s", (int)(slash - rt->root), rt->root) < (int)sizeof(parent)) {
		/* The parent reached again without following a link, and the
		 * directory there still the session's own. */
		jig_autoclose int pfd = jig_open_dir_nofollow(parent);
		if (pfd >= 0 && fstat(rt->root_fd, &a) == 0 && fstatat(pfd, slash + 1, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			jig_lease_remove_dir_at(pfd, slash + 1);
	}
	jig_closep(&rt->root_fd);
	jig_closep(&rt->lease_fd);
	rt->root_fd = rt->lease_fd = -1;
}
