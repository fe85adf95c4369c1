/* What the page may see of a saved packet: a view rebuilt from the record
 * field by field (only known fields of the expected types, every string
 * bounded), and the artifacts as immutable in-memory captures, verified
 * against the record's SHA-256 as they are read. Never a path outside the
 * packet, never the packet's own location. */
#include "display/display.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"

/* A string of the record, cut to JIG_DISPLAY_MAX_STRING at a character. */
json_t *jig_display_str(json_t *v)
{
	if (!json_is_string(v))
		return json_null();
	size_t n = json_string_length(v);
	if (n <= JIG_DISPLAY_MAX_STRING)
		return json_copy(v);
	const char *s = json_string_value(v);
	n = JIG_DISPLAY_MAX_STRING;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return json_stringn(s, n);
}

json_t *jig_display_num(json_t *v)
{
	return json_is_integer(v) || json_is_boolean(v) ? json_copy(v) : json_null();
}

/* Copies obj's listed fields (strings bounded, numbers, booleans). */
json_t *jig_display_pick(json_t *obj, const char *const *keys)
{
	json_t *out = json_object();
	for (size_t i = 0; keys[i]; i++) {
		json_t *v = json_object_get(obj, keys[i]);
		if (v)
			json_object_set_new(out, keys[i], json_is_string(v) ? jig_display_str(v) : jig_display_num(v));
	}
	return out;
}

/* An effect's evidence: every scalar field with a plain name, bounded. */
json_t *jig_display_evidence(json_t *o)
{
	json_t *out = json_object();
	const char *k;
	json_t *v;
	size_t n = 0;
	json_object_foreach(o, k, v) {
		size_t kl = strlen(k);
		if (n == 32 || kl == 0 || kl > 40 || strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != kl)
			continue;
		if (json_is_string(v) || json_is_integer(v) || json_is_boolean(v)) {
			json_object_set_new(out, k, json_is_string(v) ? jig_display_str(v) : jig_display_num(v));
			n++;
		}
	}
	return out;
}

/* A list of the record, each item through fn, at most max of them. */
static json_t *list(json_t *from, size_t max, json_t *(*fn)(json_t *))
{
	json_t *out = json_array(), *v;
	size_t i;
	json_array_foreach(from, i, v)
		if (i < max)
			json_array_append_new(out, fn(v));
	return out;
}

static json_t *file_entry(json_t *o)
{
	static const char *const keys[] = {"path", "size", NULL};
	return jig_display_pick(o, keys);
}

/* One child's node: what a reader needs to follow a branch, its scope's
 * facts for the timeline (when it started, how long it ran, its memory and
 * CPU against its limits), what it made (outputs, effects) and its logs. */
static json_t *child_node(json_t *v)
{
	static const char *const keys[] = {"binding", "flow", "level", "status", "why", "deadline_ms", "cleanup_confirmed",
					   "reservation_released", "scope_policy_sha256", "started_ms", NULL};
	static const char *const term[] = {"outcome", "exit_status", "signal", "wall_ms", "memory_peak_bytes", "cpu_usec",
					   "oom_kills", "pids_max_hits", "payload_started", NULL};
	static const char *const lim[] = {"memory_bytes", "tasks", "cpu_quota_us", "wall_ms", NULL};
	json_t *c = jig_display_pick(v, keys);
	json_t *t = json_object_get(v, "termination");
	if (t) {
		json_object_set_new(c, "outcome", jig_display_str(json_object_get(t, "outcome")));
		json_object_set_new(c, "termination", jig_display_pick(t, term));
	}
	if (json_is_object(json_object_get(v, "limits")))
		json_object_set_new(c, "limits", jig_display_pick(json_object_get(v, "limits"), lim));
	if (json_is_object(json_object_get(v, "reservation")))
		json_object_set_new(c, "reservation", jig_display_pick(json_object_get(v, "reservation"), lim));
	json_object_set_new(c, "outputs", list(json_object_get(v, "outputs"), JIG_DISPLAY_MAX_ARTIFACTS, file_entry));
	json_object_set_new(c, "effects", list(json_object_get(v, "effects"), JIG_DISPLAY_MAX_LOGS, jig_display_evidence));
	json_object_set_new(c, "logs", list(json_object_get(v, "logs"), JIG_DISPLAY_MAX_LOGS, jig_display_str));
	return c;
}

