/* Plan differences (flow/plan_diff.h): a walk of two jig-plan/1 documents
 * that matches lists by their names (Flows, routes, bindings), names a
 * changed package by its files, and an Agent provider's change in the
 * words of its identity check. */
#include "flow/plan_diff.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/agent_config.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

#define SUBJECT_MAX 400
#define VALUE_MAX 128

struct diff {
	const struct jig_project *p;
	json_t *out;
	const char *flow; /* the Flow being walked, or NULL: the Plan's own facts */
	size_t listed, more; /* of this Flow (or the Plan's own) */
	bool prepared;	     /* now's npm dependencies were prepared (review), or not (run) */
};

json_t *jig_plan_admitted_doc(const struct jig_project *p, const char *sha)
{
	return jig_state_admitted_plan(p->statefd, sha); /* only bytes that hash to sha (decision 190) */
}

static void add(struct diff *d, const char *change, const char *subject, const char *verb, const char *detail)
{
	if (d->listed >= JIG_PLAN_DIFF_MAX_PER_FLOW) {
		d->more++;
		return;
	}
	d->listed++;
	char text[SUBJECT_MAX + VALUE_MAX * 2 + 64];
	snprintf(text, sizeof(text), "%s%s%s%s%s", d->flow ? "flow " : "", d->flow ? d->flow : "", d->flow && subject[0] ? ": " : "",
		 subject, verb);
	size_t l = strlen(text);
	snprintf(text + l, sizeof(text) - l, "%s", detail);
	json_t *c = json_pack("{s:s,s:s,s:s,s:s}", "change", change, "subject", subject, "detail", detail, "text", text);
	if (c && d->flow)
		json_object_set_new(c, "flow", json_string(d->flow));
	json_array_append_new(d->out, c);
}

static bool is_digest(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

/* A value in a line: a digest by its first 12 digits, a string quoted and
 * cut, anything else as compact JSON, cut. */
static void value(char out[VALUE_MAX], json_t *v)
{
	const char *s = json_string_value(v);
	if (s && is_digest(s)) {
		snprintf(out, VALUE_MAX, "%.12s", s);
		return;
	}
	jig_autofree char *txt = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
	const char *t = txt ? txt : "nothing";
	size_t n = jig_text_utf8_prefix(t, strlen(t), VALUE_MAX - 5);
	snprintf(out, VALUE_MAX, "%.*s%s", (int)n, t, n < strlen(t) ? "…" : "");
}

/* The key that names the items of a list of objects, or NULL. */
static const char *item_key(json_t *a, json_t *b)
{
	static const char *const keys[] = {"name", "route", "binding", "target", NULL};
	for (const char *const *k = keys; *k; k++) {
		bool all = json_array_size(a) + json_array_size(b) > 0;
		json_t *lists[] = {a, b}, *v;
		size_t i;
		for (int l = 0; l < 2 && all; l++)
			json_array_foreach(lists[l], i, v)
				all &= json_is_string(json_object_get(v, *k));
		if (all)
			return *k;
	}
	return NULL;
}

static json_t *find(json_t *list, const char *key, const char *name)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		if (strcmp(json_string_value(json_object_get(v, key)) ?: "", name) == 0)
			return v;
	return NULL;
}

/* A package manifest's files are sorted by path (flow/capture.c): then a
 * file is found by bisection, not by a walk of all 4,096 (a one-file
 * change of a 4,096-file package cost a review 16 million comparisons,
 * issue 36). Not sorted (not a manifest jig wrote): the walk. */
static bool sorted_paths(json_t *list)
{
	const char *prev = NULL;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *n = json_string_value(json_object_get(json_array_get(list, i), "path"));
		if (!n || (prev && strcmp(prev, n) >= 0))
			return false;
		prev = n;
	}
	return true;
}

