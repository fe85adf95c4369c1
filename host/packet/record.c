/* The packet format jig-run-record/1: written by a Run, read back and
 * checked by jig inspect, shown inert. One module for both sides. */
#include "packet/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/tree.h"
#include "util/limits.h"
#include "sandbox/door.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

/* The record's facts around its termination t (taken, even on failure). */
static json_t *record_of(const struct jig_record_facts *f, json_t *t)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:o,s:O,s:O,s:O}", "format", JIG_RECORD_FORMAT, "status", f->status,
			 "error", f->why, "flow", f->flow, "plan_sha256", f->plan_sha256, "package_sha256", f->package_sha256,
			 "timeout_ms", (json_int_t)f->timeout_ms, "started_ms", (json_int_t)f->started_ms, "termination", t,
			 "inputs", f->inputs, "outputs", f->outputs, "logs", f->logs);
}

json_t *jig_record_new(const struct jig_record_facts *f, const struct jig_scope_result *res)
{
	/* A stop signal's fencing is a cancellation, not the scope's failure. */
	const char *outcome = res->interrupted_by ? "cancelled" : jig_scope_outcome_name(res->outcome);
	json_t *t = json_pack("{s:s,s:i,s:i,s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:I}", "outcome", outcome,
			      "exit_status", res->exit_status, "signal", res->signal, "core_dumped", res->core_dumped != 0, "fenced",
			      res->fenced != 0, "cleanup_confirmed", res->cleanup_confirmed != 0, "oom_kills", (json_int_t)res->oom_kills,
			      "pids_max_hits", (json_int_t)res->pids_max_hits, "memory_peak_bytes", (json_int_t)res->memory_peak_bytes,
			      "cpu_usec", (json_int_t)res->cpu_usec, "wall_ms", (json_int_t)res->wall_ms);
	/* ABI 1.4: the launcher's report that the payload started (null: the
	 * module does not say). */
	json_object_set_new(t, "payload_started", jig_scope_payload_started_json(res));
	return record_of(f, t);
}

json_t *jig_record_lost(const struct jig_record_facts *f, int sig)
{
	return record_of(f, json_pack("{s:s,s:i,s:i,s:b,s:b,s:b}", "outcome", "coordinator_lost", "exit_status", 0, "signal", sig,
				      "core_dumped", 0, "fenced", 1, "cleanup_confirmed", 1));
}

#define RECORD_FLAGS (JSON_INDENT(2) | JSON_SORT_KEYS)

/* from's key, a string kept to at most 64 bytes (cut on a UTF-8
 * boundary) or an integer, copied to to. */
static void short_copy(json_t *to, json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);
	const char *s = json_string_value(v);
	if (s)
		json_object_set_new(to, key, json_stringn(s, jig_text_utf8_prefix(s, json_string_length(v), 64)));
	else if (json_is_integer(v))
		json_object_set(to, key, v);
}

json_t *jig_record_effect_stub(json_t *ev)
{
	json_t *s = json_object();
	static const char *const keys[] = {"effect", "route", "outcome", "save"};
	for (size_t k = 0; s && k < sizeof(keys) / sizeof(keys[0]); k++)
		short_copy(s, ev, keys[k]);
	return s;
}

/* One cut of jig_record_text on obj and, recursively, its children. */
static void cut_step(json_t *obj, int step)
{
	json_t *v;
	size_t i;
	if (step == 0 && json_array_size(json_object_get(obj, "logs"))) {
		json_object_set_new(obj, "logs_removed_for_size", json_integer((json_int_t)json_array_size(json_object_get(obj, "logs"))));
		json_object_set_new(obj, "logs", json_array());
	}
	if (step == 1 && json_is_array(json_object_get(obj, "effects"))) {
		json_t *stubs = json_array();
		json_array_foreach(json_object_get(obj, "effects"), i, v)
			json_array_append_new(stubs, jig_record_effect_stub(v));
		json_object_set_new(obj, "effects", stubs);
	}
	json_t *kids = json_object_get(obj, "children");
	json_array_foreach(kids, i, v) {
		if (step == 2) {
			json_t *s = json_object();
			static const char *const keys[] = {"id", "binding", "flow", "level", "status"};
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				short_copy(s, v, keys[k]);
			json_object_set(s, "children", json_object_get(v, "children"));
			json_array_set_new(kids, i, s);
			v = s;
		}
		cut_step(v, step);
	}
}

