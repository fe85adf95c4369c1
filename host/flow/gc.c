/* jig gc: the Package/0 store reclaimed; see gc.h. */
#include "flow/gc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "flow/pack.h"
#include "flow/prepared.h"
#include "flow/project.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/limits.h"

#define ROOT_MAX (8u << 20)	/* an admitted Plan or a retained record */
#define MANIFEST_MAX (4u << 20) /* a package manifest, as store.c reads it */
#define HISTORY_DEPTH 4
#define WALK_DEPTH 64

struct gc {
	int statefd;
	bool dry;
	json_t *refs;  /* every digest a root names */
	json_t *pkgs;  /* kept package manifests */
	json_t *blobs; /* kept blobs */
	struct jig_packs packs; /* the store's visible packs */
	struct jig_gc_result *res;
	struct jig_error *e;
};

static bool is_hex64(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == JIG_SHA256_HEX - 1;
}

/* Every 64-hex string of v (keys too) into set. */
static void collect(json_t *v, json_t *set, int depth)
{
	const char *k;
	json_t *x;
	size_t i;
	if (depth > WALK_DEPTH)
		return;
	if (json_is_string(v) && is_hex64(json_string_value(v)))
		json_object_set_new(set, json_string_value(v), json_true());
	else if (json_is_array(v))
		json_array_foreach(v, i, x) collect(x, set, depth + 1);
	else if (json_is_object(v))
		json_object_foreach(v, k, x) {
			if (is_hex64(k))
				json_object_set_new(set, k, json_true());
			collect(x, set, depth + 1);
		}
}

static int read_json(int dirfd, const char *rel, size_t cap, const char *what, json_t **doc, struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_read_file_at(dirfd, rel, cap, what, &buf, &len, NULL, e);
	return r ? r : jig_json_parse_object(buf, len, what, doc, e);
}

static int root(struct gc *g, int dirfd, const char *rel, const char *what)
{
	json_t *doc = NULL;
	int r = read_json(dirfd, rel, ROOT_MAX, what, &doc, g->e);
	if (r)
		return jig_err(g->e, JIG_E_USAGE, "%.600s; it cannot be told what it keeps, so nothing was freed", g->e->msg);
	collect(doc, g->refs, 0);
	json_decref(doc);
	g->res->roots++;
	return 0;
}

/* The current admission: its Plan is a root. Read through the state store
 * without its MAC: keeping what an unverified admission names is never
 * unsafe, and gc decides nothing that runs. */
static int admission_root(struct gc *g)
{
	int r = jig_state_admission_named(g->statefd, g->res->plan_sha256, g->e);
	if (r == 1)
		return 0; /* nothing admitted: nothing is kept for an admission */
	if (r)
		return jig_err(g->e, JIG_E_USAGE, "%.600s; nothing was freed (review again)", g->e->msg);
	char rel[128], what[160];
	snprintf(rel, sizeof(rel), "admitted/%s.json", g->res->plan_sha256);
	snprintf(what, sizeof(what), ".jig/%s (the admitted Plan)", rel);
	return root(g, g->statefd, rel, what);
}

/* Every retained Run record below .jig/runs/ is a root. */
static int history_roots(struct gc *g, int dirfd, const char *path, int depth)
{
	DIR *d = jig_dir_open(dirfd);
	struct dirent *de;
	int r = d ? 0 : jig_err(g->e, JIG_E_INTERNAL, ".jig/%s: %s; nothing was freed", path, strerror(errno));
	while (!r && (de = jig_dir_next(d))) {
		char rel[PATH_MAX];
		struct stat st;
		snprintf(rel, sizeof(rel), "%s/%s", path, de->d_name);
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(g->e, JIG_E_INTERNAL, ".jig/%s: %s; nothing was freed", rel, strerror(errno));
		else if (S_ISREG(st.st_mode) && strstr(de->d_name, ".tmp") == NULL) {
			char what[PATH_MAX + 32];
			snprintf(what, sizeof(what), ".jig/%s (a retained Run record)", rel);
			r = root(g, dirfd, de->d_name, what);
		} else if (S_ISDIR(st.st_mode) && depth < HISTORY_DEPTH) {
			jig_autoclose int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? jig_err(g->e, JIG_E_INTERNAL, ".jig/%s: %s; nothing was freed", rel, strerror(errno))
				    : history_roots(g, sub, rel, depth + 1);
		}
	}
	if (d)
		closedir(d);
	return r;
}