static json_t *find_path(json_t *list, bool sorted, const char *name)
{
	if (!sorted)
		return find(list, "path", name);
	size_t lo = 0, hi = json_array_size(list);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		json_t *v = json_array_get(list, mid);
		int c = strcmp(json_string_value(json_object_get(v, "path")), name);
		if (c == 0)
			return v;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void walk(struct diff *d, const char *path, const char *key, json_t *a, json_t *b);

/* How an item of list key is named in a line. */
static void item_path(char *out, size_t cap, const char *path, const char *list, const char *name)
{
	static const struct {
		const char *list, *label;
	} labels[] = {{"http", "http route"}, {"agents", "agent route"}, {"commands", "command route"}, {"bindings", "binding"}};
	const char *label = list;
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (strcmp(labels[i].list, list) == 0)
			label = labels[i].label;
	size_t pl = strlen(path), ll = strlen(list);
	bool ends = ll && pl >= ll && strcmp(path + pl - ll, list) == 0; /* "http" -> "http route NAME" */
	snprintf(out, cap, "%.*s%s%s %s", (int)(ends ? pl - ll : pl), path, ends || !pl ? "" : " ", label, name);
}

static void walk_list(struct diff *d, const char *path, const char *key, json_t *a, json_t *b)
{
	const char *k = item_key(a, b);
	char sub[SUBJECT_MAX], va[VALUE_MAX];
	size_t i;
	json_t *v;
	if (k) {
		json_array_foreach(a, i, v) {
			const char *n = json_string_value(json_object_get(v, k));
			item_path(sub, sizeof(sub), path, key, n);
			json_t *w = find(b, k, n);
			if (!w)
				add(d, "removed", sub, " removed", "");
			else
				walk(d, sub, NULL, v, w);
		}
		json_array_foreach(b, i, v) {
			const char *n = json_string_value(json_object_get(v, k));
			item_path(sub, sizeof(sub), path, key, n);
			if (!find(a, k, n))
				add(d, "added", sub, " added", "");
		}
		return;
	}
	/* otherwise as sets of values */
	json_t *lists[] = {a, b, a};
	for (int l = 0; l < 2; l++)
		json_array_foreach(lists[l], i, v) {
			bool in_other = false;
			size_t j;
			json_t *w;
			json_array_foreach(lists[l + 1], j, w)
				in_other |= json_equal(v, w);
			if (!in_other) {
				value(va, v);
				snprintf(sub, sizeof(sub), "%s %s", path, va);
				add(d, l ? "added" : "removed", sub, l ? " added" : " removed", "");
			}
		}
}

/* A package whose digest changed, named by its files (the manifests). */
static void package_files(struct diff *d, const char *path, json_t *a, json_t *b)
{
	const char *was = json_string_value(json_object_get(a, "sha256")), *now = json_string_value(json_object_get(b, "sha256"));
	json_t *old = NULL, *cur = NULL;
	char rel[128];
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	snprintf(rel, sizeof(rel), "store/packages/%s.json", was ? was : "");
	if (was && jig_read_file_at(d->p->statefd, rel, 8u << 20, "package", &buf, &len, &st, &ignored) == 0)
		jig_json_parse_object(buf, len, "package", &old, &ignored);
	for (size_t i = 0; d->p && i < d->p->n_flows; i++)
		if (now && strcmp(d->p->flows[i].package_sha256, now) == 0 && d->p->flows[i].package_manifest)
			cur = json_incref(d->p->flows[i].package_manifest);
	/* Capture keeps only a package the store did not hold (issue 36: a
	 * Run's memory); a stored one is read from the store. */
	jig_autofree char *nbuf = NULL;
	snprintf(rel, sizeof(rel), "store/packages/%s.json", now ? now : "");
	if (!cur && now && jig_read_file_at(d->p->statefd, rel, 8u << 20, "package", &nbuf, &len, &st, &ignored) == 0)
		jig_json_parse_object(nbuf, len, "package", &cur, &ignored);
	char detail[3 * VALUE_MAX + 96], va[VALUE_MAX], vb[VALUE_MAX];
	value(va, json_object_get(a, "sha256"));
	value(vb, json_object_get(b, "sha256"));
	if (!old || !cur) {
		snprintf(detail, sizeof(detail), " (%s -> %s; the admitted package is no longer stored, so its files cannot be named)", va, vb);
		add(d, "changed", path, " changed", detail);
		json_decref(old);
		json_decref(cur);
		return;
	}
	json_t *fa = json_object_get(old, "files"), *fb = json_object_get(cur, "files"), *v;
	bool sa = sorted_paths(fa), sb = sorted_paths(fb);
	size_t i;
	json_array_foreach(fa, i, v) {
		const char *n = json_string_value(json_object_get(v, "path"));
		json_t *w = n ? find_path(fb, sb, n) : NULL;
		if (!w)
			add(d, "file-removed", n ? n : "?", " removed", "");
		else if (!json_equal(json_object_get(v, "sha256"), json_object_get(w, "sha256"))) {
			snprintf(detail, sizeof(detail), " (%lld -> %lld bytes)", json_integer_value(json_object_get(v, "size")),
				 json_integer_value(json_object_get(w, "size")));
			add(d, "file-changed", n, " changed", detail);
		}
	}
	json_array_foreach(fb, i, v) {
		const char *n = json_string_value(json_object_get(v, "path"));
		if (n && !find_path(fa, sa, n))
			add(d, "file-added", n, " added", "");
	}
	json_decref(old);
	json_decref(cur);
}

static void walk(struct diff *d, const char *path, const char *key, json_t *a, json_t *b)
{
	if ((!a && !b) || json_equal(a, b))
		return;
	char sub[SUBJECT_MAX], va[VALUE_MAX], vb[VALUE_MAX], detail[2 * VALUE_MAX + 600];
	if (key && strcmp(key, "package") == 0 && json_is_object(a) && json_is_object(b))
		return package_files(d, path, a, b);
	if (key && strcmp(key, "identity") == 0 && json_is_object(a) && json_is_object(b)) {
		char why[600];
		const char *w = jig_agent_identity_diff(a, b, why, sizeof(why));
		size_t pl = strlen(path), il = strlen(" identity");
		int keep = (int)(pl >= il && strcmp(path + pl - il, " identity") == 0 ? pl - il : pl);
		snprintf(sub, sizeof(sub), "%.*s: provider %.64s", keep < 200 ? keep : 200, path,
			 json_string_value(json_object_get(b, "provider")) ?: "?");
		snprintf(detail, sizeof(detail), ": %s", w ? w : "it differs");
		return add(d, "agent-provider", sub, " changed", detail);
	}
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;
		json_object_foreach(a, k, v) {
			if (key && strcmp(key, "permission_plan") == 0 && strcmp(k, "policy_sha256") == 0)
				continue; /* the scope's own policy_sha256 says it */
			snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? " " : "", k);
			json_t *w = json_object_get(b, k);
			if (w)
				walk(d, sub, k, v, w);
			else
				add(d, "removed", sub, " removed", "");
		}
		json_object_foreach(b, k, v)
			if (!json_object_get(a, k)) {
				snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? " " : "", k);
				value(vb, v);
				snprintf(detail, sizeof(detail), " (%s)", vb);
				add(d, "added", sub, " added", detail);
			}
		return;
	}
	if (json_is_array(a) && json_is_array(b))
		return walk_list(d, path, key ? key : "", a, b);
	if (!a || !b) { /* a part one of the Plans does not have: never "-> nothing" */
		value(va, a ? a : b);
		if (a)
			detail[0] = '\0';
		else
			snprintf(detail, sizeof(detail), " (%s)", va);
		return add(d, a ? "removed" : "added", path, a ? " removed" : " added", detail);
	}
	value(va, a);
	value(vb, b);
	snprintf(detail, sizeof(detail), " (%s -> %s)", va, vb);
	add(d, "changed", path, " changed", detail);
}

