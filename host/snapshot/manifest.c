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
	for (size_t i = 0; i < m->nmodules; i++) {
		free(m->modules[i].name);
		free(m->modules[i].platform);
	}
	free(m->files);
	free(m->paths);
	free(m->modules);
	free(m->id);
	free(m->platform);
	memset(m, 0, sizeof(*m));
}

/* The file list: one line per file, "<sha256> <size> <path>\n", sorted by
 * path in byte order (so each path is listed once), 64 lowercase hex
 * digits, a decimal size without leading zeros. One string, read in one
 * pass: a 10,000-file snapshot opens in about a millisecond
 * (docs/distributors.md has the format). */
static int parse_files(struct jig_manifest *m, const char *txt, size_t len, struct jig_error *e)
{
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += txt[i] == '\n';
	if (memchr(txt, '\0', len))
		return jig_err(e, JIG_E_INTEGRITY, "manifest files: contains a NUL byte");
	if (len && txt[len - 1] != '\n')
		return jig_err(e, JIG_E_INTEGRITY, "manifest files: the last line does not end in a newline");
	if (lines > JIG_MANIFEST_MAX_FILES)
		return jig_err(e, JIG_E_INTEGRITY, "manifest files: more than %u files", JIG_MANIFEST_MAX_FILES);
	m->files = calloc(lines + 1, sizeof(*m->files));
	m->paths = malloc(len + 1);
	if (!m->files || !m->paths)
		return jig_err(e, JIG_E_INTERNAL, "manifest: out of memory");
	memcpy(m->paths, txt, len);
	m->paths[len] = '\0';
	char *p = m->paths, *end = m->paths + len;
	while (p < end) {
		size_t k = m->nfiles;
		struct jig_manifest_file *mf = &m->files[k];
		char *nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		char *line = p;
		p = nl + 1;
		/* The digest, ended where its separator is (a line that is
		 * shorter has no separator there). */
		if (strnlen(line, 2 * JIG_SHA256_LEN + 1) <= 2 * JIG_SHA256_LEN || line[2 * JIG_SHA256_LEN] != ' ')
			return jig_err(e, JIG_E_INTEGRITY, "manifest files line %zu: expected \"<sha256> <size> <path>\"", k + 1);
		line[2 * JIG_SHA256_LEN] = '\0';
		if (jig_unhex(line, mf->sha256, JIG_SHA256_LEN) < 0)
			return jig_err(e, JIG_E_INTEGRITY,
				       "manifest files line %zu: does not start with 64 lowercase hex digits", k + 1);
		const char *q = line + 2 * JIG_SHA256_LEN + 1;
		if (*q < '0' || *q > '9' || (*q == '0' && q[1] != ' '))
			return jig_err(e, JIG_E_INTEGRITY, "manifest files line %zu: expected \"<sha256> <size> <path>\"", k + 1);
		uint64_t size = 0;
		for (; *q >= '0' && *q <= '9'; q++) {
			size = size * 10 + (uint64_t)(*q - '0');
			if (size > JIG_FILE_MAX_BYTES)
				return jig_err(e, JIG_E_INTEGRITY, "manifest files line %zu: size above %llu bytes", k + 1,
					       (unsigned long long)JIG_FILE_MAX_BYTES);
		}
		if (*q++ != ' ')
			return jig_err(e, JIG_E_INTEGRITY, "manifest files line %zu: expected \"<sha256> <size> <path>\"", k + 1);
		if (!jig_path_is_normal_relative(q))
			return jig_err(e, JIG_E_INTEGRITY,
				       "manifest files line %zu: path \"%s\" is not a normalised relative path (no '..', '.', '/' prefix or odd characters)",
				       k + 1, q);
		if (jig_manifest_is_reserved(q))
			return jig_err(e, JIG_E_INTEGRITY, "manifest files line %zu: path \"%s\" is reserved", k + 1, q);
		if (k > 0) {
			const char *prev = m->files[k - 1].path;
			int c = strcmp(prev, q);
			if (c >= 0)
				return jig_err(e, JIG_E_INTEGRITY, c == 0 ? "manifest: file \"%s\" is listed twice"
									 : "manifest: file \"%s\" is out of order (paths are sorted)",
					       q);
			/* A file must not also be a directory on another entry's path. */
			size_t n = strlen(prev);
			if (strncmp(prev, q, n) == 0 && q[n] == '/')
				return jig_err(e, JIG_E_INTEGRITY, "manifest: \"%s\" is listed both as a file and as a directory", prev);
		}
		mf->path = (char *)q;
		mf->size = size;
		m->nfiles++;
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

int jig_manifest_is_reserved(const char *rel)
{
	return strcmp(rel, "manifest.json") == 0 || strcmp(rel, "manifest.sig") == 0 ||
	       strcmp(rel, "manifest.files") == 0;
}

int jig_manifest_parse(struct jig_manifest *m, const char *buf, size_t len, const char *files,
		       size_t flen, struct jig_error *e)
{
	static const char *const keys[] = {"format",	   "id",	 "sequence", "platform",
					   "files_sha256", "files_size", "modules",  NULL};
	memset(m, 0, sizeof(*m));
	if (len > JIG_MANIFEST_MAX_BYTES)
		return jig_err(e, JIG_E_INTEGRITY, "manifest: more than %u bytes", JIG_MANIFEST_MAX_BYTES);
	json_t *root = NULL;
	const char *format, *id, *platform;
	json_t *modules;
	const char *files_hex;
	uint64_t files_size;
	unsigned char want[JIG_SHA256_LEN], got[JIG_SHA256_LEN];
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
	    (r = jig_json_get_string(root, "files_sha256", "manifest", &files_hex, e)) < 0 ||
	    (r = jig_json_get_uint(root, "files_size", "manifest", 0, JIG_MANIFEST_MAX_BYTES, &files_size, e)) < 0 ||
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
	/* The list is believed only as the signed manifest pins it. */
	if (strlen(files_hex) != 2 * JIG_SHA256_LEN || jig_unhex(files_hex, want, JIG_SHA256_LEN) < 0) {
		r = jig_err(e, JIG_E_INTEGRITY, "manifest: files_sha256 is not 64 hex digits");
		goto out;
	}
	if (files_size != flen) {
		r = jig_err(e, JIG_E_INTEGRITY, "manifest.files: %zu bytes, the manifest lists %llu", flen,
			    (unsigned long long)files_size);
		goto out;
	}
	jig_sha256(files, flen, got);
	if (memcmp(want, got, JIG_SHA256_LEN) != 0) {
		r = jig_err(e, JIG_E_INTEGRITY, "manifest.files: sha256 does not match the manifest's files_sha256");
		goto out;
	}
	if ((r = parse_files(m, files, flen, e)) < 0 || (r = parse_modules(m, modules, e)) < 0)
		goto out;
	r = 0;
out:
	json_decref(root);
	if (r < 0)
		jig_manifest_free(m);
	return r;
}
