/* The capability catalog: strict parse and composition (see catalog.h). */
#include "policy/catalog.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "snapshot/verify.h"
#include "util/crypto.h"

static const char *const fragment_keys[] = {"about", "binds", "tmpfs", "symlinks", "env", "descriptors",
					    "network", "cwd", "limits", NULL};

/* A catalog bind source: an absolute host path, a file or directory of the
 * installed snapshot ("@snapshot/REL") or a per-run slot ("@run/NAME"). */
static bool snapshot_ref(const char *s, const char **rel)
{
	if (strncmp(s, "@snapshot/", 10) != 0 || !jig_path_is_normal_relative(s + 10))
		return false;
	*rel = s + 10;
	return true;
}

static int check_binds(const char *name, json_t *binds, struct jig_error *e)
{
	static const char *const keys[] = {"source", "target", "resolve", "optional", NULL};
	size_t i;
	json_t *b;
	if (binds && !json_is_array(binds))
		return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": binds must be an array", name);
	json_array_foreach(binds, i, b) {
		struct jig_error inner = {0};
		const char *src, *rel;
		json_t *res = json_object_get(b, "resolve"), *opt = json_object_get(b, "optional");
		if (!json_is_object(b) || jig_json_only_keys(b, keys, "bind", &inner) < 0 ||
		    jig_json_get_string(b, "source", "bind", &src, &inner) < 0 || (res && !json_is_boolean(res)) ||
		    (opt && !json_is_boolean(opt)))
			return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": binds[%zu]: %s", name, i,
				       inner.msg[0] ? inner.msg : "resolve and optional are booleans");
		if (strcmp(src, "@client") == 0) {
			const char *target = json_string_value(json_object_get(b, "target"));
			if (!target || strcmp(target, "@client") != 0 || res || opt)
				return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": binds[%zu]: \"@client\" is bound at \"@client\", nothing else", name, i);
			continue;
		}
		if (src[0] == '@' && !snapshot_ref(src, &rel) && strncmp(src, "@run/", 5) != 0)
			return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": binds[%zu].source \"%s\": a host path, \"@snapshot/PATH\", \"@run/NAME\" or \"@client\"", name, i, src);
	}
	return 0;
}

/* "@input" as a path's last component is the route's reviewed attachment
 * (a name of [a-z0-9_-]): s with it filled into buf, s itself without it,
 * or NULL when there is none to fill. */
static const char *fill_input(const char *s, const char *input, char *buf, size_t cap)
{
	size_t n = strlen(s);
	if (n < 7 || strcmp(s + n - 7, "/@input") != 0)
		return s;
	if (!input || snprintf(buf, cap, "%.*s/%s", (int)(n - 7), s, input) >= (int)cap)
		return NULL;
	return buf;
}

/* The policy document of fragments on the deny-all base: no files, no
 * writable mount, no environment or descriptor, no network, cwd "/". */
static json_t *base_doc(const char *scope)
{
	return json_pack("{s:s,s:s,s:[],s:[],s:[],s:{},s:[],s:s,s:s}", "format", JIG_SCOPE_POLICY_FORMAT, "scope", scope,
			 "binds", "tmpfs", "symlinks", "env", "descriptors", "cwd", "/", "network", "none");
}

/* A fragment alone must be a valid policy (with a stand-in snapshot path
 * and limits if it sets none): every rule of the policy language, named. */
