/* jig init: see scaffold.h. */
#include "flow/scaffold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/project.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/limits.h"

#define SHIPPED_MAX (1u << 20) /* bytes of one shipped file */
#define META_MAX (64u << 10)   /* jig.json, as the project's reader caps it */

/* What the snapshot supplies: the Flow's files, and the project's editor
 * files (written where the project has none yet). */
static const struct {
	const char *from, *to;
	bool flow;
} shipped[] = {
	{"libexec/init/main.ts", "main.ts", true},
	{"libexec/init/sample.txt", "sample.txt", true},
	{"libexec/runtime/jig.d.ts", "jig.d.ts", false},
	{"libexec/schemas/jig.schema.json", "jig.schema.json", false},
	{"libexec/schemas/flow.schema.json", "flow.schema.json", false},
	{"libexec/init/tsconfig.json", "tsconfig.json", false},
};
#define N_SHIPPED (sizeof(shipped) / sizeof(shipped[0]))
#define TEMPLATE_FLOW "libexec/init/flow.json"

struct work {
	int dirfd;
	bool made_dir;	       /* this call created the project directory */
	bool made_flow;	       /* ... and the Flow's directory */
	char *data[N_SHIPPED]; /* the shipped files' bytes */
	size_t len[N_SHIPPED];
	char *flow_json; /* the template's flow.json, named */
	json_t *project; /* jig.json as it will be */
};

/* A listed file of the snapshot, read once and checked against the
 * manifest's SHA-256 (the bytes written are the bytes hashed). */
static int read_shipped(const struct jig_snapshot *s, const char *path, char **out, size_t *len, struct jig_error *e)
{
	const struct jig_manifest_file *f = NULL;
	for (size_t i = 0; i < s->m.nfiles && !f; i++)
		if (strcmp(s->m.files[i].path, path) == 0)
			f = &s->m.files[i];
	jig_autoclose int fd = f ? jig_snapshot_open_file(s, f, e) : -1;
	if (!f)
		return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; reinstall jig", s->m.id, path);
	if (fd < 0)
		return fd;
	int r = jig_read_fd(fd, SHIPPED_MAX, path, out, len, NULL, e);
	unsigned char got[JIG_SHA256_LEN];
	if (!r && (jig_sha256(*out, *len, got) < 0 || *len != f->size || memcmp(got, f->sha256, sizeof(got)) != 0))
		r = jig_err(e, JIG_E_INTEGRITY, "%s/%s: not the bytes the snapshot's manifest lists; reinstall the snapshot",
			    s->dirpath, path);
	return r;
}

/* doc as the files people edit are written: indented, in order, a newline at the end. */
static char *dump_line(json_t *doc)
{
	char *t = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	size_t n = t ? strlen(t) : 0;
	char *l = t ? realloc(t, n + 2) : NULL;
	if (!l) {
		free(t);
		return NULL;
	}
	l[n] = '\n';
	l[n + 1] = '\0';
	return l;
}

/* The template's flow.json with the Flow's name; its first input names the
 * sample file in the next steps. */
