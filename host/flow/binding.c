/* Bindings: flow.json, the shape rules, the reservations (binding.h). */
#include "flow/binding.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>

#include "flow/plan.h"
#include "util/limits.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

static int oom(struct jig_error *e)
{
	return jig_err(e, JIG_E_INTERNAL, "out of memory");
}

static int parse_map(json_t *obj, const char *key, const char *w, struct jig_binding_map **out, size_t *n,
		     struct jig_error *e)
{
	json_t *m = json_object_get(obj, key);
	if (!m)
		return 0;
	if (!json_is_object(m) || json_object_size(m) > JIG_MAX_DECLARED)
		return jig_err(e, JIG_E_USAGE, "%s: %s must be an object of at most %d names", w, key, JIG_MAX_DECLARED);
	if (!(*out = calloc(json_object_size(m) + 1, sizeof(**out))))
		return oom(e);
	const char *k;
	json_t *v;
	json_object_foreach(m, k, v) {
		const char *s = json_string_value(v);
		if (!s)
			return jig_err(e, JIG_E_USAGE, "%s: %s: \"%.64s\" must map to a name (a string)", w, key, k);
		struct jig_binding_map *bm = &(*out)[(*n)++];
		if (!(bm->child = strdup(k)) || !(bm->caller = strdup(s)))
			return oom(e);
	}
	return 0;
}

/* "resources": {child input: project-relative directory}. */
static int parse_resources(json_t *b, const char *w, struct jig_binding *bd, struct jig_error *e)
{
	struct jig_binding_map *m = NULL;
	size_t n = 0;
	int r = parse_map(b, "resources", w, &m, &n, e);
	if (!r && n && !(bd->res = calloc(n, sizeof(*bd->res))))
		r = oom(e);
	for (size_t i = 0; i < n; i++) {
		if (!r && bd->res) {
			bd->res[bd->n_res++] = (struct jig_binding_res){.child = m[i].child, .path = m[i].caller};
			m[i].child = m[i].caller = NULL;
		}
		free(m[i].child);
		free(m[i].caller);
	}
	free(m);
	for (size_t i = 0; !r && i < bd->n_res; i++) {
		const char *path = bd->res[i].path;
		bool state = false;
		for (const char *c = path; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL)
			state |= strncmp(c, JIG_STATE_DIR, 4) == 0 && (c[4] == '/' || c[4] == '\0');
		if (!jig_path_is_normal_relative(path))
			r = jig_err(e, JIG_E_USAGE, "%s: resources: \"%.64s\": \"%.200s\" is not a normalised project-relative path (no leading /, no . or .. parts)",
				    w, bd->res[i].child, path);
		else if (state)
			r = jig_err(e, JIG_E_USAGE, "%s: resources: \"%.64s\": the protected .jig state is never a resource", w, bd->res[i].child);
	}
	return r;
}

int jig_binding_parse(json_t *obj, const char *what, struct jig_flow *f, struct jig_error *e)
{
	if (!obj)
		return 0;
	if (!json_is_object(obj) || json_object_size(obj) > JIG_BINDING_MAX)
		return jig_err(e, JIG_E_USAGE, "%s: bindings: must be an object of at most %d bindings", what, JIG_BINDING_MAX);
	if (!(f->bindings = calloc(json_object_size(obj) + 1, sizeof(*f->bindings))))
		return oom(e);
	static const char *const keys[] = {"flow", "timeout_ms", "read", "write", "resources", NULL};
	const char *name, *flow;
	json_t *b;
	json_object_foreach(obj, name, b) {
		char w[300];
		int r;
		if (!jig_valid_name(name))
			return jig_err(e, JIG_E_USAGE, "%s: bindings: name \"%.64s\" must be of [a-z0-9_-]", what, name);
		snprintf(w, sizeof(w), "%s: binding \"%s\"", what, name);
		struct jig_binding *bd = &f->bindings[f->n_bindings++];
		if (!json_is_object(b))
			return jig_err(e, JIG_E_USAGE, "%s: must be an object {\"flow\", \"timeout_ms\", \"read\"?, \"write\"?}", w);
		if ((r = jig_json_only_keys(b, keys, w, e)) || (r = jig_json_get_string(b, "flow", w, &flow, e)))
			return r;
		if (!json_object_get(b, "timeout_ms"))
			return jig_err(e, JIG_E_USAGE, "%s: needs \"timeout_ms\" (%d-%d), the child's deadline", w, JIG_BINDING_TIMEOUT_MIN,
				       JIG_BINDING_TIMEOUT_MAX);
		if ((r = jig_json_get_uint(b, "timeout_ms", w, JIG_BINDING_TIMEOUT_MIN, JIG_BINDING_TIMEOUT_MAX, &bd->timeout_ms, e)) ||
		    (r = parse_map(b, "read", w, &bd->read, &bd->n_read, e)) ||
		    (r = parse_map(b, "write", w, &bd->write, &bd->n_write, e)) || (r = parse_resources(b, w, bd, e)))
			return r;
		if (!(bd->name = strdup(name)) || !(bd->flow = strdup(flow)))
			return oom(e);
	}
	return 0;
}

