/* Where jig session finds its own inputs (decision 215): the repository map
 * and the state roots are fixed places of the operator's account, below the
 * password database's home (never $HOME, $XDG_CONFIG_HOME or
 * $XDG_STATE_HOME, which a repository's .envrc can set); the catalog is the
 * installed snapshot's. A place writable by anyone but the operator, below
 * a directory others may rename in, or inside a mapped repository is
 * refused. */
#include "session/places.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "state/state.h"
#include "util/note.h"
#include "util/cleanup.h"

int jig_session_home(char *out, size_t cap, struct jig_error *e)
{
	struct passwd *pw = getpwuid(getuid());
	char real[PATH_MAX];
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
		return jig_err(e, JIG_E_USAGE, "session: uid %u has no home directory in the password database; the repository map is read from it",
			       (unsigned)getuid());
	if (!realpath(pw->pw_dir, real))
		return jig_err(e, JIG_E_USAGE, "session: the home directory %s: %s", pw->pw_dir, strerror(errno));
	if (snprintf(out, cap, "%s", real) >= (int)cap)
		return jig_err(e, JIG_E_USAGE, "session: the home directory %s is too long", real);
	return 0;
}

/* A directory on the way to one of the operator's places: root's or the
 * operator's, and not writable by others unless sticky (last: never). */
static int one_dir(const char *p, const struct stat *st, bool last, const char *what, struct jig_error *e)
{
	if (!S_ISDIR(st->st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: %s is not a directory; refused", what, p);
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return jig_err(e, JIG_E_USAGE, "%s: %s is owned by uid %u, neither yours nor root's; refused", what, p, (unsigned)st->st_uid);
	if ((st->st_mode & 022) && (last || !(st->st_mode & S_ISVTX)))
		return jig_err(e, JIG_E_USAGE, "%s: %s is writable by others (mode %04o)%s; refused (chmod go-w %s)", what, p,
			       (unsigned)(st->st_mode & 07777), last ? "" : " and not sticky", p);
	return 0;
}

int jig_session_trusted_dirs(const char *real, const char *what, struct jig_error *e)
{
	char p[PATH_MAX];
	if (real[0] != '/' || snprintf(p, sizeof(p), "%s", real) >= (int)sizeof(p))
		return jig_err(e, JIG_E_USAGE, "%s: %s is not an absolute path; refused", what, real);
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char keep = *c;
		*c = '\0';
		struct stat st;
		const char *at = c == p + 1 ? "/" : p;
		if (lstat(at, &st) < 0)
			return jig_err(e, JIG_E_USAGE, "%s: %s: %s; refused", what, at, strerror(errno));
		int r = one_dir(at, &st, keep == '\0', what, e);
		if (r)
			return r;
		if (!keep)
			return 0;
		*c = keep;
	}
}

static bool within(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return n > 0 && strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0' || strcmp(dir, "/") == 0);
}

int jig_session_outside_repositories(json_t *repos, const char *const *more, const char *path, const char *what,
				     struct jig_error *e)
{
	const char *id;
	json_t *r, *v;
	size_t i;
	json_object_foreach(repos, id, r) {
		if (within(path, json_string_value(json_object_get(r, "root"))))
			return jig_err(e, JIG_E_USAGE, "%s %s is inside the mapped repository \"%s\" (%s); refused: it must be the operator's own, outside every repository",
				       what, path, id, json_string_value(json_object_get(r, "root")));
		json_array_foreach(json_object_get(r, "worktrees"), i, v)
			if (within(path, json_string_value(v)))
				return jig_err(e, JIG_E_USAGE, "%s %s is inside the worktree %s of repository \"%s\"; refused: it must be the operator's own, outside every repository",
					       what, path, json_string_value(v), id);
	}
	for (; more && *more; more++)
		if (**more && within(path, *more))
			return jig_err(e, JIG_E_USAGE, "%s %s is inside the repository %s; refused: it must be the operator's own, outside every repository",
				       what, path, *more);
	return 0;
}

/* name beneath parent: jig's own directory, made and opened by the
 * trusted-state store's directory rule (the caller's, 0700, no link
 * followed; decision 233); a mode anything changed is put back to 0700
 * first and said, one line. */
static int own_dir(int parent, const char *name, const char *path, struct jig_error *e)
{
	struct stat st;
	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_USAGE, "session: state root %s: cannot create it: %s", path, strerror(errno));
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "session: state root %s: not a directory (a link is never followed); refused (remove it)", path);
	if (st.st_uid != geteuid())
		return jig_err(e, JIG_E_USAGE, "session: state root %s is owned by uid %u, not by you; refused (remove it)", path, (unsigned)st.st_uid);
	if ((st.st_mode & 07777) != 0700) {
		/* Before it is opened (an agent's chmod 000 closes it to us too);
		 * no link followed (glibc refuses a link with AT_SYMLINK_NOFOLLOW). */
		if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) < 0)
			return jig_err(e, JIG_E_USAGE, "session: state root %s has mode %04o and cannot be put back to 0700: %s; refused (chmod 700 %s)",
				       path, (unsigned)(st.st_mode & 07777), strerror(errno), path);
		jig_note("the state root %s had mode %04o; put back to 0700", path, (unsigned)(st.st_mode & 07777));
	}
	int fd = jig_state_subdir(parent, name, false);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "session: state root %s changed while it was checked; refused", path);
	return fd;
}