static int name_flow(const struct jig_snapshot *s, struct jig_init *in, struct work *w, struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	json_t *doc = NULL;
	int r = read_shipped(s, TEMPLATE_FLOW, &buf, &len, e);
	if (!r)
		r = jig_json_parse_object(buf, len, TEMPLATE_FLOW, &doc, e);
	if (r)
		return r;
	json_object_set_new(doc, "name", json_string(in->flow));
	const char *input = json_string_value(json_array_get(json_object_get(doc, "inputs"), 0));
	snprintf(in->input, sizeof(in->input), "%s", input ? input : "");
	snprintf(in->sample, sizeof(in->sample), "%s/sample.txt", in->flow);
	w->flow_json = dump_line(doc);
	json_decref(doc);
	return w->flow_json ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

/* The directory: opened, or created when absent (its parent must exist). */
static int open_dir(struct jig_init *in, struct work *w, struct jig_error *e)
{
	w->dirfd = open(in->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->dirfd < 0 && errno == ENOENT) {
		if (mkdir(in->dir, 0777) < 0)
			return jig_err(e, JIG_E_USAGE, "%s: cannot create: %s", in->dir, strerror(errno));
		w->made_dir = true;
		w->dirfd = open(in->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (w->dirfd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", in->dir,
			       errno == ELOOP || errno == ENOTDIR ? "is not a directory (or is a symbolic link)" : strerror(errno));
	return 0;
}

static bool dir_empty(int dirfd)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool empty = true;
	struct dirent *de;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* An existing project's jig.json, for --flow: its format and flows map
 * only (jig review checks the rest); the Flow's name and directory must be
 * new. */
static int read_project(struct jig_init *in, struct work *w, struct jig_error *e)
{
	char what[300];
	snprintf(what, sizeof(what), "%.200s/%s", in->dir, JIG_PROJECT_FILE);
	jig_autofree char *buf = NULL;
	size_t len;
	int r = jig_json_usage(jig_read_file_at(w->dirfd, JIG_PROJECT_FILE, META_MAX, what, &buf, &len, NULL, e), e);
	if (!r)
		r = jig_json_usage(jig_json_parse_object(buf, len, what, &w->project, e), e);
	if (r)
		return r;
	json_t *flows = json_object_get(w->project, "flows");
	const char *format = json_string_value(json_object_get(w->project, "format"));
	if (!format || strcmp(format, JIG_PROJECT_FORMAT) != 0 || !json_is_object(flows))
		return jig_err(e, JIG_E_USAGE, "%s: not a jig-project/1 file with \"flows\"; nothing written", what);
	if (json_object_get(flows, in->flow))
		return jig_err(e, JIG_E_USAGE, "%s: Flow %s is already in the project; nothing written", what, in->flow);
	if (json_object_size(flows) >= JIG_MAX_FLOWS)
		return jig_err(e, JIG_E_USAGE, "%s: the project has %d Flows, the most it may; nothing written", what, JIG_MAX_FLOWS);
	struct stat st;
	if (fstatat(w->dirfd, in->flow, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return jig_err(e, JIG_E_USAGE, "%s/%s exists; jig init replaces nothing (choose another name); nothing written", in->dir,
			       in->flow);
	json_object_set_new(flows, in->flow, json_string(in->flow));
	return 0;
}

/* A new project's jig.json: the one Flow in its own directory. */
static int new_project(struct jig_init *in, struct work *w, struct jig_error *e)
{
	w->project = json_pack("{s:s,s:s,s:{s:s}}", "$schema", "./jig.schema.json", "format", JIG_PROJECT_FORMAT, "flows", in->flow,
			       in->flow);
	return w->project ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

/* Writes one file (never replacing one) and notes it as written. */
static int put(struct jig_init *in, struct work *w, const char *rel, const char *data, size_t len, struct jig_error *e)
{
	int r = jig_write_file_at(w->dirfd, rel, data, len, 0644, e);
	if (!r && json_array_append_new(in->written, json_string(rel)) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (r)
		jig_err_prefix(e, e->code, "%s: ", in->dir);
	return r;
}

/* jig.json last: written fresh, or (--flow) replaced by rename from a
 * private temporary file, so a reader sees the old or the new file. */
static int put_project(struct jig_init *in, struct work *w, struct jig_error *e)
{
	jig_autofree char *line = dump_line(w->project);
	if (!line)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	size_t len = strlen(line);
	if (!in->added)
		return put(in, w, JIG_PROJECT_FILE, line, len, e);
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".jig.json.init-%d", (int)getpid());
	int r = jig_write_file_at(w->dirfd, tmp, line, len, 0644, e);
	if (!r && renameat(w->dirfd, tmp, w->dirfd, JIG_PROJECT_FILE) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s/%s: %s", in->dir, JIG_PROJECT_FILE, strerror(errno));
	if (r)
		unlinkat(w->dirfd, tmp, 0);
	return r;
}

/* Undoes what this call wrote (a failure half-way): nothing it did not
 * create is touched. */
static void undo(struct jig_init *in, struct work *w)
{
	size_t i;
	json_t *v;
	json_array_foreach(in->written, i, v)
		unlinkat(w->dirfd, json_string_value(v), 0);
	if (w->made_flow)
		unlinkat(w->dirfd, in->flow, AT_REMOVEDIR);
	if (w->made_dir)
		rmdir(in->dir);
	json_array_clear(in->written);
}

/* A Flow added to a project (--flow) is a skeleton, not a second copy of
 * the first Flow's word count (issue 46): no input, one output, a main.ts
 * that names it. The first Flow of a new project is the template. */
static int skeleton(struct jig_init *in, struct work *w, struct jig_error *e)
{
	json_t *doc = json_pack("{s:s,s:s,s:s,s:s,s:[],s:[s]}", "$schema", "../flow.schema.json", "format", JIG_FLOW_FORMAT, "name",
				in->flow, "entry", "main.ts", "inputs", "outputs", "result.md");
	char *text = doc ? dump_line(doc) : NULL;
	json_decref(doc);
	free(w->flow_json);
	w->flow_json = text;
	in->input[0] = '\0';
	in->sample[0] = '\0';
	char code[1024];
	int n = snprintf(code, sizeof(code),
			 "// Flow %s, added by `jig init --flow %s`. flow.json says what it may read\n"
			 "// (\"inputs\", attached with jig run --input NAME=PATH) and publish (\"outputs\");\n"
			 "// the types come from ../jig.d.ts. `jig review`, then `jig run %s --output %s-out`.\n"
			 "import type { Jig } from \"../jig\";\n\n"
			 "export default function (jig: Jig) {\n"
			 "  jig.write(\"result.md\", \"# %s\\n\\nWhat this Flow makes goes here.\\n\");\n"
			 "}\n",
			 in->flow, in->flow, in->flow, in->flow, in->flow);
	char *m = text && n > 0 && (size_t)n < sizeof(code) ? strdup(code) : NULL;
	if (!m)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	free(w->data[0]); /* shipped[0] is main.ts */
	w->data[0] = m;
	w->len[0] = (size_t)n;
	return 0;
}

static int write_all(struct jig_init *in, struct work *w, struct jig_error *e)
{
	if (in->added) {
		int r = skeleton(in, w, e);
		if (r)
			return r;
	}
	if (mkdirat(w->dirfd, in->flow, 0777) < 0)
		return jig_err(e, JIG_E_USAGE, "%s/%s: cannot create: %s; nothing written", in->dir, in->flow, strerror(errno));
	w->made_flow = true;
	char rel[200];
	snprintf(rel, sizeof(rel), "%s/%s", in->flow, JIG_FLOW_FILE);
	int r = put(in, w, rel, w->flow_json, strlen(w->flow_json), e);
	for (size_t i = 0; !r && i < N_SHIPPED; i++) {
		snprintf(rel, sizeof(rel), "%s%s%s", shipped[i].flow ? in->flow : "", shipped[i].flow ? "/" : "", shipped[i].to);
		struct stat st;
		if (!shipped[i].flow && fstatat(w->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue; /* the project's own (--flow): kept */
		if (in->added && strcmp(shipped[i].to, "sample.txt") == 0)
			continue; /* the skeleton reads no input */
		r = put(in, w, rel, w->data[i], w->len[i], e);
	}
	return r ? r : put_project(in, w, e);
}

int jig_project_init(const struct jig_snapshot *s, struct jig_init *in, struct jig_error *e)
{
	struct work w = {.dirfd = -1};
	in->added = false;
	if (!(in->written = json_array()))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (!jig_valid_name(in->flow))
		return jig_err(e, JIG_E_USAGE, "init: Flow name \"%.64s\" must be [a-z0-9][a-z0-9_-]* (at most 64 characters)", in->flow);
	int r = name_flow(s, in, &w, e);
	for (size_t i = 0; !r && i < N_SHIPPED; i++)
		r = read_shipped(s, shipped[i].from, &w.data[i], &w.len[i], e);
	if (!r)
		r = open_dir(in, &w, e);
	struct stat st;
	bool project = !r && fstatat(w.dirfd, JIG_PROJECT_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!r && project && !in->add)
		r = jig_err(e, JIG_E_USAGE, "%s already holds a jig project (jig.json): jig init --flow NAME adds a Flow to it; nothing written",
			    in->dir);
	else if (!r && !project && !dir_empty(w.dirfd))
		r = jig_err(e, JIG_E_USAGE,
			    "%s is not empty: jig init makes a new project only in an empty or new directory (and --flow NAME adds a Flow to a project); nothing written",
			    in->dir);
	in->added = project;
	if (!r)
		r = project ? read_project(in, &w, e) : new_project(in, &w, e);
	if (!r && (r = write_all(in, &w, e)))
		undo(in, &w);
	else if (r && w.made_dir)
		rmdir(in->dir);
	for (size_t i = 0; i < N_SHIPPED; i++)
		free(w.data[i]);
	free(w.flow_json);
	json_decref(w.project);
	if (w.dirfd >= 0)
		close(w.dirfd);
	return r;
}
