/* A remembered admission: its key, its file, and its use (flow/memo.h). */
#include "flow/memo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "flow/binding.h"
#include "flow/prepared.h"
#include "policy/host_fact.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/limits.h"

static json_t *sha_of(const char *buf, size_t len)
{
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(buf, len, d);
	jig_hex(d, JIG_SHA256_LEN, hex);
	return json_string(hex);
}

static json_t *hex_of(const unsigned char d[JIG_SHA256_LEN])
{
	char hex[JIG_SHA256_HEX];
	jig_hex(d, JIG_SHA256_LEN, hex);
	return json_string(hex);
}

/* What capture set for f: its package and every binding's resource trees
 * (R-S04), digests, files and bytes. */
static json_t *captured(const struct jig_flow *f)
{
	json_t *trees = json_array();
	for (size_t k = 0; trees && k < f->n_bindings; k++)
		for (size_t i = 0; i < f->bindings[k].n_res; i++) {
			const struct jig_binding_res *r = &f->bindings[k].res[i];
			json_array_append_new(trees, json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "binding", f->bindings[k].name, "child",
							       r->child, "path", r->path, "sha256", r->sha256, "files",
							       (json_int_t)r->files, "bytes", (json_int_t)r->bytes));
		}
	return json_pack("{s:s,s:I,s:I,s:o}", "sha256", f->package_sha256, "files", (json_int_t)f->package_files, "bytes",
			 (json_int_t)f->package_bytes, "resources", trees);
}

/* The project's part: jig.json's and each flow.json's bytes as they were
 * parsed (not read again: what the Run's Flows were parsed from), each
 * Flow's name, directory, what capture set (its package, its bindings'
 * resource trees), a recipe's facts, and its prepared record as the Plan
 * reads it. */
static json_t *project_key(const struct jig_project *p)
{
	json_t *flows = json_array();
	for (size_t i = 0; flows && i < p->n_flows; i++) {
		const struct jig_flow *f = &p->flows[i];
		json_t *rec = jig_prepared_record(p, f); /* the same read as the Plan's */
		char *txt = rec ? jig_json_canonical(rec) : NULL;
		json_array_append_new(flows, json_pack("{s:s,s:s,s:o,s:o,s:O?,s:o}", "name", f->name, "dir", f->dir, "flow_json",
						       hex_of(f->meta_sha256), "captured", captured(f), "recipe", f->recipe,
						       "prepared", txt ? sha_of(txt, strlen(txt)) : json_null()));
		free(txt);
		json_decref(rec);
	}
	return json_pack("{s:o,s:o}", "jig_json", hex_of(p->meta_sha256), "flows", flows);
}

/* The operator's configuration a Plan may read: agents.json's bytes. */
static json_t *operator_key(void)
{
	jig_autofree char *buf = NULL;
	size_t len;
	char what[PATH_MAX + 32];
	struct jig_error ignored;
	int r = jig_config_read("agents.json", JIG_MEMO_MAX_BYTES, JIG_CONFIG_SECRET, what, sizeof(what), &buf, &len, &ignored);
	if (r < 0)
		return NULL;
	return json_pack("{s:o,s:s}", "agents_json", r == JIG_CONFIG_ABSENT ? json_null() : sha_of(buf, len), "config_home",
			 getenv("XDG_CONFIG_HOME") ? getenv("XDG_CONFIG_HOME") : "");
}

static json_t *snapshot_key(const struct jig_snapshot *s)
{
	char msha[JIG_SHA256_HEX], csha[JIG_SHA256_HEX];
	const struct jig_manifest_file *cat = jig_manifest_find_file(&s->m, JIG_CATALOG_FILE);
	if (!cat)
		return NULL;
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, msha);
	jig_hex(cat->sha256, JIG_SHA256_LEN, csha);
	return json_pack("{s:s,s:s,s:s,s:s}", "dir", s->dirpath, "id", s->m.id, "manifest_sha256", msha, "catalog_sha256", csha);
}