/* name beneath parent on the way to jig's directories (.local, state): the
 * operator's, created 0700 when absent, not writable by others. */
static int way_dir(int parent, const char *name, const char *path, struct jig_error *e)
{
	struct stat st;
	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_USAGE, "session: %s: cannot create it: %s", path, strerror(errno));
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "session: %s: %s; refused (the state roots are reached without following a link)", path,
			       errno == ELOOP || errno == ENOTDIR ? "not a directory" : strerror(errno));
	int r = fstat(fd, &st) < 0 ? jig_err(e, JIG_E_USAGE, "session: %s: %s", path, strerror(errno))
				   : one_dir(path, &st, true, "session: the state roots' directory", e);
	if (r == 0 && st.st_uid != geteuid())
		r = jig_err(e, JIG_E_USAGE, "session: the state roots' directory %s is not yours (uid %u); refused", path, (unsigned)st.st_uid);
	return r ? (close(fd), r) : fd;
}

int jig_session_state_dir(const char *home, const char *rel, struct jig_error *e)
{
	char path[PATH_MAX], parts[PATH_MAX];
	int r = jig_session_trusted_dirs(home, "session: the home directory", e);
	if (r)
		return r;
	int fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "session: the home directory %s: %s", home, strerror(errno));
	snprintf(parts, sizeof(parts), "%s", rel);
	snprintf(path, sizeof(path), "%s", home);
	/* .local/state, then jig-sessions/... (jig's own). */
	unsigned i = 0;
	for (char *save = NULL, *c = strtok_r(parts, "/", &save); c; c = strtok_r(NULL, "/", &save), i++) {
		size_t n = strlen(path);
		snprintf(path + n, sizeof(path) - n, "/%s", c);
		int next = i < 2 ? way_dir(fd, c, path, e) : own_dir(fd, c, path, e);
		close(fd);
		if (next < 0)
			return next;
		fd = next;
	}
	return fd;
}

int jig_session_operator_file(const char *kind, const char *alias, const char *what, const char *path, bool secret, json_t *repos,
			      struct jig_error *e)
{
	struct stat st;
	char real[PATH_MAX], dir[PATH_MAX], w[128];
	const char *why = NULL;
	if (lstat(path, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file (a link is never followed)";
	else if (!(why = jig_config_refusal(&st, secret ? JIG_CONFIG_PRIVATE : JIG_CONFIG_NAMES)) &&
		 (!realpath(path, real) || strcmp(real, path) != 0))
		why = "not its physical path";
	if (why)
		return jig_err(e, JIG_E_USAGE, "session: the %s of %s host %s, %s: %s; refused", what, kind, alias, path, why);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	snprintf(w, sizeof(w), "session: the %s' directory", what);
	int r = jig_session_trusted_dirs(dir[0] ? dir : "/", w, e);
	snprintf(w, sizeof(w), "session: the %s", what);
	return r ? r : jig_session_outside_repositories(repos, NULL, path, w, e);
}
