/* Where a session runs: the working directory's repository, read from the
 * files Git keeps (.git as a directory or a "gitdir:" file, commondir)
 * with no-follow opens; git itself is never run (decision 134). The map
 * then says whether that repository and worktree may have a session, and
 * with which provider. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/map.h"
#include "util/cleanup.h"

int jig_session_read_line(const char *path, char *out, size_t cap, struct jig_error *e)
{
	jig_autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: %s; refused", path, fd < 0 ? strerror(errno) : "not a regular file");
	ssize_t n = read(fd, out, cap - 1);
	if (n <= 0 || (size_t)n == cap - 1)
		return jig_err(e, JIG_E_USAGE, "%s: empty, unreadable or too long; refused", path);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* dir/rel (rel absolute: itself) made physical into out. */
static int physical(const char *dir, const char *rel, char *out, const char *what, struct jig_error *e)
{
	char p[2 * PATH_MAX + 2];
	snprintf(p, sizeof(p), rel[0] == '/' ? "%.0s%s" : "%s/%s", dir, rel);
	struct stat st;
	if (!realpath(p, out) || stat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: %s is not a directory; refused", what, p);
	return 0;
}

/* The innermost directory at or above cwd holding .git, and .git's kind. */
static int find_worktree(const char *cwd, char *wt, bool *is_file, struct jig_error *e)
{
	snprintf(wt, PATH_MAX, "%s", cwd);
	for (;;) {
		char g[PATH_MAX + 8];
		struct stat st;
		snprintf(g, sizeof(g), "%s/.git", strcmp(wt, "/") == 0 ? "" : wt);
		if (lstat(g, &st) == 0) {
			if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
				return jig_err(e, JIG_E_USAGE, "%s: neither a directory nor a \"gitdir:\" file (a link is never followed); refused", g);
			*is_file = S_ISREG(st.st_mode);
			return 0;
		}
		if (errno != ENOENT)
			return jig_err(e, JIG_E_USAGE, "%s: %s; refused", g, strerror(errno));
		if (strcmp(wt, "/") == 0)
			return jig_err(e, JIG_E_USAGE, "%s is not inside a Git repository; jig session runs in a mapped repository", cwd);
		char *slash = strrchr(wt, '/');
		slash == wt ? (void)(wt[1] = '\0') : (void)(*slash = '\0');
	}
}

/* The worktree's Git directory and common directory, and the repository's
 * root: the common directory's parent when it is a ".git", otherwise the
 * worktree itself (a submodule or a separate Git directory). */
static int git_dirs(struct jig_session_where *w, bool is_file, struct jig_error *e)
{
	char gitdir[PATH_MAX], line[PATH_MAX + 16], p[PATH_MAX + 16];
	int r;
	if (is_file) {
		snprintf(p, sizeof(p), "%s/.git", w->worktree);
		if ((r = jig_session_read_line(p, line, sizeof(line), e)))
			return r;
		if (strncmp(line, "gitdir: ", 8) != 0)
			return jig_err(e, JIG_E_USAGE, "%s: not a \"gitdir: PATH\" file; refused", p);
		if ((r = physical(w->worktree, line + 8, gitdir, p, e)))
			return r;
	} else if ((r = physical(w->worktree, ".git", gitdir, w->worktree, e)))
		return r;
	snprintf(p, sizeof(p), "%s/commondir", gitdir);
	struct stat st;
	if (lstat(p, &st) == 0) {
		if ((r = jig_session_read_line(p, line, sizeof(line), e)) || (r = physical(gitdir, line, w->common_dir, p, e)))
			return r;
	} else
		snprintf(w->common_dir, sizeof(w->common_dir), "%s", gitdir);
	const char *base = strrchr(w->common_dir, '/');
	if (base && strcmp(base, "/.git") == 0 && base != w->common_dir)
		snprintf(w->root, sizeof(w->root), "%.*s", (int)(base - w->common_dir), w->common_dir);
	else
		snprintf(w->root, sizeof(w->root), "%s", w->worktree);
	return 0;
}

static bool listed(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

int jig_session_map_resolve(const struct jig_session_map *m, const char *cwd, struct jig_session_where *w,
			    struct jig_error *e)
{
	memset(w, 0, sizeof(*w));
	if (!realpath(cwd, w->cwd))
		return jig_err(e, JIG_E_USAGE, "the working directory %s: %s", cwd, strerror(errno));
	bool is_file = false;
	int r = find_worktree(w->cwd, w->worktree, &is_file, e);
	if (!r)
		r = git_dirs(w, is_file, e);
	if (r)
		return r;
	const char *id;
	json_t *repo;
	json_object_foreach(json_object_get(m->doc, "repositories"), id, repo)
		if (strcmp(json_string_value(json_object_get(repo, "root")), w->root) == 0) {
			w->repo_id = id;
			w->repo = repo;
		}
	if (!w->repo)
		return jig_err(e, JIG_E_USAGE, "unknown repository %s (worktree %s): not in the repository map %s; refused, no session", w->root,
			       w->worktree, m->what);
	if (strcmp(w->worktree, w->root) != 0 && !listed(json_object_get(w->repo, "worktrees"), w->worktree))
		return jig_err(e, JIG_E_USAGE, "unregistered worktree %s of repository \"%s\" (%s): not in its \"worktrees\"; refused, no session",
			       w->worktree, w->repo_id, w->root);
	w->rw = strcmp(json_string_value(json_object_get(w->repo, "mode")), "rw") == 0;
	w->context = json_string_value(json_object_get(w->repo, "context"));
	return 0;
}

int jig_session_map_provider(const struct jig_session_map *m, const char *requested, struct jig_session_where *w,
			     struct jig_error *e)
{
	json_t *dflt = json_object_get(w->repo, "default_provider");
	const char *id = requested;
	if (!id && !dflt)
		return jig_err(e, JIG_E_USAGE, "repository \"%s\" names no default provider; choose one of its approved providers with --provider ID", w->repo_id);
	if (!id && json_is_array(dflt) && json_array_size(dflt) != 1)
		return jig_err(e, JIG_E_USAGE, "repository \"%s\": its default provider is %s; the map must name exactly one", w->repo_id,
			       json_array_size(dflt) ? "ambiguous" : "missing");
	if (!id)
		id = json_string_value(json_is_array(dflt) ? json_array_get(dflt, 0) : dflt);
	json_t *prov = json_object_get(json_object_get(m->doc, "providers"), id);
	if (!prov)
		return jig_err(e, JIG_E_USAGE, "unknown provider \"%.40s\": not in the repository map; refused", id);
	if (!listed(json_object_get(w->repo, "providers"), id))
		return jig_err(e, JIG_E_USAGE, "provider \"%.40s\" is not approved for repository \"%s\"; refused", id, w->repo_id);
	w->provider_id = id;
	w->provider = prov;
	w->client_id = json_string_value(json_object_get(prov, "client"));
	w->client = json_object_get(json_object_get(m->doc, "clients"), w->client_id);
	return 0;
}