static int check_fragment(const char *name, json_t *fr, struct jig_error *e)
{
	struct jig_error inner = {0};
	if (!json_is_object(fr) || jig_json_only_keys(fr, fragment_keys, "fragment", &inner) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": %s", name, inner.msg[0] ? inner.msg : "must be an object");
	json_t *about = json_object_get(fr, "about");
	if (about && !json_is_string(about))
		return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": about must be a string", name);
	int r = check_binds(name, json_object_get(fr, "binds"), e);
	if (r)
		return r;
	json_t *doc = base_doc("catalog");
	json_t *binds = json_object_get(doc, "binds");
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(fr, "binds"), i, b) {
		const char *src = json_string_value(json_object_get(b, "source")), *rel;
		char path[PATH_MAX];
		if (strcmp(src, "@client") == 0)
			continue; /* the reviewed client trees: checked when composed */
		if (snapshot_ref(src, &rel))
			snprintf(path, sizeof(path), "/opt/jig-snapshot/%s", rel), src = path;
		char s2[PATH_MAX], t2[PATH_MAX];
		const char *target = json_string_value(json_object_get(b, "target"));
		src = fill_input(src, "input-name", s2, sizeof(s2));
		target = target ? fill_input(target, "input-name", t2, sizeof(t2)) : NULL;
		json_array_append_new(binds, json_pack("{s:s,s:s?}", "source", src, "target", target));
	}
	static const char *const copied[] = {"tmpfs", "symlinks", "env", "descriptors", "network", "cwd", "limits", NULL};
	for (const char *const *k = copied; *k; k++)
		if (json_object_get(fr, *k))
			json_object_set(doc, *k, json_object_get(fr, *k));
	if (!json_object_get(doc, "limits"))
		json_object_set_new(doc, "limits", json_pack("{s:I,s:I,s:I,s:I}", "memory_bytes", (json_int_t)(64 << 20),
							     "tasks", (json_int_t)16, "cpu_quota_us", (json_int_t)100000,
							     "wall_ms", (json_int_t)1000));
	char *txt = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	struct jig_scope_policy p;
	r = txt ? jig_scope_policy_parse(txt, strlen(txt), NULL, JIG_POLICY_SLOTS, &p, &inner) : -JIG_E_INTERNAL;
	free(txt);
	if (r)
		return jig_err(e, JIG_E_INTEGRITY, "catalog fragment \"%s\": %s", name, inner.msg[0] ? inner.msg : "out of memory");
	jig_scope_policy_free(&p);
	return 0;
}

static int check_kind(const char *name, json_t *k, json_t *fragments, struct jig_error *e)
{
	static const char *const keys[] = {"fragments", "argv", "hold", NULL};
	struct jig_error inner = {0};
	json_t *fr = json_object_get(k, "fragments"), *argv = json_object_get(k, "argv"), *hold = json_object_get(k, "hold");
	if (!json_is_object(k) || jig_json_only_keys(k, keys, "kind", &inner) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": %s", name, inner.msg[0] ? inner.msg : "must be an object");
	if (!json_is_array(fr) || !json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > JIG_CATALOG_MAX_ARGV ||
	    (hold && (!json_is_string(hold) || json_string_value(hold)[0] != '/')))
		return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": needs \"fragments\" (names), \"argv\" (1-%d strings) and an optional absolute \"hold\"", name, JIG_CATALOG_MAX_ARGV);
	size_t i, j;
	json_t *v;
	json_array_foreach(fr, i, v) {
		const char *f = json_string_value(v);
		if (!f || !json_object_get(fragments, f))
			return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": unknown fragment \"%s\"", name, f ? f : "?");
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_array_get(fr, j)), f) == 0)
				return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": fragment \"%s\" is listed twice", name, f);
	}
	json_array_foreach(argv, i, v)
		if (!json_is_string(v) || (i == 0 && json_string_value(v)[0] != '/' && strcmp(json_string_value(v), "@entry") != 0))
			return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": argv[%zu] must be a string (argv[0] an absolute path or \"@entry\")", name, i);
	return 0;
}

static int parse(const char *buf, size_t len, bool check, struct jig_catalog *c, struct jig_error *e);

int jig_catalog_parse(const char *buf, size_t len, struct jig_catalog *c, struct jig_error *e)
{
	return parse(buf, len, true, c, e);
}