/* What the launch identity covers besides the snapshot's own files
 * (flow/plan.c, jig_plan_build): the effect modules and workers a Plan's
 * grants need, and the Markdown runtime. */
enum { LAUNCH_HTTP = 1, LAUNCH_ACP = 2, LAUNCH_MARKDOWN = 4 };
static unsigned launch_set(json_t *doc, unsigned bit, const char **flow)
{
	size_t i, k;
	json_t *f, *a;
	*flow = NULL;
	json_array_foreach(json_object_get(doc, "flows"), i, f) {
		unsigned set = json_array_size(json_object_get(f, "http")) ? LAUNCH_HTTP : 0;
		set |= json_object_get(f, "recipe") ? LAUNCH_MARKDOWN : 0;
		json_array_foreach(json_object_get(f, "agents"), k, a)
			set |= json_object_get(a, "api") ? 0 : LAUNCH_ACP; /* a native client: plugins/acp */
		if (set & bit) {
			*flow = json_string_value(json_object_get(f, "name"));
			return bit;
		}
	}
	return 0;
}

/* json_equal, with two absent values equal. */
static bool same(json_t *a, json_t *b)
{
	return (!a && !b) || json_equal(a, b);
}

/* The snapshot, or what the launch identity covers. A launch identity
 * that changed with the same snapshot is named by its cause: the modules
 * a new or removed grant brings (issue 44: never "the installed snapshot
 * changed" when nothing was reinstalled). */