/* The record's tree of child Flows (run/call.h), bounded: at most 32
 * children a level, six levels (the root's five and one to spare). */
json_t *jig_display_children(json_t *list, int depth)
{
	json_t *out = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		if (i >= 32 || depth >= 6 || !json_is_object(v))
			break;
		json_t *c = child_node(v);
		json_t *sub = json_object_get(v, "children");
		if (json_array_size(sub))
			json_object_set_new(c, "children", jig_display_children(sub, depth + 1));
		json_array_append_new(out, c);
	}
	return out;
}

static json_t *packet_view(json_t *rec, const char *headline, const struct jig_display_artifact *arts, size_t n_arts)
{
	static const char *const summary[] = {"flow", "status", "error", "plan_sha256", "package_sha256", "timeout_ms",
					      "started_ms", NULL};
	static const char *const term[] = {"outcome", "exit_status", "signal", "core_dumped", "fenced",
					   "cleanup_confirmed", "oom_kills", "pids_max_hits", "memory_peak_bytes",
					   "cpu_usec", "wall_ms", NULL};
	json_t *scope = jig_display_pick(json_object_get(rec, "termination"), term);
	json_object_set_new(scope, "name", json_string("Run"));
	json_object_set_new(scope, "state", json_string("ended"));
	json_object_set_new(scope, "timeout_ms", jig_display_num(json_object_get(rec, "timeout_ms")));
	static const char *const lim[] = {"memory_bytes", "tasks", "cpu_quota_us", "wall_ms", NULL};
	json_t *limits = json_object_get(json_object_get(json_object_get(rec, "scope"), "policy"), "limits");
	if (json_is_object(limits)) { /* the Plan's scope for the Run (issue 35: the timeline's limits) */
		json_t *l = jig_display_pick(limits, lim);
		/* the Run's deadline is its own, not the policy's ceiling */
		json_object_set_new(l, "wall_ms", jig_display_num(json_object_get(rec, "timeout_ms")));
		json_object_set_new(scope, "limits", l);
	}
	json_object_set_new(scope, "started_ms", jig_display_num(json_object_get(rec, "started_ms")));
	json_t *logs = json_array(), *effects = json_array(), *files = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(rec, "logs"), i, v)
		if (i < JIG_DISPLAY_MAX_LOGS)
			json_array_append_new(logs, jig_display_str(v));
	json_array_foreach(json_object_get(rec, "effects"), i, v)
		if (i < JIG_DISPLAY_MAX_LOGS && json_is_object(v))
			json_array_append_new(effects, jig_display_evidence(v));
	json_array_foreach(json_object_get(rec, "outputs"), i, v)
		if (i < n_arts)
			json_array_append_new(files, json_pack("{s:s,s:o,s:O}", "id", arts[i].id, "name",
							       jig_display_str(json_object_get(v, "path")), "size",
							       json_object_get(v, "size")));
	/* The headline first: jig run's, jig inspect's and jig why's words. */
	json_t *sum = json_pack("{s:s}", "headline", headline ? headline : "");
	json_t *picked = jig_display_pick(rec, summary);
	json_object_update(sum, picked);
	json_decref(picked);
	return json_pack("{s:s,s:s,s:b,s:o,s:[o],s:o,s:o,s:o,s:o}", "format", JIG_DISPLAY_VIEW_FORMAT, "kind", "packet",
			 "final", 1, "summary", sum, "scopes", scope, "logs", logs, "effects", effects,
			 "children", jig_display_children(json_object_get(rec, "children"), 0), "artifacts", files);
}

