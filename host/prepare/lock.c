/* jig lock (issue 35): a Flow's bun.lock written or refreshed by the
 * pinned Bun in the installer scope against the operator's registry; see
 * prepare.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prepare/installer.h"
#include "prepare/prepare.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

/* The manifest's declared patch files (each a normalised relative path)
 * copied from the project into pkg, so that the checks read them; a
 * malformed declaration is left for the checks to refuse. */
static int copy_patches(int flowdir, int pkg, struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	json_t *m = NULL;
	struct jig_error ignored = {0};
	if (jig_read_file_at(pkg, JIG_DEPS_MANIFEST, JIG_DEPS_MANIFEST_MAX, JIG_DEPS_MANIFEST, &buf, &len, NULL, &ignored) < 0 ||
	    jig_json_parse_object(buf, len, JIG_DEPS_MANIFEST, &m, &ignored) < 0)
		return 0;
	json_t *patches = json_object_get(m, "patchedDependencies");
	const char *k;
	json_t *v;
	int r = 0, n = 0;
	if (json_is_object(patches))
		json_object_foreach(patches, k, v) {
			const char *path = json_string_value(v);
			if (r || ++n > JIG_DEPS_MAX_PATCHES || !path || !jig_path_is_normal_relative(path) ||
			    faccessat(pkg, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
				continue;
			r = jig_prepare_copy_file(flowdir, pkg, path, e);
		}
	json_decref(m);
	return r;
}

/* The Flow's manifests from the project into pkg, checked as review
 * checks them; the project's bun.lock is kept (refreshed) only when it
 * passes every check review makes, else replaced, and why is said. */
static int stage_project(struct jig_prepare_one *o, int flowdir, int pkg, struct jig_lock_plan *pl, struct jig_error *e)
{
	const char *flow = o->f->name;
	if (faccessat(flowdir, JIG_DEPS_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return jig_err(e, JIG_E_USAGE, "flow %s: %s/%s: %s; a bun.lock is made from it", flow, o->f->dir, JIG_DEPS_MANIFEST,
			       errno == ENOENT ? "no such file" : strerror(errno));
	int r = jig_prepare_copy_file(flowdir, pkg, JIG_DEPS_MANIFEST, e);
	if (r || (r = copy_patches(flowdir, pkg, e)) || (r = jig_deps_check_unlocked(pkg, flow, &o->d, e)))
		return r;
	if (!o->d.declared)
		return jig_err(e, JIG_E_USAGE, "flow %s: %s/%s declares no dependencies; there is nothing to lock", flow, o->f->dir,
			       JIG_DEPS_MANIFEST);
	if (faccessat(flowdir, JIG_DEPS_LOCK, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	struct jig_error why = {0};
	int k = jig_prepare_copy_file(flowdir, pkg, JIG_DEPS_LOCK, &why);
	jig_deps_free(&o->d);
	if (!k && !(k = jig_deps_check(pkg, flow, &o->d, &why)) && o->d.n_urls)
		k = jig_deps_check_registry(&o->d, flow, o->ph->registry, &why);
	pl->refresh = k == 0;
	if (k) {
		snprintf(pl->replaced_why, sizeof(pl->replaced_why), "%s", why.msg);
		unlinkat(pkg, JIG_DEPS_LOCK, 0);
		jig_deps_free(&o->d);
		r = jig_deps_check_unlocked(pkg, flow, &o->d, e);
	}
	return r;
}

/* What the installer reads, in src: the manifest, the kept lock as
 * review would stage it, the patches. */
/* The resolved lock into the Flow's package, replacing only bun.lock:
 * written whole and synced under a private name beside it, then renamed
 * over it (atomic), the directory synced. */
static int write_back(int flowdir, const struct jig_flow *f, const char *text, size_t len, struct jig_lock_result *res,
		      struct jig_error *e)
{
	jig_autofree char *old = NULL;
	size_t olen = 0;
	struct jig_error ignored = {0};
	res->changed = jig_read_file_at(flowdir, JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX, JIG_DEPS_LOCK, &old, &olen, NULL, &ignored) < 0 ||
		       olen != len || memcmp(old, text, len) != 0;
	res->bytes = len;
	if (!res->changed)
		return 0;
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".bun.lock.jig-%d", (int)getpid());
	unlinkat(flowdir, tmp, 0);
	int r = jig_write_file_at(flowdir, tmp, text, len, 0644, e);
	if (!r && renameat(flowdir, tmp, flowdir, JIG_DEPS_LOCK) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "flow %s: %s/%s: %s; the project's bun.lock is unchanged", f->name, f->dir, JIG_DEPS_LOCK,
			    strerror(errno));
	if (r)
		unlinkat(flowdir, tmp, 0);
	else
		fsync(flowdir);
	return r;
}

/* A resolution the registry did not serve: exit status 6 with lock's
 * remedy first (a long Bun stderr cannot cut it), then the installer's
 * words, from review's message for the same failure (exit 2 or 6, with or
 * without "the installer said:"). */
static int registry_failure(const struct jig_prepare_one *o, int r, struct jig_error *e)
{
	const char *said = strstr(e->msg, "the installer said: ");
	const char *failed = strstr(e->msg, "resolving its dependencies failed: ");
	if ((r != -JIG_E_USAGE && r != -JIG_E_REGISTRY) || !failed)
		return r;
	char words[768];
	snprintf(words, sizeof(words), "%s", said ? said + 20 : failed + 35);
	char *tail = strstr(words, "; not admitted"); /* review's words, not lock's */
	if (tail && tail[14] == '\0')
		*tail = '\0';
	return jig_err(e, JIG_E_REGISTRY,
		       "flow %s: resolving its dependencies failed: the registry %.200s could not be reached or did not serve these packages; check the registry in the operator's npm.json (${XDG_CONFIG_HOME:-~/.config}/jig/npm.json), that this host reaches it and that it serves every dependency (docs/dependencies.md); the installer said: %.300s",
		       o->f->name, o->ph->registry, words);
}

static int lock_flow(struct jig_prepare_one *o, int flowdir, jig_lock_show show, void *arg, struct jig_lock_result *res,
		     struct jig_error *e)
{
	char tmpl[] = "/tmp/jig-lock-XXXXXX";
	if (!mkdtemp(tmpl))
		return jig_err(e, JIG_E_INTERNAL, "a preparation directory: %s", strerror(errno));
	snprintf(o->run_dir, sizeof(o->run_dir), "%s", tmpl);
	if ((o->runfd = open(o->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(o->runfd, "package", 0700) < 0 || mkdirat(o->runfd, "src", 0700) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", o->run_dir, strerror(errno));
	jig_autoclose int pkg = openat(o->runfd, "package", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_autoclose int src = openat(o->runfd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jig_lock_plan pl = {.flow = o->f->name, .dir = o->f->dir, .registry = o->ph->registry};
	int r = pkg < 0 || src < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", o->run_dir, strerror(errno)) : 0;
	if (r || (r = stage_project(o, flowdir, pkg, &pl, e)) || (r = jig_prepare_stage_sources(o, pkg, src, pl.refresh, e)) ||
	    (r = jig_prepare_compose(o, e)))
		return r;
	/* The Plan shown is the very template that is launched. */
	pl.policy = &o->t.policy;
	if (show && (r = show(&pl, arg, e))) /* it may refuse: then nothing is launched */
		return r;
	jig_deps_free(&o->d);
	if ((r = registry_failure(o, jig_prepare_resolve(o, src, e), e)) || (r = jig_deps_check(src, o->f->name, &o->d, e)))
		return r;
	res->packages = o->d.n_packages;
	res->refreshed = pl.refresh;
	jig_autofree char *text = NULL;
	size_t len;
	if ((r = jig_read_file_at(src, JIG_DEPS_LOCK, JIG_DEPS_LOCK_MAX, "the resolved bun.lock", &text, &len, NULL, e)))
		return r;
	return write_back(flowdir, o->f, text, len, res, e);
}

int jig_prepare_lock(struct jig_project *p, struct jig_flow *f, struct jig_prepare_phase *ph, jig_lock_show show, void *arg,
		     struct jig_lock_result *res, struct jig_error *e)
{
	memset(res, 0, sizeof(*res));
	if (f->recipe)
		return jig_err(e, JIG_E_USAGE, "flow %s is a Markdown recipe; it has no npm dependencies to lock", f->name);
	int r = jig_prepare_registry_ready(ph, e);
	if (r)
		return r;
	jig_autoclose int flowdir = jig_open_beneath(p->rootfd, f->dir, O_RDONLY | O_DIRECTORY);
	if (flowdir < 0)
		return jig_err(e, JIG_E_USAGE, "flow %s: %s: %s", f->name, f->dir, strerror(errno));
	struct jig_prepare_one o = {.p = p, .f = f, .ph = ph, .runfd = -1};
	r = lock_flow(&o, flowdir, show, arg, res, e);
	if (o.runfd >= 0)
		close(o.runfd);
	if (o.run_dir[0])
		jig_remove_tree(AT_FDCWD, o.run_dir);
	if (o.have_t)
		jig_scope_template_free(&o.t);
	jig_deps_free(&o.d);
	return r;
}
