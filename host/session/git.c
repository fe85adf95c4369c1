/* The repository's Git metadata in a session: what is bound read-only, the
 * launch's snapshot of what mounts cannot stop, and the end-of-session
 * scan (git.h; decisions 210-214). jig reads Git's files, never runs git. */
#include "session/git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/map.h"
#include "util/cleanup.h"
#include "util/fault.h"

/* The names watched in an rw worktree: a nested repository, and the
 * files Git or a shell hook read from a checkout as configuration. */
/* A finding's line, when the command gave a stream for them. */
static void __attribute__((format(printf, 2, 3))) say(FILE *f, const char *fmt, ...)
{
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

static const char *const watched[] = {".git", ".gitmodules", ".gitattributes", ".envrc", ".env", NULL};
static const char *const why[] = {"a nested repository", "Git reads it: submodule URLs and paths",
				  "Git reads it: filter and diff drivers", "direnv runs it", "direnv and dotenv load it"};

static bool within(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* where.c's reader, its refusal said as the session's. */
static int first_line(const char *path, char *out, size_t cap, struct jig_error *e)
{
	return jig_session_read_line(path, out, cap, e) ? jig_err_prefix(e, JIG_E_USAGE, "session: ") : 0;
}

/* dir/rel (rel absolute: itself), physical, a directory; 1 when it is not one. */
static int physical_dir(const char *dir, const char *rel, char *out)
{
	char p[2 * PATH_MAX + 2];
	snprintf(p, sizeof(p), rel[0] == '/' ? "%.0s%s" : "%s/%s", dir, rel);
	struct stat st;
	return realpath(p, out) && stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : 1;
}

/* A gitfile's directory ("gitdir: PATH", relative to the file's directory). */
static int gitfile_target(const char *file, char *out, struct jig_error *e)
{
	char line[PATH_MAX + 16], dir[PATH_MAX];
	int r = first_line(file, line, sizeof(line), e);
	if (r)
		return r;
	if (strncmp(line, "gitdir: ", 8) != 0)
		return jig_err(e, JIG_E_USAGE, "session: %s: not a \"gitdir: PATH\" file; refused", file);
	snprintf(dir, sizeof(dir), "%s", file);
	*strrchr(dir, '/') = '\0';
	if (physical_dir(dir, line + 8, out))
		return jig_err(e, JIG_E_USAGE, "session: %s names %s, not a directory; refused", file, line + 8);
	return 0;
}

/* gitdir's commondir, when it has one: 1 (in out), 0 none, or -code. */
static int commondir_of(const char *gitdir, char *out, struct jig_error *e)
{
	char p[PATH_MAX + 16], line[PATH_MAX + 16];
	struct stat st;
	snprintf(p, sizeof(p), "%s/commondir", gitdir);
	if (lstat(p, &st) < 0)
		return 0;
	int r = first_line(p, line, sizeof(line), e);
	if (r)
		return r;
	if (physical_dir(gitdir, line, out))
		return jig_err(e, JIG_E_USAGE, "session: %s names %s, not a directory; refused", p, line);
	return 1;
}

static bool covered(const struct jig_session_git *g, const char *p)
{
	for (size_t i = 0; i < g->n_ro; i++)
		if (within(p, g->ro[i]))
			return true;
	return false;
}

/* p read-only (a path already inside a protected one is covered; one that
 * holds protected ones replaces them). */
static int protect(struct jig_session_git *g, const char *p, struct jig_error *e)
{
	if (covered(g, p))
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < g->n_ro; i++) {
		if (within(g->ro[i], p))
			free(g->ro[i]);
		else
			g->ro[k++] = g->ro[i];
	}
	g->n_ro = k;
	if (g->n_ro == JIG_SESSION_GIT_MAX_RO)
		return jig_err(e, JIG_E_USAGE, "session: more than %d Git directories and .git entries to protect in %s; refused (each is bound read-only)",
			       JIG_SESSION_GIT_MAX_RO, g->worktree);
	if (!(g->ro[g->n_ro] = strdup(p)))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	g->n_ro++;
	return 0;
}

/* A hooks directory that is a link into the worktree: its target too (Git
 * runs what is there). */
static int protect_hooks(struct jig_session_git *g, const char *gitdir, struct jig_error *e)
{
	char p[PATH_MAX + 8], t[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/hooks", gitdir);
	if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	if (!realpath(p, t)) /* the agent could make what it names, in the worktree or not */
		return jig_err(e, JIG_E_USAGE, "session: %s is a link to a missing directory (%s); Git would run what appears there; refused", p,
			       strerror(errno));
	return within(t, g->worktree) ? protect(g, t, e) : 0;
}

/* The common directory from the map's root and the session's worktree:
 * root/.git a directory without commondir, or a gitfile naming a
 * directory outside the worktree; a linked worktree's .git a gitfile
 * naming <common>/worktrees/<id>, whose commondir is the common directory. */
static int trusted_common(struct jig_session_git *g, const char *root, struct jig_error *e)
{
	char g0[PATH_MAX + 8], t[PATH_MAX], c[PATH_MAX];
	struct stat st;
	int r;
	snprintf(g0, sizeof(g0), "%s/.git", root);
	int got = lstat(g0, &st);
	if (got < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return jig_err(e, JIG_E_USAGE, "session: %s: %s; the mapped repository's root has no Git directory jig can read; refused", g0,
			       got < 0 ? strerror(errno) : "neither a directory nor a \"gitdir:\" file (a link is never followed)");
	if (S_ISDIR(st.st_mode)) {
		if (physical_dir(root, ".git", g->common_dir))
			return jig_err(e, JIG_E_USAGE, "session: %s is not a directory; refused", g0);
	} else {
		if ((r = gitfile_target(g0, t, e)))
			return r;
		if (within(t, root))
			return jig_err(e, JIG_E_USAGE, "session: %s names %s, inside the worktree (a file an earlier session could have written); refused", g0, t);
		snprintf(g->common_dir, sizeof(g->common_dir), "%s", t);
	}
	if ((r = commondir_of(g->common_dir, c, e)) < 0)
		return r;
	if (r == 1)
		return jig_err(e, JIG_E_USAGE, "session: %s/commondir redirects Git to %s; a repository's own Git directory has none "
			       "(an earlier session may have planted it): review and remove it; refused", g->common_dir, c);
	if (strcmp(g->worktree, root) == 0)
		return 0;
	snprintf(g0, sizeof(g0), "%s/.git", g->worktree);
	if (lstat(g0, &st) < 0 || !S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "session: %s: a linked worktree's .git must be a \"gitdir:\" file; refused", g0);
	if ((r = gitfile_target(g0, t, e)))
		return r;
	char want[PATH_MAX + 16];
	snprintf(want, sizeof(want), "%s/worktrees/", g->common_dir);
	if (strncmp(t, want, strlen(want)) != 0 || strchr(t + strlen(want), '/') || !t[strlen(want)])
		return jig_err(e, JIG_E_USAGE, "session: %s names %s, not one of %s; refused", g0, t, want);
	if ((r = commondir_of(t, c, e)) < 0)
		return r;
	if (r == 0 || strcmp(c, g->common_dir) != 0)
		return jig_err(e, JIG_E_USAGE, "session: %s/commondir %s%s, not the repository's %s; refused", t, r ? "names " : "is missing",
			       r ? c : "", g->common_dir);
	return 0;
}

/* The walk of an rw worktree. */
struct walk {
	struct jig_session_git *g;
	bool launch;	  /* protect and record, or compare */
	FILE *err;	  /* the end's report */
	size_t entries, findings;
	dev_t dev;
	char rel[PATH_MAX];
	struct jig_error *e;
};

static int kind_of(const char *name)
{
	for (int i = 0; watched[i]; i++)
		if (strcmp(name, watched[i]) == 0)
			return i;
	return -1;
}

static const struct jig_session_git_ent *seen_at(const struct jig_session_git *g, const char *rel)
{
	for (size_t i = 0; i < g->n_seen; i++)
		if (g->seen[i].rel && strcmp(g->seen[i].rel, rel) == 0)
			return &g->seen[i];
	return NULL;
}

static bool same(const struct jig_session_git_ent *a, const struct stat *st)
{
	return a->dev == st->st_dev && a->ino == st->st_ino && (a->mode & S_IFMT) == (st->st_mode & S_IFMT) &&
	       (S_ISDIR(st->st_mode) ||
		(a->size == st->st_size && a->mtime_ns == st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec &&
		 a->ctime_ns == st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec));
}

static int record(struct walk *w, const struct stat *st)
{
	struct jig_session_git *g = w->g;
	if (g->n_seen == g->cap_seen) {
		size_t cap = g->cap_seen ? 2 * g->cap_seen : 16;
		struct jig_session_git_ent *n = realloc(g->seen, cap * sizeof(*n));
		if (!n)
			return jig_err(w->e, JIG_E_INTERNAL, "out of memory");
		g->seen = n;
		g->cap_seen = cap;
	}
	struct jig_session_git_ent *n = &g->seen[g->n_seen];
	*n = (struct jig_session_git_ent){.rel = strdup(w->rel), .dev = st->st_dev, .ino = st->st_ino, .mode = st->st_mode,
					  .size = st->st_size, .mtime_ns = st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec,
					  .ctime_ns = st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec};
	if (!n->rel)
		return jig_err(w->e, JIG_E_INTERNAL, "out of memory");
	g->n_seen++;
	return 0;
}

/* A nested .git at launch: itself and the Git directories it names inside
 * the worktree read-only (outside the worktree nothing is granted). */
static int protect_nested(struct walk *w, const char *abs, const struct stat *st)
{
	char d[PATH_MAX], c[PATH_MAX];
	int r;
	if (S_ISLNK(st->st_mode))
		return jig_err(w->e, JIG_E_USAGE, "session: %s is a symbolic link (Git follows it; a bind cannot hold it); refused", abs);
	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		return jig_err(w->e, JIG_E_USAGE, "session: %s is neither a directory nor a \"gitdir:\" file; refused", abs);
	if ((r = protect(w->g, abs, w->e)))
		return r;
	if (S_ISDIR(st->st_mode)) {
		if (strlen(abs) >= sizeof(d))
			return jig_err(w->e, JIG_E_USAGE, "session: a path in %s is too long to check; refused", w->g->worktree);
		memcpy(d, abs, strlen(abs) + 1);
	} else {
		struct jig_error ignored = {0};
		if (gitfile_target(abs, d, &ignored))
			return 0; /* not a repository Git will use: the end reports it if it changes */
		if (within(d, w->g->worktree) && (r = protect(w->g, d, w->e)))
			return r;
	}
	if ((r = commondir_of(d, c, w->e)) < 0)
		return r;
	if (r == 1 && within(c, w->g->worktree) && (r = protect(w->g, c, w->e)))
		return r;
	return protect_hooks(w->g, d, w->e);
}

static void quarantine(struct walk *w, int dfd, const char *what)
{
	char q[64], shown[PATH_MAX + 64];
	int k = 0;
	for (; k < 100; k++) {
		snprintf(q, sizeof(q), k ? "%s.%d" : "%s", JIG_SESSION_GIT_QUARANTINE, k);
		if (renameat2(dfd, ".git", dfd, q, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST)
			k = 100;
	}
	snprintf(shown, sizeof(shown), "%.*s%s", (int)(strlen(w->rel) - 4), w->rel, q);
	if (k < 100)
		say(w->err, "session: the agent %s %s (a nested repository): moved to %s so that Git does not use it; review it before running git there\n",
			what, w->rel, shown);
	else
		say(w->err, "session: the agent %s %s (a nested repository) and jig could not move it (%s): review it before running git there\n",
			what, w->rel, strerror(errno));
}

/* The end: one watched entry against the launch's. */
static void compare(struct walk *w, int dfd, int kind, const struct stat *st)
{
	const struct jig_session_git_ent *a = seen_at(w->g, w->rel);
	if (a && same(a, st))
		return;
	w->findings++;
	const char *what = a ? "replaced" : "created";
	if (kind == 0 && strcmp(w->rel, ".git") != 0) /* never the worktree's own (a mount point all session) */
		quarantine(w, dfd, what);
	else
		say(w->err, "session: the agent %s %s (%s): review it before running git or entering the directory\n",
			a ? (kind == 0 ? "replaced" : "changed") : "created", w->rel, why[kind]);
}

static int walk_dir(struct walk *w, int dfd, size_t depth);

static int walk_entry(struct walk *w, int dfd, const char *name, unsigned char type, size_t depth)
{
	size_t len = strlen(w->rel);
	if (len + strlen(name) + 2 >= sizeof(w->rel))
		return jig_err(w->e, JIG_E_USAGE, "session: a path in %s is too long to check; refused", w->g->worktree);
	snprintf(w->rel + len, sizeof(w->rel) - len, "%s%s", len ? "/" : "", name);
	int r = 0, kind = kind_of(name);
	struct stat st;
	if (kind >= 0 || type == DT_DIR || type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out; /* gone meanwhile: nothing to protect or report */
		char abs[2 * PATH_MAX + 2];
		snprintf(abs, sizeof(abs), "%s/%s", w->g->worktree, w->rel);
		if (kind >= 0 && w->launch) {
			r = record(w, &st);
			if (!r && kind == 0 && strcmp(w->rel, ".git") != 0)
				r = protect_nested(w, abs, &st);
		} else if (kind >= 0)
			compare(w, dfd, kind, &st);
		/* Never into a .git (Git's own, protected), a link or another file system. */
		if (!r && kind != 0 && S_ISDIR(st.st_mode) && st.st_dev == w->dev && strcmp(abs, w->g->common_dir) != 0) {
			int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = walk_dir(w, sub, depth + 1);
				close(sub);
			}
		}
	}
out:
	w->rel[len] = '\0';
	return r;
}

static int walk_dir(struct walk *w, int dfd, size_t depth)
{
	if (depth > JIG_SESSION_GIT_WALK_DEPTH)
		return jig_err(w->e, JIG_E_USAGE, "session: %s is deeper than %d directories at %s; jig cannot check it for nested repositories; refused",
			       w->g->worktree, JIG_SESSION_GIT_WALK_DEPTH, w->rel);
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return w->launch ? jig_err(w->e, JIG_E_USAGE, "session: %s/%s: %s; refused", w->g->worktree, w->rel, strerror(errno)) : 0;
	}
	int r = 0;
	struct dirent *de;
	while (!r && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > JIG_SESSION_GIT_WALK_MAX)
			r = jig_err(w->e, JIG_E_USAGE, "session: %s holds more than %d entries; jig cannot check it for nested repositories; refused",
				    w->g->worktree, JIG_SESSION_GIT_WALK_MAX);
		else
			r = walk_entry(w, dirfd(d), de->d_name, de->d_type, depth);
	}
	closedir(d);
	return r;
}

static int walk(struct walk *w)
{
	jig_autoclose int fd = open(w->g->worktree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return jig_err(w->e, JIG_E_USAGE, "session: %s: %s; refused", w->g->worktree, strerror(errno));
	w->dev = st.st_dev;
	w->rel[0] = '\0';
	return walk_dir(w, fd, 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int jig_session_git_resolve(struct jig_session_git *g, const char *root, const char *worktree, const char *where_common,
			    bool rw, struct jig_error *e)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->worktree, sizeof(g->worktree), "%s", worktree);
	int r = trusted_common(g, root, e);
	if (r)
		return r;
	if (strcmp(where_common, g->common_dir) != 0)
		return jig_err(e, JIG_E_USAGE, "session: the worktree's Git files name %s as its common directory, the map's root %s has %s; refused",
			       where_common, root, g->common_dir);
	char dotgit[PATH_MAX + 8];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", worktree);
	if ((r = protect(g, g->common_dir, e)) || (r = protect(g, dotgit, e)) || (r = protect_hooks(g, g->common_dir, e)))
		return r;
	if (rw) {
		struct walk w = {.g = g, .launch = true, .e = e};
		if ((r = walk(&w)))
			return r;
		g->walked = true;
	}
	qsort(g->ro, g->n_ro, sizeof(*g->ro), cmp_str);
	return 0;
}

size_t jig_session_git_end(const struct jig_session_git *g, FILE *err)
{
	if (!g->walked)
		return 0;
	struct jig_error e = {0};
	struct walk w = {.g = (struct jig_session_git *)g, .launch = false, .err = err, .e = &e};
	if (walk(&w) < 0)
		say(err, "session: the end-of-session check of %s stopped: %s\n", g->worktree, e.msg);
	for (size_t i = 0; i < g->n_seen; i++) {
		struct stat st;
		char abs[2 * PATH_MAX + 2];
		snprintf(abs, sizeof(abs), "%s/%s", g->worktree, g->seen[i].rel);
		if (lstat(abs, &st) < 0) {
			int k = kind_of(strrchr(abs, '/') + 1);
			w.findings++;
			say(err, "session: the agent removed or moved %s (%s): review the worktree before running git\n", g->seen[i].rel,
				k >= 0 ? why[k] : "watched");
		}
	}
	return w.findings;
}

void jig_session_git_free(struct jig_session_git *g)
{
	for (size_t i = 0; i < g->n_ro; i++)
		free(g->ro[i]);
	for (size_t i = 0; i < g->n_seen; i++)
		free(g->seen[i].rel);
	free(g->seen);
	memset(g, 0, sizeof(*g));
}