char *jig_record_text(json_t *rec, size_t cap, bool *cut)
{
	*cut = false;
	size_t n = json_dumpb(rec, NULL, 0, RECORD_FLAGS);
	if (n > cap) {
		static const char *const what[] = {"its logs", "its effects' evidence but kind, route and outcome",
						   "its children's details but binding, flow and status", "the scope's policy"};
		char was[360], done[200] = "", why[900];
		const char *status = json_string_value(json_object_get(rec, "status")), *error = json_string_value(json_object_get(rec, "error"));
		snprintf(was, sizeof(was), "%.20s%s%.300s", status ? status : "?", error && error[0] ? ": " : "", error ? error : "");
		size_t size = n;
		*cut = true;
		for (int step = 0; step < 4 && n > cap; step++) {
			if (step < 3)
				cut_step(rec, step);
			else
				json_object_del(json_object_get(rec, "scope"), "policy");
			size_t l = strlen(done);
			snprintf(done + l, sizeof(done) - l, "%s%s", step ? ", " : "", what[step]);
			snprintf(why, sizeof(why), "the record would have been %zu bytes, over the %zu a packet's record may hold; cut to fit: %s; the Run was %s",
				 size, cap, done, was);
			json_object_set_new(rec, "status", json_string("failed"));
			json_object_set_new(rec, "error", json_string(why));
			n = json_dumpb(rec, NULL, 0, RECORD_FLAGS);
		}
	}
	char *txt = n && n <= cap ? malloc(n + 1) : NULL;
	if (txt && json_dumpb(rec, txt, n, RECORD_FLAGS) != n) {
		free(txt);
		txt = NULL;
	}
	if (txt)
		txt[n] = '\0';
	return txt;
}

int jig_record_load(int pfd, const char *packet, json_t **rec, struct jig_error *e)
{
	*rec = NULL;
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	int r = jig_read_file_at(pfd, "record.json", JIG_RECORD_MAX_BYTES, "record.json", &buf, &len, &st, e);
	if (!r)
		r = jig_json_parse_object(buf, len, "record.json", rec, e);
	const char *format = *rec ? json_string_value(json_object_get(*rec, "format")) : NULL;
	if (!r && (!format || strcmp(format, JIG_RECORD_FORMAT) != 0))
		r = jig_err(e, JIG_E_INTEGRITY, "%s: not a jig packet (record format)", packet);
	if (!r && !json_is_array(json_object_get(*rec, "outputs")))
		r = jig_err(e, JIG_E_INTEGRITY, "%s: record has no outputs list", packet);
	if (r) {
		json_decref(*rec);
		*rec = NULL;
	}
	return r;
}

/* Bounds of the privacy walk: well past what a publisher writes (256
 * entries, 16 levels), so only a packet edited since is cut short. */
#define PRIVATE_MAX_ENTRIES 1024
#define PRIVATE_MAX_DEPTH 20

static int not_private(const char *rel, mode_t mode, struct jig_error *e)
{
	return jig_err(e, JIG_E_INTEGRITY, "packet: %s is mode %04o, open to others; a packet is owner-only (R-S07): refused",
		       !rel[0] ? "the packet directory" : jig_path_is_normal_relative(rel) ? rel : "an entry", (unsigned)(mode & 07777));
}