/* Reads the whole file, hashing it, keeping the first excerpt bytes. */
static int capture(int files, json_t *o, struct jig_display_artifact *a, struct jig_error *e)
{
	const char *path = json_string_value(json_object_get(o, "path"));
	const char *sha = json_string_value(json_object_get(o, "sha256"));
	json_int_t size = json_integer_value(json_object_get(o, "size"));
	if (!path || !sha || strlen(sha) != 64 || !jig_path_is_normal_relative(path))
		return jig_err(e, JIG_E_INTEGRITY, "packet: the record lists a file without a valid path and SHA-256");
	jig_autoclose int fd = jig_open_beneath(files, path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_INTEGRITY, "packet: %s changed since it was verified", path);
	char head[JIG_DISPLAY_EXCERPT_BYTES], buf[65536];
	size_t kept = 0;
	uint64_t total = 0;
	struct jig_sha256_ctx *h = jig_sha256_begin();
	ssize_t n;
	while (h && (n = read(fd, buf, sizeof(buf))) > 0) {
		size_t take = kept < sizeof(head) ? sizeof(head) - kept : 0;
		take = take < (size_t)n ? take : (size_t)n;
		memcpy(head + kept, buf, take);
		kept += take;
		total += (uint64_t)n;
		jig_sha256_update(h, buf, (size_t)n);
	}
	unsigned char md[JIG_SHA256_LEN];
	char hex[65];
	if (!h || jig_sha256_end(h, md) < 0)
		return jig_err(e, JIG_E_INTERNAL, "packet: %s: cannot hash", path);
	jig_hex(md, sizeof(md), hex);
	if (strcmp(hex, sha) != 0 || (json_int_t)total != size)
		return jig_err(e, JIG_E_INTEGRITY, "packet: %s changed since it was verified", path);
	memcpy(a->id, hex, sizeof(a->id));
	/* Text cut at a character; bytes that are not UTF-8 are not shown. */
	size_t cut = kept;
	json_t *ex = json_stringn(head, cut);
	for (int back = 0; !ex && back < 3 && cut > 0; back++)
		ex = json_stringn(head, --cut);
	json_t *doc = json_pack("{s:s,s:o,s:I,s:o,s:b,s:b}", "id", hex, "name", jig_display_str(json_object_get(o, "path")), "size",
				(json_int_t)total, "excerpt", ex ? ex : json_null(), "truncated", total > cut, "binary",
				ex == NULL);
	a->json = doc ? json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(doc);
	if (!a->json)
		return jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	a->len = strlen(a->json);
	return 0;
}

int jig_display_packet(int pfd, json_t *rec, const char *headline, json_t **view, struct jig_display_artifact **arts, size_t *n_arts,
		       struct jig_error *e)
{
	*view = NULL;
	*arts = NULL;
	*n_arts = 0;
	json_t *outputs = json_object_get(rec, "outputs");
	size_t n = json_array_size(outputs);
	if (n > JIG_DISPLAY_MAX_ARTIFACTS)
		return jig_err(e, JIG_E_INTEGRITY, "packet: more than %d files", JIG_DISPLAY_MAX_ARTIFACTS);
	struct jig_display_artifact *a = calloc(n ? n : 1, sizeof(*a));
	if (!a)
		return jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	int r = 0;
	if (n) {
		jig_autoclose int files = openat(pfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (files < 0)
			r = jig_err(e, JIG_E_INTEGRITY, "packet: files/: %s", strerror(errno));
		for (size_t i = 0; !r && i < n; i++)
			r = capture(files, json_array_get(outputs, i), &a[i], e);
	}
	if (!r && !(*view = packet_view(rec, headline, a, n)))
		r = jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	if (r) {
		jig_display_artifacts_free(a, n);
		return r;
	}
	*arts = a;
	*n_arts = n;
	return 0;
}

void jig_display_artifacts_free(struct jig_display_artifact *arts, size_t n)
{
	for (size_t i = 0; arts && i < n; i++)
		free(arts[i].json);
	free(arts);
}
