/* The Plan: build, print, admit. */
#include "flow/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/http.h>
#include <jig/module.h>

#include "effects/http.h"
#include "policy/scope_policy.h"
#include "snapshot/identity.h"
#include "snapshot/loader.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

static const struct jig_manifest_file *snapshot_file(const struct jig_snapshot *s, const char *path)
{
	for (size_t i = 0; i < s->m.nfiles; i++)
		if (strcmp(s->m.files[i].path, path) == 0)
			return &s->m.files[i];
	return NULL;
}

static json_t *strv(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

size_t jig_plan_installed_files(const struct jig_snapshot *s, const char *out[6])
{
	static const char *const all[] = {JIG_SANDBOX_MODULE_FILE, JIG_SCOPE_INIT_FILE, JIG_RUNTIME_BUN,
					  JIG_RUNTIME_BOOT, JIG_HTTP_MODULE_FILE, JIG_HTTP_WORKER_FILE};
	size_t n = 0;
	for (size_t i = 0; i < 6; i++)
		if (i < 4 || snapshot_file(s, all[i]))
			out[n++] = all[i];
	return n;
}

/* Every grant URL must satisfy plugins/http's rule (libcurl's normal form):
 * the host never parses URLs itself. */
static int check_grant_urls(const struct jig_project *p, const struct jig_snapshot *s, struct jig_error *e)
{
	struct jig_module_handle h;
	int r = jig_module_load(s, "http", JIG_KIND_HTTP, &h, e);
	if (r)
		return r;
	const struct jig_http_ops *ops = h.desc->ops;
	if (h.desc->ops_size < offsetof(struct jig_http_ops, url_check) + sizeof(ops->url_check) || !ops->url_check)
		r = jig_err(e, JIG_E_INTEGRITY, "module http has no URL rule");
	for (size_t i = 0; !r && i < p->n_flows; i++)
		for (size_t k = 0; !r && k < p->flows[i].n_http; k++) {
			const struct jig_http_grant *g = &p->flows[i].http[k];
			char why[300] = "";
			if (ops->url_check(h.state, g->url, why, sizeof(why)) != JIG_MOD_OK)
				r = jig_err(e, JIG_E_USAGE, "%s/flow.json: http route \"%s\": URL %.200s %s", p->flows[i].dir,
					    g->route, g->url, why);
		}
	jig_module_unload(&h);
	return r;
}

static json_t *http_grants(const struct jig_flow *f)
{
	json_t *a = json_array();
	for (size_t k = 0; k < f->n_http; k++) {
		const struct jig_http_grant *g = &f->http[k];
		json_array_append_new(
			a, json_pack("{s:s,s:s,s:s,s:O?,s:I,s:I,s:I,s:s,s:[{s:s,s:I}],s:s}", "route", g->route, "method",
				     g->method, "url", g->url, "body_schema", g->body_schema, "max_request_bytes",
				     (json_int_t)g->max_request_bytes, "max_response_bytes",
				     (json_int_t)g->max_response_bytes, "timeout_ms", (json_int_t)g->timeout_ms, "worker",
				     "its own scope: the host network, nothing else", "worker_writable", "at",
				     JIG_HTTP_WORKER_SCRATCH, "size_bytes", (json_int_t)JIG_HTTP_WORKER_SCRATCH_BYTES, "bearer",
				     "only if the operator binds one to this route and URL (never in the Plan)"));
	}
	return a;
}

int jig_plan_build(const struct jig_project *p, const struct jig_snapshot *s, struct jig_plan *out,
		   struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	static const char *const used_all[] = {JIG_SANDBOX_MODULE_FILE, JIG_SCOPE_INIT_FILE, JIG_RUNTIME_BUN,
					       JIG_RUNTIME_BOOT, JIG_HTTP_MODULE_FILE, JIG_HTTP_WORKER_FILE};
	size_t n_used = 4;
	for (size_t i = 0; i < p->n_flows; i++)
		if (p->flows[i].n_http)
			n_used = 6; /* the HTTP effect is part of the launch identity */
	for (size_t i = 0; i < n_used; i++)
		if (!snapshot_file(s, used_all[i]))
			return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; it cannot run these Flows (reinstall jig)", s->m.id, used_all[i]);
	char ident[JIG_SHA256_HEX];
	int r = jig_launch_identity(s, used_all, n_used, ident, e);
	if (r || (n_used == 6 && (r = check_grant_urls(p, s, e))))
		return r;
	char bun[JIG_SHA256_HEX];
	jig_hex(snapshot_file(s, JIG_RUNTIME_BUN)->sha256, JIG_SHA256_LEN, bun);
	json_t *flows = json_array();
	for (size_t i = 0; i < p->n_flows; i++) {
		const struct jig_flow *f = &p->flows[i];
		/* The Flow's scope: its package, the runtime, its declared inputs
		 * (read-only), private scratch, an empty output, Run/0 — nothing else. */
		json_t *grants = json_pack(
			"{s:s,s:[s,s],s:o,s:{s:s,s:I},s:{s:s,s:I},s:s,s:s,s:[]}",
			"package", "/flow (read-only, the captured bytes)", "runtime", "/.jig/bun", "/.jig/runtime",
			"inputs", strv(f->inputs, f->n_inputs), "scratch", "at", "/scratch", "size_bytes",
			(json_int_t)JIG_FLOW_SCRATCH_BYTES, "output", "at", "/output", "size_bytes",
			(json_int_t)JIG_FLOW_OUTPUT_BYTES, "network", "none", "run0", "one socket, descriptor 3",
			"environment");
		if (f->n_http)
			json_object_set_new(grants, "http", http_grants(f));
		/* Every writable mount of the scope, with its cap; /dev, /proc and
		 * the root are read-only. */
		json_object_set_new(grants, "writable",
				    json_pack("[{s:s,s:I},{s:s,s:I}]", "at", "/output", "size_bytes",
					      (json_int_t)JIG_FLOW_OUTPUT_BYTES, "at", "/scratch", "size_bytes",
					      (json_int_t)JIG_FLOW_SCRATCH_BYTES));
		json_object_set_new(grants, "devices", jig_scope_devices_json());
		json_array_append_new(
			flows, json_pack("{s:s,s:{s:s,s:I,s:I},s:s,s:o,s:o,s:o,s:{s:I,s:I,s:I}}", "name", f->name,
					 "package", "sha256", f->package_sha256, "files", (json_int_t)f->package_files,
					 "bytes", (json_int_t)f->package_bytes, "entry", f->entry, "inputs",
					 strv(f->inputs, f->n_inputs), "outputs", strv(f->outputs, f->n_outputs),
					 "grants", grants, "limits", "memory_bytes", (json_int_t)JIG_FLOW_MEMORY, "tasks",
					 (json_int_t)JIG_FLOW_TASKS, "cpu_quota_us", (json_int_t)JIG_FLOW_CPU_US));
	}
	char msha[JIG_SHA256_HEX];
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, msha);
	out->doc = json_pack("{s:s,s:o,s:{s:s,s:s},s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}}", "format", JIG_PLAN_FORMAT,
			     "flows", flows, "runtime", "bun_sha256", bun, "support", JIG_RUNTIME_BOOT, "snapshot",
			     "id", s->m.id, "manifest_sha256", msha, "launch_identity", ident, "deadline",
			     "default", "30s", "maximum", "24h", "set_by", "jig run --timeout (invocation policy)");
	if (!out->doc || !(out->canonical = jig_json_canonical(out->doc))) {
		jig_plan_free(out);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(out->canonical, strlen(out->canonical), d);
	jig_hex(d, JIG_SHA256_LEN, out->sha256);
	return 0;
}

void jig_plan_free(struct jig_plan *pl)
{
	json_decref(pl->doc);
	free(pl->canonical);
	memset(pl, 0, sizeof(*pl));
}

static void print_writable(FILE *out, json_t *list)
{
	size_t i;
	json_t *w;
	json_array_foreach(list, i, w) {
		long long b = json_integer_value(json_object_get(w, "size_bytes"));
		fprintf(out, "%s %s (%lld %s)", i ? "," : "", json_string_value(json_object_get(w, "at")),
			b >= (1 << 20) ? b >> 20 : b >> 10, b >= (1 << 20) ? "MiB" : "KiB");
	}
}

void jig_plan_print(const struct jig_plan *pl, const char *project, FILE *out)
{
	fprintf(out, "Plan %s\n  project ", pl->sha256);
	/* The operator's path, shown inert. Every other string of a Plan is
	 * of a checked character set (names, normalised paths, URLs in
	 * libcurl's normal form with no control or non-ASCII byte). */
	jig_text_put(out, project);
	fputc('\n', out);
	json_t *snap = json_object_get(pl->doc, "snapshot");
	fprintf(out, "  snapshot %s, launch identity %s\n", json_string_value(json_object_get(snap, "id")),
		json_string_value(json_object_get(snap, "launch_identity")));
	fprintf(out, "  runtime Bun sha256 %s\n",
		json_string_value(json_object_get(json_object_get(pl->doc, "runtime"), "bun_sha256")));
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(pl->doc, "flows"), i, f) {
		json_t *pk = json_object_get(f, "package"), *lim = json_object_get(f, "limits");
		fprintf(out, "  flow %s\n    package sha256 %s (%lld files, %lld bytes), entry %s\n",
			json_string_value(json_object_get(f, "name")), json_string_value(json_object_get(pk, "sha256")),
			json_integer_value(json_object_get(pk, "files")), json_integer_value(json_object_get(pk, "bytes")),
			json_string_value(json_object_get(f, "entry")));
		fprintf(out, "    reads: its package at /flow, the runtime, and only these attachments:");
		size_t k;
		json_t *v;
		json_array_foreach(json_object_get(f, "inputs"), k, v)
			fprintf(out, " %s", json_string_value(v));
		fprintf(out, "%s\n    writes: only", json_array_size(json_object_get(f, "inputs")) ? "" : " (none)");
		print_writable(out, json_object_get(json_object_get(f, "grants"), "writable"));
		fprintf(out, "\n      (nothing else: the root, /dev and /proc are read-only; devices null, zero, full, random,\n"
			     "      urandom and tty only); may publish:");
		json_array_foreach(json_object_get(f, "outputs"), k, v)
			fprintf(out, " %s", json_string_value(v));
		fprintf(out, "\n    network none; environment empty; no capabilities; Run/0 on descriptor 3\n");
		json_t *h = json_object_get(json_object_get(f, "grants"), "http");
		json_array_foreach(h, k, v) {
			fprintf(out, "    http %s: %s %s\n      request body <= %lld bytes%s, response <= %lld bytes, deadline %lld ms;\n",
				json_string_value(json_object_get(v, "route")), json_string_value(json_object_get(v, "method")),
				json_string_value(json_object_get(v, "url")),
				json_integer_value(json_object_get(v, "max_request_bytes")),
				json_object_get(v, "body_schema") ? " matching its Schema/0" : "",
				json_integer_value(json_object_get(v, "max_response_bytes")),
				json_integer_value(json_object_get(v, "timeout_ms")));
			fprintf(out, "      sent by a worker in its own scope (host network; writes only");
			print_writable(out, json_object_get(v, "worker_writable"));
			fprintf(out, "); no redirects,\n      proxies or other headers; a bearer only if you bind one to this route and URL\n");
		}
		fprintf(out, "    limits memory %lld MiB, tasks %lld, cpu %lld us per 100000 us; deadline 30 s unless --timeout\n",
			json_integer_value(json_object_get(lim, "memory_bytes")) >> 20,
			json_integer_value(json_object_get(lim, "tasks")),
			json_integer_value(json_object_get(lim, "cpu_quota_us")));
	}
}

