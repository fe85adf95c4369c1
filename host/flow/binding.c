/* Bindings: flow.json, the links, the resources, the reservations (binding.h;
 * their part of the Plan: plan_binding.c). */
#include "flow/binding.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>

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