static bool present(int statefd, const char *rel)
{
	struct stat st;
	return fstatat(statefd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* A kept package: its blobs, and its prepared record's tree and sources. */
static int keep_package(struct gc *g, const char *sha, int depth)
{
	char rel[160];
	snprintf(rel, sizeof(rel), "store/packages/%s.json", sha);
	if (json_object_get(g->pkgs, sha) || !present(g->statefd, rel))
		return 0;
	json_object_set_new(g->pkgs, sha, json_true());
	json_t *man = NULL;
	if (read_json(g->statefd, rel, MANIFEST_MAX, rel, &man, g->e))
		return jig_err(g->e, JIG_E_INTEGRITY, "%.600s; a kept package cannot be read, so nothing was freed", g->e->msg);
	size_t i;
	json_t *fe;
	json_array_foreach(json_object_get(man, "files"), i, fe) {
		const char *b = json_string_value(json_object_get(fe, "sha256"));
		if (b && is_hex64(b))
			json_object_set_new(g->blobs, b, json_true());
	}
	json_decref(man);
	jig_prepared_record_name(rel, sizeof(rel), "package", sha);
	json_t *rec = NULL;
	struct jig_error ignored = {0};
	int r = 0;
	if (depth < 2 && present(g->statefd, rel) && read_json(g->statefd, rel, JIG_PREPARED_RECORD_MAX, rel, &rec, &ignored) == 0) {
		static const char *const keys[] = {"tree", "source", NULL};
		for (const char *const *k = keys; !r && *k; k++) {
			const char *d = json_string_value(json_object_get(rec, *k));
			if (d && is_hex64(d))
				r = keep_package(g, d, depth + 1);
		}
	}
	json_decref(rec);
	return r;
}

static int mark(struct gc *g)
{
	const char *sha;
	json_t *x;
	int r = 0;
	json_object_foreach(g->refs, sha, x) {
		char rel[160];
		snprintf(rel, sizeof(rel), "store/blobs/%s", sha);
		if (present(g->statefd, rel) || jig_packs_find(&g->packs, sha))
			json_object_set_new(g->blobs, sha, json_true());
		if ((r = keep_package(g, sha, 0)))
			break;
	}
	return r;
}

enum verdict { KEEP, FREE, TEMPORARY, UNKNOWN };

/* What an entry of store/<dir> is. */
static enum verdict judge(struct gc *g, const char *dir, const char *name)
{
	char hex[JIG_SHA256_HEX];
	if (strstr(name, ".tmp"))
		return TEMPORARY;
	if (strcmp(dir, "blobs") == 0)
		return !is_hex64(name) ? UNKNOWN : json_object_get(g->blobs, name) ? KEEP : FREE;
	const char *base = name;
	if (strcmp(dir, "prepared") == 0)
		base = strncmp(name, "package-", 8) == 0 ? name + 8 : strncmp(name, "identity-", 9) == 0 ? name + 9 : NULL;
	if (!base || strlen(base) != JIG_SHA256_HEX - 1 + 5 || strcmp(base + JIG_SHA256_HEX - 1, ".json") != 0)
		return UNKNOWN;
	snprintf(hex, sizeof(hex), "%.*s", JIG_SHA256_HEX - 1, base);
	if (!is_hex64(hex))
		return UNKNOWN;
	if (base == name + 9) { /* a reuse record: kept while its tree is */
		char rel[160];
		snprintf(rel, sizeof(rel), "store/prepared/%s", name);
		json_t *rec = NULL;
		struct jig_error ignored = {0};
		read_json(g->statefd, rel, JIG_PREPARED_RECORD_MAX, rel, &rec, &ignored);
		const char *tree = json_string_value(json_object_get(rec, "tree"));
		enum verdict v = tree && json_object_get(g->pkgs, tree) ? KEEP : FREE;
		json_decref(rec);
		return v;
	}
	return json_object_get(g->pkgs, hex) ? KEEP : FREE;
}

static void count(struct jig_gc_counts *c, const char *dir, enum verdict v, uint64_t bytes)
{
	c->bytes += bytes;
	if (v == TEMPORARY)
		c->temporary++;
	else if (strcmp(dir, "blobs") == 0)
		c->blobs++;
	else if (strcmp(dir, "packages") == 0)
		c->packages++;
	else
		c->records++;
}

/* store/<dir>: its names read whole first, then each judged and, unless
 * kept (or not the store's), freed. */
/* The names in directory fd (not "." and ".."), read before anything in
 * it is removed; NULL with errno set when it cannot be read. */
static json_t *dir_names(int fd)
{
	DIR *d = jig_dir_open(fd);
	if (!d)
		return NULL;
	json_t *names = json_array();
	struct dirent *de;
	while ((de = jig_dir_next(d)))
		json_array_append_new(names, json_string(de->d_name));
	closedir(d);
	return names;
}

static int sweep(struct gc *g, const char *dir)
{
	char path[64];
	snprintf(path, sizeof(path), "store/%s", dir);
	jig_autoclose int fd = openat(g->statefd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : jig_err(g->e, JIG_E_INTERNAL, ".jig/%s: %s", path, strerror(errno));
	json_t *names = dir_names(fd);
	size_t i;
	json_t *x;
	int r = names ? 0 : jig_err(g->e, JIG_E_INTERNAL, ".jig/%s: %s", path, strerror(errno));
	json_array_foreach(names, i, x) {
		const char *name = json_string_value(x);
		struct stat st;
		enum verdict v = judge(g, dir, name);
		if (r || v == UNKNOWN || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		count(v == KEEP ? &g->res->kept : &g->res->freed, dir, v, (uint64_t)st.st_size);
		if (v != KEEP && !g->dry && unlinkat(fd, name, 0) < 0 && errno != ENOENT)
			r = jig_err(g->e, JIG_E_INTERNAL, ".jig/%s/%s: %s", path, name, strerror(errno));
	}
	json_decref(names);
	return r;
}

/* store/packs: a pack whose every entry is kept and whose bytes are its
 * name stays as it is; the kept entries of every other pack (an entry
 * unreferenced, or a pack found altered, whose entries are each checked)
 * are written into one new pack, committed as a review commits one
 * (flow/pack.h), before the old indexes and then the old packs are
 * removed: a crash leaves the old pack, the new one or both visible,
 * never a kept blob in neither. Then every other file there (a pack no
 * visible index names, an index not visible, a temporary file) is freed. */
static int sweep_packs(struct gc *g)
{
	struct jig_packs *ps = &g->packs;
	bool *redo = calloc(ps->n_pack + 1, sizeof(*redo));
	json_t *written = json_object();
	struct jig_pack_writer w = {.fd = -1};
	int r = redo && written ? 0 : jig_err(g->e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; !r && i < ps->n; i++)
		if (!json_object_get(g->blobs, ps->v[i].sha))
			redo[ps->v[i].pack] = true;
	for (size_t k = 0; !r && k < ps->n_pack; k++)
		if (!redo[k] && !jig_pack_check(g->statefd, ps, k))
			redo[k] = true;
	bool any = false;
	for (size_t k = 0; k < ps->n_pack; k++)
		any |= redo[k];
	if (!r && any && !g->dry)
		r = jig_pack_begin(&w, g->statefd, g->e);
	for (size_t i = 0; !r && i < ps->n; i++) {
		const struct jig_pack_entry *x = &ps->v[i];
		bool keep = json_object_get(g->blobs, x->sha) != NULL;
		if (!redo[x->pack]) {
			g->res->kept.blobs++;
			continue;
		}
		if (keep && !json_object_get(written, x->sha)) {
			unsigned char *buf = malloc(x->len ? (size_t)x->len : 1);
			int got = buf ? jig_pack_read(g->statefd, ps, x, buf) : -1;
			if (got == 0) {
				json_object_set_new(written, x->sha, json_true());
				g->res->kept.blobs++;
				if (!g->dry)
					r = jig_pack_add(&w, x->sha, buf, (size_t)x->len, g->e);
				free(buf);
				continue;
			}
			free(buf);
		}
		if (!keep || !json_object_get(written, x->sha)) { /* unreferenced, or no good copy here */
			g->res->freed.blobs++;
			g->res->freed.bytes += x->len;
		}
	}
	JIG_FAULT_POINT("gc pack written");
	if (!r && !g->dry)
		r = jig_pack_commit(&w, g->e);
	char made[2][JIG_SHA256_HEX]; /* the new pack and its index */
	memcpy(made[0], w.pack_sha, sizeof(made[0]));
	memcpy(made[1], w.idx_sha, sizeof(made[1]));
	jig_pack_end(&w);
	/* The old ones: indexes first (invisible), then their packs. */
	jig_autoclose int fd = openat(g->statefd, JIG_PACKS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t k = 0; !r && fd >= 0 && k < ps->n_pack; k++) {
		char name[80];
		snprintf(name, sizeof(name), "%s.idx", ps->pack[k].idx);
		if (redo[k] && !g->dry && unlinkat(fd, name, 0) < 0 && errno != ENOENT)
			r = jig_err(g->e, JIG_E_INTERNAL, ".jig/%s/%s: %s", JIG_PACKS_DIR, name, strerror(errno));
	}
	JIG_FAULT_POINT("gc old indexes removed");
	json_t *names = !r ? dir_names(fd) : NULL;
	size_t i;
	json_t *x;
	json_array_foreach(names, i, x) {
		const char *name = json_string_value(x);
		size_t l = strlen(name);
		bool ours = strstr(name, ".tmp") || (l == JIG_SHA256_HEX - 1 + 5 && strcmp(name + l - 5, ".pack") == 0) ||
			    (l == JIG_SHA256_HEX - 1 + 4 && strcmp(name + l - 4, ".idx") == 0);
		bool live = false, old = false; /* old: a pack rewritten, its bytes counted by entry */
		for (size_t k = 0; ours && !live && k < ps->n_pack; k++) {
			bool its = strncmp(name, ps->pack[k].sha, JIG_SHA256_HEX - 1) == 0 || strncmp(name, ps->pack[k].idx, JIG_SHA256_HEX - 1) == 0;
			live = its && !redo[k];
			old |= its && redo[k];
		}
		live |= made[0][0] && (strncmp(name, made[0], JIG_SHA256_HEX - 1) == 0 || strncmp(name, made[1], JIG_SHA256_HEX - 1) == 0);
		struct stat st;
		if (r || !ours || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (live) {
			g->res->kept.bytes += (uint64_t)st.st_size;
			continue;
		}
		if (!old) /* a temporary file, or a crash's pack or index no visible pack has */
			count(&g->res->freed, "packs", TEMPORARY, (uint64_t)st.st_size);
		if (!g->dry && unlinkat(fd, name, 0) < 0 && errno != ENOENT)
			r = jig_err(g->e, JIG_E_INTERNAL, ".jig/%s/%s: %s", JIG_PACKS_DIR, name, strerror(errno));
	}
	json_decref(names);
	json_decref(written);
	free(redo);
	return r;
}

/* What a jig before decisions 195 and 196 kept and nothing reads any
 * more: the remembered admission (.jig/admission-memo.json) and the
 * capture cache (.jig/capture/, its regular files); freed as temporary
 * files. Anything else found there is left alone. */
static int withdrawn(struct gc *g)
{
	struct stat st;
	if (fstatat(g->statefd, "admission-memo.json", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
		count(&g->res->freed, "withdrawn", TEMPORARY, (uint64_t)st.st_size);
		if (!g->dry && unlinkat(g->statefd, "admission-memo.json", 0) < 0 && errno != ENOENT)
			return jig_err(g->e, JIG_E_INTERNAL, ".jig/admission-memo.json: %s", strerror(errno));
	}
	jig_autoclose int fd = openat(g->statefd, "capture", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = jig_dir_open(fd);
	struct dirent *de;
	int r = 0;
	while (!r && d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		count(&g->res->freed, "withdrawn", TEMPORARY, (uint64_t)st.st_size);
		if (!g->dry && unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT)
			r = jig_err(g->e, JIG_E_INTERNAL, ".jig/capture/%s: %s", de->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
	if (!r && fd >= 0 && !g->dry)
		unlinkat(g->statefd, "capture", AT_REMOVEDIR); /* only if empty */
	return r;
}

/* <path>/.jig opened as project.c opens it (the caller's, 0700, not a
 * link) and locked exclusively, without waiting, into *out (-1 when there
 * is no .jig: nothing to reclaim); or a negative code with *e. */
static int open_locked(const char *path, int *out, struct jig_error *e)
{
	*out = -1;
	jig_autoclose int root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return jig_err(e, JIG_E_USAGE, "project %s: %s", path, strerror(errno));
	if (faccessat(root, JIG_PROJECT_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: not a jig project here (no %s; jig init creates one)", path, JIG_PROJECT_FILE);
	int fd = jig_state_project_dir(root, path, false, e);
	if (fd == -JIG_E_USAGE)
		return 0; /* no .jig: nothing to reclaim */
	if (fd == -JIG_E_NOT_ADMITTED)
		return jig_err(e, JIG_E_USAGE, "%s", e->msg);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;
		close(fd);
		return busy ? jig_err(e, JIG_E_INTERNAL,
				      "%s: a review, run or lock of this project is in progress; nothing was freed (run jig gc when it has ended)",
				      path)
			    : jig_err(e, JIG_E_INTERNAL, "%s/%s: cannot lock: %s; without the lock a review or run could be using the store, so nothing was freed",
				      path, JIG_STATE_DIR, strerror(errno));
	}
	*out = fd;
	return 0;
}

int jig_store_gc(const char *path, bool dry_run, struct jig_gc_result *res, struct jig_error *e)
{
	memset(res, 0, sizeof(*res));
	int fd, r = open_locked(path, &fd, e);
	if (r || fd < 0)
		return r;
	JIG_FAULT_POINT("gc_locked"); /* a review or run started now waits (test-only) */
	struct gc g = {.statefd = fd, .dry = dry_run, .refs = json_object(), .pkgs = json_object(), .blobs = json_object(),
		       .res = res, .e = e};
	r = !g.refs || !g.pkgs || !g.blobs ? jig_err(e, JIG_E_INTERNAL, "out of memory") : admission_root(&g);
	jig_autoclose int hist = r ? -1 : jig_state_subdir(fd, JIG_GC_HISTORY_DIR, false);
	if (!r && hist < 0 && errno != ENOENT)
		r = jig_err(e, JIG_E_INTERNAL, ".jig/%s: %s; nothing was freed", JIG_GC_HISTORY_DIR, strerror(errno));
	if (!r && hist >= 0)
		r = history_roots(&g, hist, JIG_GC_HISTORY_DIR, 0);
	if (!r)
		r = jig_packs_load(fd, &g.packs, e);
	if (!r)
		r = mark(&g);
	/* Records before the packages they name, packages before blobs: an
	 * interrupted gc leaves no record or manifest naming what is gone. */
	static const char *const dirs[] = {"prepared", "packages", "blobs", NULL};
	for (const char *const *d = dirs; !r && *d; d++)
		r = sweep(&g, *d);
	if (!r)
		r = sweep_packs(&g);
	jig_packs_free(&g.packs);
	if (!r)
		r = withdrawn(&g);
	json_decref(g.refs);
	json_decref(g.pkgs);
	json_decref(g.blobs);
	close(fd); /* the lock ends here */
	return r;
}