static void free_map(struct jig_binding_map *m, size_t n)
{
	for (size_t i = 0; m && i < n; i++) {
		free(m[i].child);
		free(m[i].caller);
	}
	free(m);
}

void jig_binding_free(struct jig_flow *f)
{
	for (size_t i = 0; f->bindings && i < f->n_bindings; i++) {
		free(f->bindings[i].name);
		free(f->bindings[i].flow);
		free_map(f->bindings[i].read, f->bindings[i].n_read);
		free_map(f->bindings[i].write, f->bindings[i].n_write);
		for (size_t k = 0; k < f->bindings[i].n_res; k++) {
			free(f->bindings[i].res[k].child);
			free(f->bindings[i].res[k].path);
		}
		free(f->bindings[i].res);
	}
	free(f->bindings);
	f->bindings = NULL;
	f->n_bindings = 0;
}

/* One resource tree: beneath the project root, no symlink on the way, a
 * directory, within the child's input caps; hashed, then stored. */
static int capture_res(struct jig_project *p, const struct jig_flow *f, const struct jig_binding *b, struct jig_binding_res *rs,
		       bool store, uint64_t *used, struct jig_error *e)
{
	char what[300];
	snprintf(what, sizeof(what), "flow %s binding %s resource %s", f->name, b->name, rs->child);
	jig_autoclose int fd = jig_open_beneath(p->rootfd, rs->path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "flow %s binding %s: resources: \"%s\": %s: %s", f->name, b->name, rs->child, rs->path,
			       errno == ELOOP || errno == ENOTDIR ? "is not a directory of the project, or passes through a symbolic link; refused"
								  : strerror(errno));
	int r = jig_store_capture_tree(p, fd, what, false, used, rs->sha256, &rs->bytes, &rs->files, e);
	if (r)
		return r;
	if (rs->files > JIG_INPUT_MAX_FILES || rs->bytes > JIG_INPUT_MAX_BYTES)
		return jig_err(e, JIG_E_USAGE,
			       "flow %s binding %s: resources: \"%s\": %s has %zu files and %llu bytes; a child's inputs and resource trees are at most %d files and %llu bytes together; refused",
			       f->name, b->name, rs->child, rs->path, rs->files, (unsigned long long)rs->bytes, JIG_INPUT_MAX_FILES,
			       (unsigned long long)JIG_INPUT_MAX_BYTES);
	return store ? jig_store_capture_tree(p, fd, what, true, used, rs->sha256, &rs->bytes, &rs->files, e) : 0;
}

int jig_binding_capture(struct jig_project *p, bool store, uint64_t *used, struct jig_error *e)
{
	for (size_t i = 0; i < p->n_flows; i++)
		for (size_t k = 0; k < p->flows[i].n_bindings; k++) {
			struct jig_binding *b = &p->flows[i].bindings[k];
			size_t files = 0;
			uint64_t bytes = 0;
			for (size_t j = 0; j < b->n_res; j++) {
				int r = capture_res(p, &p->flows[i], b, &b->res[j], store, used, e);
				if (r)
					return r;
				files += b->res[j].files;
				bytes += b->res[j].bytes;
			}
			if (files > JIG_INPUT_MAX_FILES || bytes > JIG_INPUT_MAX_BYTES)
				return jig_err(e, JIG_E_USAGE,
					       "flow %s binding %s: resources: %zu files and %llu bytes together; a child's inputs and resource trees are at most %d files and %llu bytes together; refused",
					       p->flows[i].name, b->name, files, (unsigned long long)bytes, JIG_INPUT_MAX_FILES,
					       (unsigned long long)JIG_INPUT_MAX_BYTES);
		}
	return 0;
}