static void snapshot(struct diff *d, json_t *a, json_t *b, json_t *was, json_t *now)
{
	if ((!a && !b) || json_equal(a, b))
		return;
	char va[VALUE_MAX], vb[VALUE_MAX], detail[3 * VALUE_MAX + 400];
	bool id = !same(json_object_get(a, "id"), json_object_get(b, "id"));
	bool files = id || !same(json_object_get(a, "manifest_sha256"), json_object_get(b, "manifest_sha256")) ||
		     !same(json_object_get(a, "catalog_sha256"), json_object_get(b, "catalog_sha256"));
	if (files) {
		const char *what = id ? "id" : same(json_object_get(a, "manifest_sha256"), json_object_get(b, "manifest_sha256"))
						  ? "catalog_sha256" : "manifest_sha256";
		value(va, json_object_get(a, what));
		value(vb, json_object_get(b, what));
		snprintf(detail, sizeof(detail), " (%s %s -> %s)", id ? "id" : strcmp(what, "catalog_sha256") == 0 ? "catalog" : "manifest", va, vb);
		return add(d, "snapshot", "the installed snapshot", " changed", detail);
	}
	static const struct {
		unsigned bit;
		const char *what, *grant;
	} sets[] = {{LAUNCH_HTTP, "the HTTP module and worker", "an HTTP route"},
		    {LAUNCH_ACP, "the ACP module, worker and Pi launcher", "a native Agent route"},
		    {LAUNCH_MARKDOWN, "the Markdown recipe runtime", "a Markdown recipe"}};
	size_t len = 0;
	detail[0] = '\0';
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *fa, *fb;
		unsigned ina = launch_set(was, sets[i].bit, &fa), inb = launch_set(now, sets[i].bit, &fb);
		if (ina == inb)
			continue;
		if (len < sizeof(detail))
			len += (size_t)snprintf(detail + len, sizeof(detail) - len, "%s %s %s (%s%.64s%s %s%s)", len ? ";" : ":",
						sets[i].what, inb ? "added" : "removed", inb ? "flow " : "no Flow has",
						inb ? fb : "", inb ? " has" : "", sets[i].grant, inb ? "" : " now");
	}
	value(va, json_object_get(a, "launch_identity"));
	value(vb, json_object_get(b, "launch_identity"));
	if (len < sizeof(detail))
		snprintf(detail + len, sizeof(detail) - len, len ? "; launch identity %s -> %s, the installed snapshot is the same"
								 : " (launch identity %s -> %s; the installed snapshot is the same)",
			 va, vb);
	add(d, "launch-set", "the launch set", " changed", detail);
}

/* One Flow's changes (an own count of lines). */
static void flow_changes(struct diff *d, json_t *fa, json_t *fb, const char *name)
{
	d->flow = name;
	d->listed = d->more = 0;
	if (!fa)
		add(d, "flow-added", "", " added (a new Flow of the project)", "");
	else if (!fb)
		add(d, "flow-removed", "", " removed (no longer in the project)", "");
	else {
		const char *k;
		json_t *v;
		/* jig run prepares nothing: a changed package's dependencies
		 * are prepared by the review that admits it, so their absence
		 * now is no change of their own (the package's files are). */
		bool unprepared = !d->prepared && !json_equal(json_object_get(fa, "package"), json_object_get(fb, "package"));
		json_object_foreach(fa, k, v)
			if (!(unprepared && strcmp(k, "dependencies") == 0 && !json_object_get(fb, k)))
				walk(d, k, k, v, json_object_get(fb, k));
		json_object_foreach(fb, k, v)
			if (!json_object_get(fa, k))
				walk(d, k, k, NULL, v);
	}
	if (d->more) {
		char detail[96];
		snprintf(detail, sizeof(detail), "%zu more difference(s) (jig review --full shows the whole Plan)", d->more);
		d->more = 0;
		d->listed = 0;
		add(d, "more", "", "", detail);
	}
}

static bool scope_derived(json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "subject")) ?: "";
	return strncmp(s, "scope", 5) == 0 || strstr(s, " worker_scope") || strstr(s, " provider_scope") || strstr(s, " command_scope");
}

/* A new snapshot changes every scope's bound snapshot paths and policy
 * digests: said once, with the snapshot, not once a scope. */