/* check false: these exact bytes passed every check below in this very
 * build before (jig_catalog_load's memo); the structure is still parsed
 * strictly, only the per-fragment and per-kind checks are not repeated. */
static int parse(const char *buf, size_t len, bool check, struct jig_catalog *c, struct jig_error *e)
{
	c->doc = NULL;
	json_t *root = NULL;
	struct jig_error inner = {0};
	static const char *const keys[] = {"format", "fragments", "kinds", NULL};
	const char *format;
	if (jig_json_parse_object(buf, len, "catalog", &root, &inner) < 0 || jig_json_only_keys(root, keys, "catalog", &inner) < 0 ||
	    jig_json_get_string(root, "format", "catalog", &format, &inner) < 0) {
		json_decref(root);
		return jig_err(e, JIG_E_INTEGRITY, "capability catalog: %s", inner.msg);
	}
	json_t *fragments = json_object_get(root, "fragments"), *kinds = json_object_get(root, "kinds");
	int r = 0;
	if (strcmp(format, JIG_CATALOG_FORMAT) != 0)
		r = jig_err(e, JIG_E_INTEGRITY, "capability catalog: format \"%s\" is not %s", format, JIG_CATALOG_FORMAT);
	else if (!json_is_object(fragments) || !json_is_object(kinds))
		r = jig_err(e, JIG_E_INTEGRITY, "capability catalog: needs \"fragments\" and \"kinds\" objects");
	const char *k;
	json_t *v;
	json_object_foreach(check ? fragments : NULL, k, v)
		if (!r)
			r = check_fragment(k, v, e);
	json_object_foreach(check ? kinds : NULL, k, v)
		if (!r)
			r = check_kind(k, v, fragments, e);
	if (r)
		json_decref(root);
	else
		c->doc = root;
	return r;
}

#define CATALOG_MEMO "/.jig-catalog-checked/"
/* The label the catalog memo's MAC is taken over. */
#define CATALOG_CHECKED_LABEL "jig-catalog-checked/1"

/* This executable's GNU build id (a digest of the linked program). */
struct build_id {
	unsigned char id[64];
	size_t n;
};

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct build_id *out = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n), *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    n->n_descsz >= 8 && n->n_descsz <= sizeof(out->id)) {
				memcpy(out->id, desc, n->n_descsz);
				out->n = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the executable: without an id, no memo */
}

/* SHA-256 of a label, the catalog's digest and jig's build id; -1 when
 * jig has no build id (then the catalog is checked every time). */
static int catalog_key(const unsigned char digest[JIG_SHA256_LEN], unsigned char key[JIG_SHA256_LEN])
{
	struct build_id b = {.n = 0};
	dl_iterate_phdr(build_id_cb, &b);
	struct jig_sha256_ctx *h = b.n ? jig_sha256_begin() : NULL;
	if (!h)
		return -1;
	static const char label[] = CATALOG_CHECKED_LABEL;
	jig_sha256_update(h, label, sizeof(label));
	jig_sha256_update(h, digest, JIG_SHA256_LEN);
	jig_sha256_update(h, b.id, b.n);
	return jig_sha256_end(h, key) < 0 ? -1 : 0;
}