const struct jig_binding *jig_flow_binding(const struct jig_flow *f, const char *name)
{
	for (size_t i = 0; i < f->n_bindings; i++)
		if (f->bindings[i].name && strcmp(f->bindings[i].name, name) == 0)
			return &f->bindings[i];
	return NULL;
}

static const struct jig_flow *find_flow(const struct jig_project *p, const char *name)
{
	for (size_t i = 0; i < p->n_flows; i++)
		if (strcmp(p->flows[i].name, name) == 0)
			return &p->flows[i];
	return NULL;
}

static bool listed(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* One binding's maps against the caller's and the child's declarations:
 * the child gets every input it declares, each a whole input of its
 * immediate caller; a write map sends a declared child output to a
 * declared caller output, each caller output at most once. */
static int check_maps(const struct jig_flow *caller, const struct jig_binding *b, const struct jig_flow *child,
		      struct jig_error *e)
{
	const char *w = caller->name, *n = b->name;
	char list[400];
	for (size_t i = 0; i < b->n_read; i++) {
		if (!listed(child->inputs, child->n_inputs, b->read[i].child))
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: read map: flow %s declares no input \"%s\"; its inputs: %s", w, n, child->name,
				       b->read[i].child, jig_text_list(list, sizeof(list), child->inputs, child->n_inputs));
		if (!listed(caller->inputs, caller->n_inputs, b->read[i].caller))
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: read map: \"%s\" is not one of this Flow's declared inputs; a child borrows only its caller's whole inputs",
				       w, n, b->read[i].caller);
	}
	for (size_t i = 0; i < b->n_res; i++) {
		if (!listed(child->inputs, child->n_inputs, b->res[i].child))
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: resources: flow %s declares no input \"%s\"; its inputs: %s", w, n, child->name,
				       b->res[i].child, jig_text_list(list, sizeof(list), child->inputs, child->n_inputs));
		for (size_t k = 0; k < b->n_read; k++)
			if (strcmp(b->read[k].child, b->res[i].child) == 0)
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: flow %s's input \"%s\" is both in the read map and a resource tree", w,
					       n, child->name, b->res[i].child);
	}
	for (size_t k = 0; k < child->n_inputs; k++) {
		bool mapped = false;
		for (size_t i = 0; i < b->n_read; i++)
			mapped |= strcmp(b->read[i].child, child->inputs[k]) == 0;
		for (size_t i = 0; i < b->n_res; i++)
			mapped |= strcmp(b->res[i].child, child->inputs[k]) == 0;
		if (!mapped)
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: read map: flow %s's input \"%s\" is not mapped (read map or resources)", w, n, child->name,
				       child->inputs[k]);
	}
	for (size_t i = 0; i < b->n_write; i++) {
		if (!listed(child->outputs, child->n_outputs, b->write[i].child))
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: write map: flow %s declares no output \"%s\"", w, n, child->name,
				       b->write[i].child);
		if (!listed(caller->outputs, caller->n_outputs, b->write[i].caller))
			return jig_err(e, JIG_E_USAGE, "flow %s binding %s: write map: \"%s\" is not one of this Flow's declared outputs", w, n,
				       b->write[i].caller);
		for (size_t j = 0; j < i; j++)
			if (strcmp(b->write[j].caller, b->write[i].caller) == 0)
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: write map: output \"%s\" is written twice", w, n,
					       b->write[i].caller);
	}
	return 0;
}

int jig_binding_link(struct jig_project *p, struct jig_error *e)
{
	for (size_t i = 0; i < p->n_flows; i++) {
		struct jig_flow *f = &p->flows[i];
		for (size_t k = 0; k < f->n_bindings; k++) {
			const struct jig_binding *b = &f->bindings[k];
			struct jig_flow *child = (struct jig_flow *)find_flow(p, b->flow);
			char known[512];
			if (!child)
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: the project has no Flow \"%s\"; its Flows: %s", f->name, b->name,
					       b->flow, jig_project_flow_names(p, known, sizeof(known)));
			if (jig_flow_http_grant(f, b->name) || jig_flow_agent_grant(f, b->name) || jig_flow_command_grant(f, b->name))
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: is also a route's name; a name means one grant", f->name, b->name);
			/* A recipe's only grant is markdown-agent, and its envelope the
			 * markdown-flow kind's (decision 76): no binding relation. */
			if (f->recipe || child->recipe)
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: a Markdown Flow (%s) cannot take part in a binding", f->name,
					       b->name, f->recipe ? f->name : child->name);
			/* Run Checkpoint is root-only (decision 71), and the runtime's
			 * checkpoint is not answered beside calls in flight: no
			 * checkpoint in a binding relation, for now. */
			if (f->checkpoint || child->checkpoint)
				return jig_err(e, JIG_E_USAGE, "flow %s binding %s: Run Checkpoint is root-only and not beside bindings: %s grants it",
					       f->name, b->name, f->checkpoint ? f->name : child->name);
			int r = check_maps(f, b, child, e);
			if (r)
				return r;
			f->bound = child->bound = true;
		}
	}
	return 0;
}