static json_t *without_snapshot_consequences(json_t *out)
{
	json_t *snap = json_array_get(out, 0);
	if (!snap || strcmp(json_string_value(json_object_get(snap, "change")) ?: "", "snapshot") != 0)
		return out;
	size_t dropped = 0;
	for (size_t i = json_array_size(out); i-- > 1;)
		if (scope_derived(json_array_get(out, i)) && json_array_remove(out, i) == 0)
			dropped++;
	if (dropped) {
		char text[400];
		snprintf(text, sizeof(text), "%s; so every scope's snapshot paths and policy digest changed too (%zu)",
			 json_string_value(json_object_get(snap, "text")) ?: "", dropped);
		json_object_set_new(snap, "text", json_string(text));
	}
	return out;
}

json_t *jig_plan_diff(const struct jig_project *p, json_t *was, json_t *now, bool prepared)
{
	struct diff d = {.p = p, .out = json_array(), .prepared = prepared};
	if (!d.out)
		return NULL;
	snapshot(&d, json_object_get(was, "snapshot"), json_object_get(now, "snapshot"), was, now);
	/* The Plan's own facts, every one of them (the root budget, ...). */
	const char *k;
	json_t *v;
	json_object_foreach(was, k, v)
		if (strcmp(k, "snapshot") != 0 && strcmp(k, "flows") != 0)
			walk(&d, k, k, v, json_object_get(now, k));
	json_object_foreach(now, k, v)
		if (strcmp(k, "snapshot") != 0 && strcmp(k, "flows") != 0 && !json_object_get(was, k))
			walk(&d, k, k, NULL, v);
	json_t *fa = json_object_get(was, "flows"), *fb = json_object_get(now, "flows");
	size_t i;
	json_array_foreach(fa, i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		if (n)
			flow_changes(&d, v, find(fb, "name", n), n);
	}
	json_array_foreach(fb, i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));
		if (n && !find(fa, "name", n))
			flow_changes(&d, NULL, v, n);
	}
	return without_snapshot_consequences(d.out);
}

void jig_plan_diff_print(json_t *changes, FILE *out)
{
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c) {
		fputs("  ", out);
		jig_text_put(out, json_string_value(json_object_get(c, "text")));
		fputc('\n', out);
	}
}

/* Which change a refusal names: the run Flow's own (not one its scope
 * took from the snapshot), then the snapshot, then another Flow's, then
 * any. */
static int weight(json_t *c, const char *flow)
{
	const char *f = json_string_value(json_object_get(c, "flow")), *k = json_string_value(json_object_get(c, "change")) ?: "";
	bool scope = scope_derived(c);
	if (strcmp(k, "more") == 0)
		return 0;
	if (f && strcmp(f, flow) == 0 && !scope)
		return 4;
	if (strcmp(k, "snapshot") == 0)
		return 3;
	return f && !scope ? 2 : 1;
}

int jig_plan_stale(json_t *changes, const char *flow, const char *was, const char *now, struct jig_error *e)
{
	json_t *pick = NULL, *c;
	size_t i, n = 0;
	int best = 0;
	json_array_foreach(changes, i, c) {
		int w = weight(c, flow);
		n += w > 0;
		if (w > best)
			best = w, pick = c;
	}
	if (!pick)
		return jig_err(e, JIG_E_INTEGRITY,
			       "the project or the installed snapshot changed since review (admitted Plan %.12s, now %.12s); nothing was run: review again with 'jig review'",
			       was, now);
	const char *f = json_string_value(json_object_get(pick, "flow")), *kind = json_string_value(json_object_get(pick, "change"));
	const char *verb = strstr(kind, "added") ? "added" : strstr(kind, "removed") ? "removed" : "changed";
	const char *subject = json_string_value(json_object_get(pick, "subject")) ?: "";
	char others[160] = "";
	if (f && strcmp(f, flow) != 0)
		snprintf(others, sizeof(others), " (the admitted Plan covers every Flow of the project, not only %s)", flow);
	char more[64] = "";
	if (n > 1)
		snprintf(more, sizeof(more), "; %zu more change(s)", n - 1);
	return jig_err(e, JIG_E_INTEGRITY, "%s%s%s%s %s since review%s%s%s; nothing was run: review again with 'jig review' (it shows what changed)",
		       f ? "flow " : "", f ? f : "", f && subject[0] ? ": " : "", subject, verb,
		       json_string_value(json_object_get(pick, "detail")) ?: "", others, more);
}