int jig_catalog_load(const struct jig_snapshot *s, struct jig_catalog *c, struct jig_error *e)
{
	c->doc = NULL;
	const struct jig_manifest_file *mf = jig_manifest_find_file(&s->m, JIG_CATALOG_FILE);
	if (!mf)
		return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no capability catalog (%s); it cannot run Flows (reinstall jig)",
			       s->m.id, JIG_CATALOG_FILE);
	/* The bytes parsed are the bytes hashed. */
	jig_autoclose int fd = jig_snapshot_open_listed(s, JIG_CATALOG_FILE, false, e);
	if (fd < 0)
		return fd;
	jig_autofree char *buf = NULL;
	size_t len;
	unsigned char d[JIG_SHA256_LEN];
	int r = jig_read_fd(fd, JIG_CATALOG_MAX_BYTES, JIG_CATALOG_FILE, &buf, &len, NULL, e);
	if (r)
		return r;
	jig_sha256(buf, len, d);
	if (memcmp(d, mf->sha256, JIG_SHA256_LEN) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "%s: its bytes differ from the signed manifest; refusing it", JIG_CATALOG_FILE);
	/* Checking every fragment (a policy printed and parsed again each) was
	 * ~10 M of a jig run's 14 M instructions, on every Plan. The outcome
	 * depends only on these bytes and on this build of jig, so a command
	 * with a verifier remembers it under the digest of both (decision 86). */
	unsigned char key[JIG_SHA256_LEN];
	bool memo = s->verifier && catalog_key(d, key) == 0;
	bool known = memo && jig_verifier_memo_known(s->verifier, CATALOG_MEMO, key);
	r = parse(buf, len, !known, c, e);
	if (!r && memo && !known)
		jig_verifier_memo_remember(s->verifier, CATALOG_MEMO, key);
	return r;
}

void jig_catalog_free(struct jig_catalog *c)
{
	json_decref(c->doc);
	c->doc = NULL;
}

/* --- composition ------------------------------------------------------------------ */

struct compose {
	const char *kind;
	json_t *doc;	/* the policy being built */
	json_t *owners; /* "target:/x", "env:NAME", "fd:3", "network", ... -> fragment */
};

/* Records that fragment frag grants what (once per scope). */
static int claim(struct compose *c, const char *frag, const char *what, struct jig_error *e)
{
	const char *prev = json_string_value(json_object_get(c->owners, what));
	if (prev)
		return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": %s is granted by fragment \"%s\" and again by \"%s\"",
			       c->kind, what, prev, frag);
	json_object_set_new(c->owners, what, json_string(frag));
	return 0;
}

/* "@client": the operator's client trees (reviewed provider identity),
 * each read-only at its own path. The composed policy is parsed again, so
 * every policy rule (no broad directory, never the caller's home) holds. */
static int add_client_trees(struct compose *c, const struct jig_scope_facts *f, const char *frag, struct jig_error *e)
{
	char what[PATH_MAX + 16];
	for (size_t i = 0; i < f->n_client_trees; i++) {
		const char *tree = f->client_trees[i];
		struct stat st;
		if (tree[0] != '/' || stat(tree, &st) < 0)
			return jig_err(e, JIG_E_USAGE, "scope %s: client tree %s: %s", f->name, tree,
				       tree[0] != '/' ? "not an absolute path" : strerror(errno));
		snprintf(what, sizeof(what), "target %s", tree);
		int r = claim(c, frag, what, e);
		if (r)
			return r;
		json_array_append_new(json_object_get(c->doc, "binds"), json_pack("{s:s,s:s}", "source", tree, "target", tree));
	}
	return 0;
}

static int add_binds(struct compose *c, const struct jig_scope_facts *f, const char *frag, json_t *binds,
		     struct jig_error *e)
{
	size_t i;
	json_t *b;
	json_array_foreach(binds, i, b) {
		const char *src = json_string_value(json_object_get(b, "source")), *rel;
		const char *target = json_string_value(json_object_get(b, "target"));
		bool optional = json_is_true(json_object_get(b, "optional"));
		char path[PATH_MAX], real[PATH_MAX], what[300], s2[PATH_MAX], t2[PATH_MAX];
		src = fill_input(src, f->input, s2, sizeof(s2));
		target = fill_input(target, f->input, t2, sizeof(t2));
		if (!src || !target)
			return jig_err(e, JIG_E_INTERNAL, "catalog fragment \"%s\": its bind needs an input name (\"@input\")", frag);
		if (strcmp(src, "@client") == 0) {
			int r = add_client_trees(c, f, frag, e);
			if (r)
				return r;
			continue;
		}
		if (snapshot_ref(src, &rel)) {
			snprintf(path, sizeof(path), "%s/%s", f->snapshot_dir, rel);
			src = path;
		}
		struct stat st;
		if (src[0] == '/' && stat(src, &st) < 0) {
			if (optional && errno == ENOENT)
				continue; /* absent on this host: not granted */
			return jig_err(e, JIG_E_HOST, "catalog fragment \"%s\": bind source %s: %s", frag, src, strerror(errno));
		}
		/* Bound from where it really is, at the name the program uses. */
		if (json_is_true(json_object_get(b, "resolve"))) {
			const char *res = realpath(src, real);
			src = res ? real : src;
		}
		snprintf(what, sizeof(what), "target %s", target);
		int r = claim(c, frag, what, e);
		if (r)
			return r;
		json_array_append_new(json_object_get(c->doc, "binds"), json_pack("{s:s,s:s}", "source", src, "target", target));
	}
	return 0;
}