/* --- reservations and the shape rules ----------------------------------- */

void jig_reservation_add(struct jig_reservation *a, const struct jig_reservation *b)
{
	a->memory_bytes += b->memory_bytes;
	a->tasks += b->tasks;
	a->cpu_quota_us += b->cpu_quota_us;
}

static void max_into(struct jig_reservation *a, const struct jig_reservation *b)
{
	a->memory_bytes = b->memory_bytes > a->memory_bytes ? b->memory_bytes : a->memory_bytes;
	a->tasks = b->tasks > a->tasks ? b->tasks : a->tasks;
	a->cpu_quota_us = b->cpu_quota_us > a->cpu_quota_us ? b->cpu_quota_us : a->cpu_quota_us;
}

int jig_reservation_fits(const struct jig_reservation *r)
{
	return r->memory_bytes <= JIG_ROOT_MEMORY_BYTES && r->tasks <= JIG_ROOT_TASKS && r->cpu_quota_us <= JIG_ROOT_CPU_QUOTA_US;
}

json_t *jig_reservation_json(const struct jig_reservation *r)
{
	return json_pack("{s:I,s:I,s:I}", "memory_bytes", (json_int_t)r->memory_bytes, "tasks", (json_int_t)r->tasks,
			 "cpu_quota_us", (json_int_t)r->cpu_quota_us);
}

int jig_reservation_from_json(json_t *v, struct jig_reservation *r)
{
	json_t *m = json_object_get(v, "memory_bytes"), *t = json_object_get(v, "tasks"), *c = json_object_get(v, "cpu_quota_us");
	if (!json_is_integer(m) || !json_is_integer(t) || !json_is_integer(c) || json_integer_value(m) < 0 ||
	    json_integer_value(t) < 0 || json_integer_value(c) < 0)
		return -1;
	*r = (struct jig_reservation){(uint64_t)json_integer_value(m), (uint64_t)json_integer_value(t), (uint64_t)json_integer_value(c)};
	return 0;
}

static struct jig_reservation of_scope(const struct jig_scope_template *t)
{
	const struct jig_scope_limits *l = &t->policy.limits;
	return (struct jig_reservation){l->memory_bytes, l->tasks, l->cpu_quota_us};
}

/* The largest possible effect of f: the maximum of its routes' scopes. */
static struct jig_reservation largest_effect(const struct jig_plan *pl, const struct jig_flow *f)
{
	struct jig_reservation r = {0};
	for (size_t i = 0; i < pl->n_scopes; i++)
		if (pl->scopes[i].route && strcmp(pl->scopes[i].flow, f->name) == 0) {
			struct jig_reservation s = of_scope(&pl->scopes[i].t);
			max_into(&r, &s);
		}
	return r;
}

static bool has_effects(const struct jig_flow *f)
{
	return f->n_http || f->n_agents || f->n_commands;
}

static void mib_cpu(const struct jig_reservation *r, char *out, size_t cap)
{
	snprintf(out, cap, "%llu MiB, %llu tasks, %.1f CPU", (unsigned long long)(r->memory_bytes >> 20),
		 (unsigned long long)r->tasks, (double)r->cpu_quota_us / 100000.0);
}

/* The reservation of the branch below child f at level (1 = the root's
 * child): f's own envelope and the larger of its one child Flow's branch
 * and its largest effect. */
