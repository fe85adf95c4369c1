#include "manifest.h"

#include <stdlib.h>
#include <string.h>

#include <jig/module.h>

#include "../util/fileio.h"
#include "../util/json.h"

const char *jig_host_platform(void)
{
#if defined(__linux__) && defined(__x86_64__)
	return "linux-x86_64";
#elif defined(__linux__) && defined(__aarch64__)
	return "linux-aarch64";
#elif defined(__APPLE__) && defined(__aarch64__)
	return "darwin-arm64";
#else
	return "unknown";
#endif
}

static const char *const kind_names[] = {
	[JIG_KIND_SANDBOX] = "sandbox",
	[JIG_KIND_HTTP] = "http",
	[JIG_KIND_ACP] = "acp",
	[JIG_KIND_DISPLAY] = "display",
};

const char *jig_kind_name(uint32_t kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

int jig_kind_parse(const char *s, uint32_t *out)
{
	for (uint32_t k = 1; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
		if (kind_names[k] && strcmp(kind_names[k], s) == 0) {
			*out = k;
			return 0;
		}
	return -1;
}

int jig_name_is_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || s[0] == '-' || s[0] == '.')
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '.' || *p == '_'))
			return 0;
	return 1;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct jig_manifest_file *)a)->path,
		      ((const struct jig_manifest_file *)b)->path);
}

const struct jig_manifest_file *jig_manifest_find_file(const struct jig_manifest *m,
							const char *path)
{
	struct jig_manifest_file key = {.path = (char *)path};
	return bsearch(&key, m->files, m->nfiles, sizeof(key), cmp_file);
}

const struct jig_manifest_module *jig_manifest_find_module(const struct jig_manifest *m,
							    const char *name)
{
	for (size_t i = 0; i < m->nmodules; i++)
		if (strcmp(m->modules[i].name, name) == 0)
			return &m->modules[i];
	return NULL;
}

void jig_manifest_free(struct jig_manifest *m)
{
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (size_t i = 0; i < m->nmodules; i++) {
		free(m->modules[i].name);
		free(m->modules[i].platform);
	}
	free(m->files);
	free(m->modules);
	free(m->id);
	free(m->platform);
	memset(m, 0, sizeof(*m));
}

static int parse_files(struct jig_manifest *m, json_t *arr, struct jig_error *e)
{
	static const char *const keys[] = {"path", "size", "sha256", NULL};
	m->files = calloc(json_array_size(arr) + 1, sizeof(*m->files));
	if (!m->files)
		return jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
	size_t i;
	json_t *f;
	json_array_foreach(arr, i, f) {
		char what[64];
		snprintf(what, sizeof(what), "manifest files[%zu]", i);
		const char *path, *sha;
		uint64_t size;
		int r;
		if (!json_is_object(f))
			return jig_err(e, JIG_E_INTEGRITY, "%s: expected an object", what);
		if ((r = jig_json_only_keys(f, keys, what, e)) < 0 ||
		    (r = jig_json_get_string(f, "path", what, &path, e)) < 0 ||
		    (r = jig_json_get_uint(f, "size", what, 0, JIG_FILE_MAX_BYTES, &size, e)) < 0 ||
		    (r = jig_json_get_string(f, "sha256", what, &sha, e)) < 0)
			return r;
		if (!jig_path_is_normal_relative(path))
			return jig_err(e, JIG_E_INTEGRITY,
				       "%s: path \"%s\" is not a normalised relative path (no '..', '.', '/' prefix or odd characters)",
				       what, path);
		if (strcmp(path, "manifest.json") == 0 || strcmp(path, "manifest.sig") == 0)
			return jig_err(e, JIG_E_INTEGRITY, "%s: path \"%s\" is reserved", what, path);
		struct jig_manifest_file *mf = &m->files[m->nfiles];
		if (jig_unhex(sha, mf->sha256, JIG_SHA256_LEN) < 0)
			return jig_err(e, JIG_E_INTEGRITY,
				       "%s: sha256 of \"%s\" is not 64 lowercase hex digits", what, path);
		mf->size = size;
		if (!(mf->path = strdup(path)))
			return jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
		m->nfiles++;
	}
	qsort(m->files, m->nfiles, sizeof(*m->files), cmp_file);
	for (size_t k = 1; k < m->nfiles; k++)
		if (strcmp(m->files[k - 1].path, m->files[k].path) == 0)
			return jig_err(e, JIG_E_INTEGRITY, "manifest: file \"%s\" is listed twice",
				       m->files[k].path);
	/* A file must not also be a directory on another entry's path. */
	for (size_t k = 1; k < m->nfiles; k++) {
		size_t n = strlen(m->files[k - 1].path);
		if (strncmp(m->files[k - 1].path, m->files[k].path, n) == 0 &&
		    m->files[k].path[n] == '/')
			return jig_err(e, JIG_E_INTEGRITY,
				       "manifest: \"%s\" is listed both as a file and as a directory",
				       m->files[k - 1].path);
	}
	return 0;
}