int jig_plan_admit(const struct jig_project *p, const struct jig_plan *pl, struct jig_error *e)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "admitted/%s.json", pl->sha256);
	struct stat st;
	int r = 0;
	if (fstatat(p->statefd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = jig_write_file_at(p->statefd, rel, pl->canonical, strlen(pl->canonical), 0600, e);
	if (r)
		return r;
	/* The current admission, replaced atomically. */
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".admission-%d.tmp", (int)getpid());
	unlinkat(p->statefd, tmp, 0);
	json_t *a = json_pack("{s:s,s:s}", "format", "jig-admission/1", "plan_sha256", pl->sha256);
	char *txt = a ? jig_json_canonical(a) : NULL;
	json_decref(a);
	if (!txt)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	r = jig_write_file_at(p->statefd, tmp, txt, strlen(txt), 0600, e);
	free(txt);
	if (!r && renameat(p->statefd, tmp, p->statefd, "admission.json") < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s/.jig/admission.json: %s", p->root, strerror(errno));
	return r;
}

int jig_plan_admitted(const struct jig_project *p, char out[JIG_SHA256_HEX], struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	if (jig_read_file_at(p->statefd, "admission.json", 4096, "admission", &buf, &len, &st, &ignored) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: no admitted Plan; run 'jig review' first", p->root);
	json_t *a = NULL;
	const char *sha;
	int r = jig_json_parse_object(buf, len, "admission", &a, e);
	if (!r && (r = jig_json_get_string(a, "plan_sha256", "admission", &sha, e)) == 0) {
		if (strlen(sha) != JIG_SHA256_HEX - 1)
			r = jig_err(e, JIG_E_INTEGRITY, "%s/.jig/admission.json: malformed; review again", p->root);
		else
			memcpy(out, sha, JIG_SHA256_HEX);
	}
	json_decref(a);
	return r;
}