static int private_dir(int dfd, const char *prefix, int depth, size_t *seen, struct jig_error *e)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return jig_err(e, JIG_E_INTEGRITY, "packet: %s", strerror(errno));
	}
	rewinddir(d);
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		struct stat st;
		char rel[1024];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", de->d_name);
		if (++*seen > PRIVATE_MAX_ENTRIES || depth > PRIVATE_MAX_DEPTH)
			r = jig_err(e, JIG_E_INTEGRITY, "packet: more than %d entries or %d levels; not a published packet", PRIVATE_MAX_ENTRIES,
				    PRIVATE_MAX_DEPTH);
		else if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(e, JIG_E_INTEGRITY, "packet: %s", strerror(errno));
		else if (st.st_mode & 077)
			r = not_private(rel, st.st_mode, e);
		else if (S_ISDIR(st.st_mode)) {
			jig_autoclose int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? jig_err(e, JIG_E_INTEGRITY, "packet: %s", strerror(errno)) : private_dir(sub, rel, depth + 1, seen, e);
		}
	}
	closedir(d);
	return r;
}

int jig_record_check_private(int pfd, struct jig_error *e)
{
	struct stat st;
	size_t seen = 0;
	if (fstat(pfd, &st) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "packet: %s", strerror(errno));
	return st.st_mode & 077 ? not_private("", st.st_mode, e) : private_dir(pfd, "", 0, &seen, e);
}

int jig_record_verify_files(int pfd, json_t *rec, struct jig_error *e)
{
	json_t *outputs = json_object_get(rec, "outputs");
	jig_autoclose int files = openat(pfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (files < 0)
		return jig_err(e, JIG_E_INTEGRITY, "packet: files/: %s", strerror(errno));
	/* Re-hash what is there with the same bounded walk the publisher used,
	 * into a scratch list (copies go to a private temporary directory). */
	char tmpl[] = "/tmp/jig-inspect-XXXXXX";
	if (!mkdtemp(tmpl))
		return jig_err(e, JIG_E_INTERNAL, "mkdtemp: %s", strerror(errno));
	jig_autoclose int tfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *seen = json_array();
	struct jig_tree_limits l = {.what = "packet file", .max_files = JIG_OUTPUT_MAX_FILES, .max_entries = JIG_OUTPUT_MAX_ENTRIES, .max_bytes = JIG_OUTPUT_MAX_BYTES,
				    .reject_sparse = true};
	struct jig_tree_stats st = {.list = seen};
	int r = tfd < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", tmpl, strerror(errno)) : jig_tree_copy(files, "", tfd, &l, &st, e);
	jig_remove_tree(AT_FDCWD, tmpl);
	if (r) {
		json_decref(seen);
		return jig_err_prefix(e, JIG_E_INTEGRITY, "packet: ");
	}
	if (json_array_size(seen) != json_array_size(outputs))
		r = jig_err(e, JIG_E_INTEGRITY, "packet: files/ holds %zu files, the record lists %zu", json_array_size(seen),
			    json_array_size(outputs));
	for (size_t i = 0; !r && i < json_array_size(outputs); i++) {
		json_t *o = json_array_get(outputs, i);
		const char *path = json_string_value(json_object_get(o, "path"));
		/* The counts agree only if each listed path is listed once: a
		 * path listed twice would let one unlisted file pass. */
		for (size_t k = 0; path && k < i; k++) {
			const char *before = json_string_value(json_object_get(json_array_get(outputs, k), "path"));
			if (before && strcmp(before, path) == 0)
				r = jig_err(e, JIG_E_INTEGRITY, "packet: the record lists %s twice", path);
		}
		if (r)
			break;
		bool found = false;
		for (size_t k = 0; path && k < json_array_size(seen); k++) {
			json_t *s = json_array_get(seen, k);
			if (strcmp(json_string_value(json_object_get(s, "path")), path) == 0) {
				found = json_equal(json_object_get(s, "sha256"), json_object_get(o, "sha256")) &&
					json_equal(json_object_get(s, "size"), json_object_get(o, "size"));
				break;
			}
		}
		if (!found)
			r = jig_err(e, JIG_E_INTEGRITY, "packet: %s is missing or differs from the record", path ? path : "?");
	}
	json_decref(seen);
	return r;
}
