/* The Plan's part of bindings (decision 322): the shape rules and the
 * reservations of every Flow taken as a root, and their text; split from
 * binding.c so the project's files (project, binding, recipe) never
 * include the Plan. */
#include "flow/plan_binding.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/binding.h"
#include "flow/plan.h"
#include "util/limits.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/json.h"
#include "util/text.h"

static void max_into(struct jig_reservation *a, const struct jig_reservation *b)
{
	a->memory_bytes = b->memory_bytes > a->memory_bytes ? b->memory_bytes : a->memory_bytes;
	a->tasks = b->tasks > a->tasks ? b->tasks : a->tasks;
	a->cpu_quota_us = b->cpu_quota_us > a->cpu_quota_us ? b->cpu_quota_us : a->cpu_quota_us;
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
		int r = branch(p, pl, root, jig_project_flow(p, f->bindings[0].flow), level + 1, &below, e);
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
		int r = branch(p, pl, f->name, jig_project_flow(p, b->flow), 1, &br, e);
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
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
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