int jig_memo_key(const struct jig_project *p, const struct jig_snapshot *s, char out[JIG_SHA256_HEX])
{
	struct stat st;
	int rc = stat("/proc/self/exe", &st);
	const char *home = jig_caller_home();
	json_t *key = json_pack("{s:s,s:s,s:o,s:I,s:I,s:s?,s:o?,s:o?,s:o?}", "format", JIG_MEMO_FORMAT, "jig", JIG_VERSION, "exe",
				jig_host_fact_stat("/proc/self/exe", rc == 0 ? &st : NULL, errno), "uid", (json_int_t)getuid(),
				"euid", (json_int_t)geteuid(), "home", home, "snapshot", snapshot_key(s), "project",
				project_key(p), "operator", operator_key());
	static const char *const parts[] = {"snapshot", "project", "operator"};
	bool whole = key && rc == 0;
	for (size_t i = 0; whole && i < 3; i++)
		whole = json_object_get(key, parts[i]) && !json_is_null(json_object_get(key, parts[i]));
	char *txt = whole ? jig_json_canonical(key) : NULL;
	json_decref(key);
	if (!txt)
		return -1;
	json_t *hex = sha_of(txt, strlen(txt));
	snprintf(out, JIG_SHA256_HEX, "%s", json_string_value(hex));
	json_decref(hex);
	free(txt);
	return 0;
}

bool jig_memo_applies(const struct jig_project *p)
{
	for (size_t i = 0; i < p->n_flows; i++)
		for (size_t k = 0; k < p->flows[i].n_agents; k++)
			if (p->flows[i].agents[k].provider)
				return false;
	return true;
}

static json_t *scope_entry(const struct jig_plan_scope *ps)
{
	json_t *argv = json_array();
	for (size_t i = 0; argv && ps->t.argv && ps->t.argv[i]; i++)
		json_array_append_new(argv, json_string(ps->t.argv[i]));
	return json_pack("{s:s,s:s?,s:s,s:o,s:s?}", "flow", ps->flow, "route", ps->route, "policy", ps->t.policy.canonical,
			 "argv", argv, "hold", ps->t.hold);
}

void jig_memo_write(const struct jig_project *p, const struct jig_plan *pl)
{
	if (!pl->facts || !pl->memo_key[0] || !pl->canonical || p->statefd < 0)
		return;
	json_t *scopes = json_array();
	for (size_t i = 0; scopes && i < pl->n_scopes; i++)
		json_array_append_new(scopes, scope_entry(&pl->scopes[i]));
	json_t *doc = json_pack("{s:s,s:s,s:O,s:s,s:s,s:o}", "format", JIG_MEMO_FORMAT, "key", pl->memo_key, "facts", pl->facts,
				"plan", pl->canonical, "plan_sha256", pl->sha256, "scopes", scopes);
	jig_autofree char *txt = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!txt || strlen(txt) > JIG_MEMO_MAX_BYTES)
		return;
	struct jig_error ignored;
	jig_write_file_replace_at(p->statefd, JIG_MEMO_FILE, txt, strlen(txt), 0600, &ignored); /* best effort: only slower */
}

static bool is_hex64(const json_t *v)
{
	const char *s = json_string_value(v);
	if (!s || strlen(s) != JIG_SHA256_HEX - 1)
		return false;
	return strspn(s, "0123456789abcdef") == JIG_SHA256_HEX - 1;
}

/* One scope entry: flow, route (string or null), policy, argv (1 to
 * JIG_MEMO_MAX_ARGV strings), hold (string or null), nothing else. */
static bool scope_ok(const json_t *sc)
{
	static const char *const keys[] = {"flow", "route", "policy", "argv", "hold"};
	json_t *argv = json_object_get(sc, "argv"), *route = json_object_get(sc, "route"), *hold = json_object_get(sc, "hold");
	bool ok = json_is_object(sc) && json_object_size(sc) == 5 && json_is_string(json_object_get(sc, "flow")) &&
		  json_is_string(json_object_get(sc, "policy")) && (json_is_string(route) || json_is_null(route)) &&
		  (json_is_string(hold) || json_is_null(hold)) && json_is_array(argv) && json_array_size(argv) >= 1 &&
		  json_array_size(argv) <= JIG_MEMO_MAX_ARGV;
	for (size_t i = 0; ok && i < 5; i++)
		ok = json_object_get(sc, keys[i]) != NULL;
	size_t i;
	json_t *a;
	json_array_foreach(ok ? argv : NULL, i, a)
		ok = ok && json_is_string(a);
	return ok;
}