static int add_fragment(struct compose *c, const struct jig_scope_facts *f, const char *frag, json_t *fr,
			struct jig_error *e)
{
	int r = add_binds(c, f, frag, json_object_get(fr, "binds"), e);
	static const char *const lists[] = {"tmpfs", "symlinks", NULL};
	char what[300];
	for (const char *const *l = lists; !r && *l; l++) {
		size_t i;
		json_t *m;
		json_array_foreach(json_object_get(fr, *l), i, m) {
			snprintf(what, sizeof(what), "target %s", json_string_value(json_object_get(m, "target")));
			if ((r = claim(c, frag, what, e)))
				break;
			json_array_append(json_object_get(c->doc, *l), m);
		}
	}
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(fr, "env"), k, v) {
		snprintf(what, sizeof(what), "environment variable %s", k);
		if (!r && !(r = claim(c, frag, what, e)))
			json_object_set(json_object_get(c->doc, "env"), k, v);
	}
	size_t i;
	json_array_foreach(json_object_get(fr, "descriptors"), i, v) {
		snprintf(what, sizeof(what), "descriptor %lld", (long long)json_integer_value(json_object_get(v, "target")));
		if (!r && !(r = claim(c, frag, what, e)))
			json_array_append(json_object_get(c->doc, "descriptors"), v);
	}
	/* Settings a fragment fixes once: another fragment cannot widen them. */
	static const char *const once[] = {"network", "cwd", "limits", NULL};
	for (const char *const *s = once; !r && *s; s++)
		if (json_object_get(fr, *s) && !(r = claim(c, frag, *s, e)))
			json_object_set(c->doc, *s, json_object_get(fr, *s));
	return r;
}

/* Reviewed egress only adds: to a private namespace ("none"), the
 * CONNECT relay with exactly these destinations, and the variables that
 * point a client at it (no fragment may have set them). */
static int add_egress(struct compose *c, const struct jig_scope_facts *f, struct jig_error *e)
{
	const char *net = json_string_value(json_object_get(c->doc, "network"));
	if (!net || strcmp(net, "none") != 0)
		return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": egress is added only to a private network (\"none\")", f->kind);
	json_t *connect = json_array();
	for (size_t i = 0; connect && i < f->n_egress; i++)
		json_array_append_new(connect, json_string(f->egress[i]));
	json_t *env = json_object_get(c->doc, "env");
	static const char *const vars[] = {"HTTPS_PROXY", "https_proxy", NULL};
	for (const char *const *v = vars; *v; v++) {
		if (json_object_get(env, *v)) {
			json_decref(connect);
			return jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": environment variable %s is set by a fragment and by egress", f->kind, *v);
		}
		json_object_set_new(env, *v, json_string(JIG_EGRESS_PROXY_URL));
	}
	if (!connect || json_object_set_new(c->doc, "network", json_pack("{s:[],s:o,s:s}", "loopback", "connect", connect,
									  "proxy", JIG_EGRESS_PROXY)))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	return 0;
}