static int parse_modules(struct jig_manifest *m, json_t *arr, struct jig_error *e)
{
	static const char *const keys[] = {"name",	"kind",	    "path",
					   "abi_major", "abi_minor", "platform", NULL};
	m->modules = calloc(json_array_size(arr) + 1, sizeof(*m->modules));
	if (!m->modules)
		return jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		char what[64];
		snprintf(what, sizeof(what), "manifest modules[%zu]", i);
		const char *name, *kind, *path, *platform;
		uint64_t major, minor;
		int r;
		if (!json_is_object(o))
			return jig_err(e, JIG_E_INTEGRITY, "%s: expected an object", what);
		if ((r = jig_json_only_keys(o, keys, what, e)) < 0 ||
		    (r = jig_json_get_string(o, "name", what, &name, e)) < 0 ||
		    (r = jig_json_get_string(o, "kind", what, &kind, e)) < 0 ||
		    (r = jig_json_get_string(o, "path", what, &path, e)) < 0 ||
		    (r = jig_json_get_uint(o, "abi_major", what, 1, UINT16_MAX, &major, e)) < 0 ||
		    (r = jig_json_get_uint(o, "abi_minor", what, 0, UINT16_MAX, &minor, e)) < 0 ||
		    (r = jig_json_get_string(o, "platform", what, &platform, e)) < 0)
			return r;
		struct jig_manifest_module *mm = &m->modules[m->nmodules];
		if (!jig_name_is_valid(name))
			return jig_err(e, JIG_E_INTEGRITY, "%s: invalid module name \"%s\"", what, name);
		if (jig_manifest_find_module(m, name))
			return jig_err(e, JIG_E_INTEGRITY, "manifest: module \"%s\" is listed twice", name);
		if (jig_kind_parse(kind, &mm->kind) < 0)
			return jig_err(e, JIG_E_INTEGRITY,
				       "%s: module %s has unknown kind \"%s\" (sandbox, http, acp, display)",
				       what, name, kind);
		if (strncmp(path, "modules/", 8) != 0 || !jig_path_is_normal_relative(path) ||
		    strchr(path + 8, '/'))
			return jig_err(e, JIG_E_INTEGRITY,
				       "%s: module %s path \"%s\" must be a plain file directly under modules/",
				       what, name, path);
		if (!(mm->file = jig_manifest_find_file(m, path)))
			return jig_err(e, JIG_E_INTEGRITY,
				       "%s: module %s path \"%s\" is not among the manifest's files", what,
				       name, path);
		for (size_t k = 0; k < m->nmodules; k++)
			if (m->modules[k].file == mm->file)
				return jig_err(e, JIG_E_INTEGRITY,
					       "manifest: modules %s and %s share one file", m->modules[k].name, name);
		mm->abi_major = (uint16_t)major;
		mm->abi_minor = (uint16_t)minor;
		if (!(mm->name = strdup(name)) || !(mm->platform = strdup(platform)))
			return jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
		m->nmodules++;
	}
	return 0;
}

int jig_manifest_parse(struct jig_manifest *m, const char *buf, size_t len, struct jig_error *e)
{
	static const char *const keys[] = {"format", "id", "sequence", "platform",
					   "files",  "modules", NULL};
	memset(m, 0, sizeof(*m));
	if (len > JIG_MANIFEST_MAX_BYTES)
		return jig_err(e, JIG_E_INTEGRITY, "manifest: more than %u bytes", JIG_MANIFEST_MAX_BYTES);
	json_t *root = NULL;
	const char *format, *id, *platform;
	json_t *files, *modules;
	int r;
	if ((r = jig_json_parse_object(buf, len, "manifest", &root, e)) < 0)
		return r;
	if ((r = jig_json_only_keys(root, keys, "manifest", e)) < 0 ||
	    (r = jig_json_get_string(root, "format", "manifest", &format, e)) < 0)
		goto out;
	if (strcmp(format, JIG_MANIFEST_FORMAT) != 0) {
		r = jig_err(e, JIG_E_INTEGRITY, "manifest: format \"%s\" is not %s", format,
			    JIG_MANIFEST_FORMAT);
		goto out;
	}
	if ((r = jig_json_get_string(root, "id", "manifest", &id, e)) < 0 ||
	    (r = jig_json_get_uint(root, "sequence", "manifest", 1, JIG_SEQUENCE_MAX, &m->sequence, e)) < 0 ||
	    (r = jig_json_get_string(root, "platform", "manifest", &platform, e)) < 0 ||
	    (r = jig_json_get_array(root, "files", "manifest", JIG_MANIFEST_MAX_FILES, &files, e)) < 0 ||
	    (r = jig_json_get_array(root, "modules", "manifest", JIG_MANIFEST_MAX_MODULES, &modules, e)) < 0)
		goto out;
	if (!jig_name_is_valid(id)) {
		r = jig_err(e, JIG_E_INTEGRITY, "manifest: invalid snapshot id \"%s\"", id);
		goto out;
	}
	if (!(m->id = strdup(id)) || !(m->platform = strdup(platform))) {
		r = jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
		goto out;
	}
	if ((r = parse_files(m, files, e)) < 0 || (r = parse_modules(m, modules, e)) < 0)
		goto out;
	r = 0;
out:
	json_decref(root);
	if (r < 0)
		jig_manifest_free(m);
	return r;
}