json_t *jig_memo_parse(const char *buf, size_t len)
{
	json_t *doc = NULL;
	struct jig_error ignored;
	if (len > JIG_MEMO_MAX_BYTES || jig_json_parse_object(buf, len, "admission memo", &doc, &ignored) < 0)
		return NULL;
	const char *fmt = json_string_value(json_object_get(doc, "format")), *plan = json_string_value(json_object_get(doc, "plan"));
	json_t *facts = json_object_get(doc, "facts"), *scopes = json_object_get(doc, "scopes");
	bool ok = json_object_size(doc) == 6 && fmt && strcmp(fmt, JIG_MEMO_FORMAT) == 0 && is_hex64(json_object_get(doc, "key")) &&
		  is_hex64(json_object_get(doc, "plan_sha256")) && plan && json_is_array(facts) &&
		  json_array_size(facts) <= JIG_MEMO_MAX_FACTS && json_is_array(scopes) && json_array_size(scopes) >= 1 &&
		  json_array_size(scopes) <= JIG_MEMO_MAX_SCOPES;
	size_t i;
	json_t *v;
	json_array_foreach(ok ? facts : NULL, i, v)
		ok = ok && json_is_object(v);
	json_array_foreach(ok ? scopes : NULL, i, v)
		ok = ok && scope_ok(v);
	if (ok) { /* the plan text is the digest's */
		json_t *d = sha_of(plan, strlen(plan));
		ok = strcmp(json_string_value(d), json_string_value(json_object_get(doc, "plan_sha256"))) == 0;
		json_decref(d);
	}
	if (!ok)
		json_decref(doc);
	return ok ? doc : NULL;
}

/* The Plan's entry (policy_sha256, argv) of the scope of flow's route, or
 * of the Flow itself. */
static json_t *planned_scope(const struct jig_plan *pl, const char *flow, const char *route)
{
	json_t *f = jig_plan_flow(pl, flow), *g;
	if (!route)
		return json_object_get(f, "scope");
	static const char *const lists[][2] = {{"http", "worker_scope"}, {"commands", "command_scope"}};
	size_t i;
	for (size_t k = 0; k < 2; k++)
		json_array_foreach(json_object_get(f, lists[k][0]), i, g) {
			const char *r = json_string_value(json_object_get(g, "route"));
			if (r && strcmp(r, route) == 0)
				return json_object_get(g, lists[k][1]);
		}
	return NULL;
}

/* The project's names for a memo entry's flow and route (the Plan's scopes
 * point into the project), or false. */
static bool project_names(const struct jig_project *p, const json_t *sc, const char **flow, const char **route)
{
	const struct jig_flow *f = jig_project_flow(p, json_string_value(json_object_get(sc, "flow")));
	const char *r = json_string_value(json_object_get(sc, "route"));
	*flow = f ? f->name : NULL;
	*route = NULL;
	for (size_t k = 0; f && r && k < f->n_http; k++)
		if (strcmp(f->http[k].route, r) == 0)
			*route = f->http[k].route;
	for (size_t k = 0; f && r && !*route && k < f->n_commands; k++)
		if (strcmp(f->commands[k].route, r) == 0)
			*route = f->commands[k].route;
	return f && (!r || *route);
}

/* One remembered scope into pl->scopes: its policy parsed again (every
 * rule of a policy holds), its digest and argv the Plan's. */
static bool restore_scope(const struct jig_project *p, const json_t *sc, struct jig_plan *pl)
{
	struct jig_plan_scope *ps = &pl->scopes[pl->n_scopes];
	json_t *argv = json_object_get(sc, "argv"), *planned;
	if (!project_names(p, sc, &ps->flow, &ps->route) || !(planned = planned_scope(pl, ps->flow, ps->route)) ||
	    !json_equal(json_object_get(planned, "argv"), argv) ||
	    jig_scope_template_restore(json_string_value(json_object_get(sc, "policy")), argv,
				       json_string_value(json_object_get(sc, "hold")), jig_caller_home(), &ps->t) < 0)
		return false;
	pl->n_scopes++; /* freed with the Plan from here on */
	const char *digest = json_string_value(json_object_get(planned, "policy_sha256"));
	return digest && strcmp(digest, ps->t.policy.sha256) == 0;
}

/* Marks flow and every Flow it can call through its bindings, at any depth
 * (the only Flows whose scopes this Run can launch). */
static void mark_reachable(const struct jig_project *p, const char *flow, bool *on)
{
	const struct jig_flow *f = jig_project_flow(p, flow);
	if (!f || on[f - p->flows])
		return;
	on[f - p->flows] = true;
	for (size_t k = 0; k < f->n_bindings; k++)
		mark_reachable(p, f->bindings[k].flow, on);
}

/* Every scope of a marked Flow is in pl, once. */
static bool covered(const struct jig_project *p, const bool *on, const struct jig_plan *pl)
{
	bool ok = true;
	for (size_t i = 0; ok && i < p->n_flows; i++) {
		const struct jig_flow *f = &p->flows[i];
		ok = !on[i] || jig_plan_scope(pl, f->name, NULL) != NULL;
		for (size_t k = 0; ok && on[i] && k < f->n_http; k++)
			ok = jig_plan_scope(pl, f->name, f->http[k].route) != NULL;
		for (size_t k = 0; ok && on[i] && k < f->n_commands; k++)
			ok = jig_plan_scope(pl, f->name, f->commands[k].route) != NULL;
	}
	return ok;
}