static int branch(const struct jig_project *p, const struct jig_plan *pl, const char *root, const struct jig_flow *f,
		  unsigned level, struct jig_reservation *out, struct jig_error *e)
{
	if (level > JIG_CHILD_LEVELS)
		return jig_err(e, JIG_E_USAGE,
			       "flow %s: flow %s would be child level %u; the longest branch is at most %d child Flow levels (shape rule); refused",
			       root, f->name, level, JIG_CHILD_LEVELS);
	if (f->n_bindings > JIG_CHILD_FLOWS)
		return jig_err(e, JIG_E_USAGE, "flow %s: child flow %s has %zu bindings; each child permits one Flow or effect (shape rule); refused",
			       root, f->name, f->n_bindings);
	if (f->n_bindings && has_effects(f))
		return jig_err(e, JIG_E_USAGE,
			       "flow %s: child flow %s has a binding beside its effect routes; each child permits one Flow or effect (shape rule); refused",
			       root, f->name);
	const struct jig_scope_template *t = jig_plan_scope(pl, f->name, NULL);
	if (!t)
		return jig_err(e, JIG_E_INTERNAL, "flow %s has no composed scope", f->name);
	*out = of_scope(t);
	struct jig_reservation below = largest_effect(pl, f);
	if (f->n_bindings) {
		int r = branch(p, pl, root, find_flow(p, f->bindings[0].flow), level + 1, &below, e);
		if (r)
			return r;
	}
	jig_reservation_add(out, &below);
	return 0;
}

/* f as a root: the shape at the root, each branch, the sum. */
static int as_root(const struct jig_project *p, const struct jig_plan *pl, const struct jig_flow *f, json_t *fj,
		   struct jig_error *e)
{
	if (f->n_bindings > JIG_ROOT_SIBLINGS)
		return jig_err(e, JIG_E_USAGE, "flow %s: %zu bindings; the root permits two sibling Flows (shape rule); refused", f->name,
			       f->n_bindings);
	if (f->n_bindings && has_effects(f))
		return jig_err(e, JIG_E_USAGE,
			       "flow %s: a binding beside effect routes; the root permits two sibling Flows or one exclusive effect, not a Flow beside an exclusive effect (shape rule); refused",
			       f->name);
	const struct jig_scope_template *t = jig_plan_scope(pl, f->name, NULL);
	if (!t)
		return jig_err(e, JIG_E_INTERNAL, "flow %s has no composed scope", f->name);
	struct jig_reservation sum = of_scope(t), eff = largest_effect(pl, f);
	jig_reservation_add(&sum, &eff);
	json_t *bj = json_array();
	for (size_t k = 0; k < f->n_bindings; k++) {
		const struct jig_binding *b = &f->bindings[k];
		struct jig_reservation br;
		int r = branch(p, pl, f->name, find_flow(p, b->flow), 1, &br, e);
		if (r) {
			json_decref(bj);
			return r;
		}
		jig_reservation_add(&sum, &br);
		json_t *rd = json_object(), *wr = json_object();
		for (size_t i = 0; i < b->n_read; i++)
			json_object_set_new(rd, b->read[i].child, json_string(b->read[i].caller));
		for (size_t i = 0; i < b->n_write; i++)
			json_object_set_new(wr, b->write[i].child, json_string(b->write[i].caller));
		json_t *bo = json_pack("{s:s,s:s,s:I,s:o,s:o,s:o}", "name", b->name, "flow", b->flow, "timeout_ms", (json_int_t)b->timeout_ms,
				       "read", rd, "write", wr, "reserves", jig_reservation_json(&br));
		if (b->n_res) { /* only then: Plans without resource trees keep their identity */
			json_t *rs = json_object();
			for (size_t i = 0; i < b->n_res; i++)
				json_object_set_new(rs, b->res[i].child,
						    json_pack("{s:s,s:s,s:I,s:I}", "path", b->res[i].path, "sha256", b->res[i].sha256, "files",
							      (json_int_t)b->res[i].files, "bytes", (json_int_t)b->res[i].bytes));
			json_object_set_new(bo, "resources", rs);
		}
		json_array_append_new(bj, bo);
	}
	if (!jig_reservation_fits(&sum)) {
		json_decref(bj);
		char got[96], cap[96];
		struct jig_reservation budget = {JIG_ROOT_MEMORY_BYTES, JIG_ROOT_TASKS, JIG_ROOT_CPU_QUOTA_US};
		mib_cpu(&sum, got, sizeof(got));
		mib_cpu(&budget, cap, sizeof(cap));
		return jig_err(e, JIG_E_USAGE, "flow %s: its branches reserve %s with the root; reservations over the root budget of %s; refused",
			       f->name, got, cap);
	}
	if (f->bound) {
		json_object_set_new(fj, "bindings", bj);
		json_object_set_new(fj, "root_reservation", jig_reservation_json(&sum));
	} else
		json_decref(bj);
	return 0;
}