static int kind_program(json_t *kind, const struct jig_scope_facts *f, struct jig_scope_template *t, struct jig_error *e)
{
	json_t *argv = json_object_get(kind, "argv"), *hold = json_object_get(kind, "hold");
	if (!(t->argv = calloc(json_array_size(argv) + 1, sizeof(char *))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t i;
	json_t *v;
	json_array_foreach(argv, i, v) {
		const char *a = json_string_value(v);
		if (strcmp(a, "@entry") == 0 && !f->entry)
			return jig_err(e, JIG_E_INTERNAL, "catalog kind \"%s\": its argv needs an entry", f->kind);
		if (!(t->argv[i] = strdup(strcmp(a, "@entry") == 0 ? f->entry : a)))
			return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	if (hold && !(t->hold = strdup(json_string_value(hold))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	return 0;
}

void jig_scope_name(char *out, size_t cap, const char *prefix, const char *name, int keep)
{
	snprintf(out, cap, "%s%.*s", prefix, keep, name);
	for (char *c = out; *c; c++)
		if (*c == '_')
			*c = '-';
}

int jig_catalog_compose(const struct jig_catalog *cat, const struct jig_scope_facts *f, struct jig_scope_template *t,
			struct jig_error *e)
{
	memset(t, 0, sizeof(*t));
	json_t *kind = json_object_get(json_object_get(cat->doc, "kinds"), f->kind);
	if (!kind)
		return jig_err(e, JIG_E_INTEGRITY, "capability catalog: no scope kind \"%s\"", f->kind);
	struct compose c = {.kind = f->kind, .doc = base_doc(f->name), .owners = json_object()};
	int r = c.doc && c.owners ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(kind, "fragments"), i, v) {
		const char *frag = json_string_value(v);
		if (!r)
			r = add_fragment(&c, f, frag, json_object_get(json_object_get(cat->doc, "fragments"), frag), e);
	}
	if (!r && f->n_egress)
		r = add_egress(&c, f, e);
	json_t *lim = json_object_get(c.doc, "limits");
	if (!r && !lim)
		r = jig_err(e, JIG_E_INTEGRITY, "catalog kind \"%s\": no fragment sets its limits", f->kind);
	if (!r && f->wall_ms) {
		if (f->wall_ms > (uint64_t)json_integer_value(json_object_get(lim, "wall_ms")))
			r = jig_err(e, JIG_E_USAGE, "scope %s: a deadline of %llu ms is past the catalog's ceiling", f->name,
				    (unsigned long long)f->wall_ms);
		else {
			json_object_set_new(c.doc, "limits", lim = json_deep_copy(lim));
			json_object_set_new(lim, "wall_ms", json_integer((json_int_t)f->wall_ms));
		}
	}
	char *txt = r ? NULL : json_dumps(c.doc, JSON_COMPACT);
	struct jig_error inner = {0};
	if (!r && (!txt || jig_scope_policy_parse(txt, strlen(txt), f->home, JIG_POLICY_SLOTS, &t->policy, &inner) < 0))
		r = jig_err(e, inner.code ? inner.code : JIG_E_INTERNAL, "catalog kind \"%s\": %s", f->kind,
			    txt ? inner.msg : "out of memory");
	free(txt);
	json_decref(c.doc);
	json_decref(c.owners);
	if (!r)
		r = kind_program(kind, f, t, e);
	if (r)
		jig_scope_template_free(t);
	return r;
}

void jig_scope_template_free(struct jig_scope_template *t)
{
	if (t->policy.doc || t->policy.canonical)
		jig_scope_policy_free(&t->policy);
	for (size_t i = 0; t->argv && t->argv[i]; i++)
		free(t->argv[i]);
	free(t->argv);
	free(t->hold);
	memset(t, 0, sizeof(*t));
}