/* The Plan from a parsed memo: its text, and every scope of the Flows this
 * Run can launch (flow's and its bindings'), each the Plan's; the other
 * Flows' scopes are not parsed (nothing of this Run launches them). */
static bool restore(const struct jig_project *p, const char *flow, const json_t *doc, struct jig_plan *pl)
{
	const char *plan = json_string_value(json_object_get(doc, "plan"));
	json_t *scopes = json_object_get(doc, "scopes"), *sc;
	bool on[JIG_MAX_FLOWS] = {false};
	size_t want = 0, all = 0, i;
	if (p->n_flows > JIG_MAX_FLOWS)
		return false;
	mark_reachable(p, flow, on);
	for (i = 0; i < p->n_flows; i++) {
		all += 1 + p->flows[i].n_http + p->flows[i].n_commands;
		want += on[i] ? 1 + p->flows[i].n_http + p->flows[i].n_commands : 0;
	}
	memset(pl, 0, sizeof(*pl));
	snprintf(pl->sha256, sizeof(pl->sha256), "%s", json_string_value(json_object_get(doc, "plan_sha256")));
	bool ok = json_array_size(scopes) == all && want && (pl->canonical = strdup(plan)) &&
		  (pl->doc = json_loads(plan, JSON_REJECT_DUPLICATES, NULL)) && (pl->scopes = calloc(want, sizeof(*pl->scopes)));
	json_array_foreach(ok ? scopes : NULL, i, sc) {
		const struct jig_flow *f = jig_project_flow(p, json_string_value(json_object_get(sc, "flow")));
		ok = ok && f && (!on[f - p->flows] || (pl->n_scopes < want && restore_scope(p, sc, pl)));
	}
	if (!(ok = ok && pl->n_scopes == want && covered(p, on, pl)))
		jig_plan_free(pl);
	return ok;
}

/* The memo file, if it is the caller's own private regular file (not a
 * link, one name), parsed; NULL otherwise (why says why). */
static json_t *memo_load(const struct jig_project *p, const char **why)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	if (jig_read_file_at(p->statefd, JIG_MEMO_FILE, JIG_MEMO_MAX_BYTES, "admission memo", &buf, &len, &st, &ignored) < 0) {
		*why = "no memo (none, a link, not a regular file, or over its cap)";
		return NULL;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) || st.st_nlink != 1) {
		*why = "the memo is not the caller's private file";
		return NULL;
	}
	json_t *doc = jig_memo_parse(buf, len);
	*why = doc ? NULL : "the memo is malformed";
	return doc;
}

/* Whether the memo doc is proven now (why: NULL), or why not. */
static const char *proven(const struct jig_project *p, const struct jig_snapshot *s, const json_t *doc, const char *admitted,
			  char *why, size_t cap)
{
	char key[JIG_SHA256_HEX];
	if (strcmp(json_string_value(json_object_get(doc, "plan_sha256")), admitted) != 0)
		return "the memo's Plan is not the admitted one";
	if (jig_memo_key(p, s, key) < 0 || strcmp(key, json_string_value(json_object_get(doc, "key"))) != 0)
		return "an input changed (the key differs)";
	size_t i;
	json_t *fact;
	json_array_foreach(json_object_get(doc, "facts"), i, fact)
		if (!jig_host_fact_holds(fact)) {
			const char *op = json_object_get(fact, "stat") ? "stat" : "realpath";
			snprintf(why, cap, "a host fact changed: %s %.200s", op, json_string_value(json_object_get(fact, op)));
			return why;
		}
	return NULL;
}

bool jig_memo_use(const struct jig_project *p, const struct jig_snapshot *s, const char *flow, const char *admitted,
		  struct jig_plan *pl, char *why, size_t cap)
{
	const char *no = NULL;
	json_t *doc = NULL;
	if (!jig_memo_applies(p))
		no = "a native Agent route (never remembered)";
	else if ((doc = memo_load(p, &no)))
		no = proven(p, s, doc, admitted, why, cap);
	struct jig_plan got;
	if (doc && !no && !restore(p, flow, doc, &got))
		no = "its scopes are not the Plan's";
	if (doc && !no)
		*pl = got;
	json_decref(doc);
	if (no && no != why)
		snprintf(why, cap, "%s", no);
	return !no;
}