int jig_binding_plan(const struct jig_project *p, const struct jig_plan *pl, json_t *flows, json_t **budget,
		     struct jig_error *e)
{
	*budget = NULL;
	bool any = false;
	for (size_t i = 0; i < p->n_flows; i++) {
		json_t *fj = json_array_get(flows, i);
		int r = as_root(p, pl, &p->flows[i], fj, e);
		if (r)
			return r;
		any |= p->flows[i].bound;
	}
	/* The fault point stands for a jig built with another reservation
	 * policy (one task less), so a test can run one against an admission
	 * made under this one (bindings.budget_policy_pinned, R-L04). */
	json_int_t tasks = JIG_FAULT_FAILS("another reservation policy") ? JIG_ROOT_TASKS - 1 : JIG_ROOT_TASKS;
	if (any && !(*budget = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "format", JIG_ROOT_BUDGET_FORMAT, "memory_bytes",
					 (json_int_t)JIG_ROOT_MEMORY_BYTES, "tasks", tasks, "cpu_quota_us",
					 (json_int_t)JIG_ROOT_CPU_QUOTA_US, "cpu_period_us", (json_int_t)100000, "root_siblings",
					 (json_int_t)JIG_ROOT_SIBLINGS, "child_flows", (json_int_t)JIG_CHILD_FLOWS, "child_levels",
					 (json_int_t)JIG_CHILD_LEVELS, "borrowing", 0)))
		return oom(e);
	return 0;
}

static void print_map(FILE *out, json_t *m, const char *arrow)
{
	const char *k;
	json_t *v;
	int n = 0;
	json_object_foreach(m, k, v)
		fprintf(out, "%s%s %s %s", n++ ? ", " : " ", k, arrow, json_string_value(v));
	if (!n)
		fputs(" nothing", out);
}

size_t jig_binding_print(FILE *out, json_t *fj, json_t *was)
{
	size_t i, j, kept = 0;
	json_t *b, *w;
	json_array_foreach(json_object_get(fj, "bindings"), i, b) {
		bool same = false;
		json_array_foreach(json_object_get(was, "bindings"), j, w)
			same |= json_equal(w, b);
		if (same) { /* exactly the admitted binding: its grants were shown then */
			kept++;
			continue;
		}
		struct jig_reservation r = {0};
		jig_reservation_from_json(json_object_get(b, "reserves"), &r);
		char res[96];
		mib_cpu(&r, res, sizeof(res));
		fprintf(out, "    binding %s -> flow %s: deadline %lld ms (capped by the root's); reads", json_string_value(json_object_get(b, "name")),
			json_string_value(json_object_get(b, "flow")), json_integer_value(json_object_get(b, "timeout_ms")));
		print_map(out, json_object_get(b, "read"), "<-");
		fputs("; writes", out);
		print_map(out, json_object_get(b, "write"), "->");
		const char *rk;
		json_t *rv;
		json_object_foreach(json_object_get(b, "resources"), rk, rv)
			fprintf(out, "\n      resource tree %s <- %s (read-only, captured: %lld files, %lld bytes, %.12s)", rk,
				json_string_value(json_object_get(rv, "path")), json_integer_value(json_object_get(rv, "files")),
				json_integer_value(json_object_get(rv, "bytes")), json_string_value(json_object_get(rv, "sha256")));
		fprintf(out, "\n      its branch reserves %s of the root budget before dispatch, until its cleanup is confirmed\n", res);
	}
	json_t *rr = json_object_get(fj, "root_reservation");
	if (rr && json_array_size(json_object_get(fj, "bindings")) && !(was && json_equal(rr, json_object_get(was, "root_reservation")))) {
		struct jig_reservation r = {0};
		jig_reservation_from_json(rr, &r);
		const struct jig_reservation root = {JIG_ROOT_MEMORY_BYTES, JIG_ROOT_TASKS, JIG_ROOT_CPU_QUOTA_US};
		char res[96], budget[96];
		mib_cpu(&r, res, sizeof(res));
		mib_cpu(&root, budget, sizeof(budget));
		fprintf(out, "    as a root with its branches: at most %s reserved (budget %s)\n", res, budget);
	}
	return kept;
}
