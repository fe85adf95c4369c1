/* Bindings at run time: Run/0's "call" and "imported", the shape rules
 * and admission before dispatch, the caller's import stages, the record
 * tree (call.h; jig inspect prints it: record_print.c). The ledger is
 * ledger.c; one child's run, child.c. */
#include "run/call.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "effects/worker.h"
#include "run/child.h"
#include "run/ledger.h"
#include "util/fileio.h"
#include "util/text.h"

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reply_refused(struct jig_run0 *r0, json_int_t id, const char *why)
{
	json_t *m = json_pack("{s:s,s:I,s:b,s:s,s:s}", "op", "call", "id", id, "ok", 0, "outcome", "refused", "error", why);
	jig_run0_send(r0, m);
	json_decref(m);
}

/* "imported" (a runtime before decision 115 acknowledged its copy):
 * jig imports now, so it changes nothing. */
static void imported(struct jig_call_caller *caller, json_int_t id)
{
	(void)caller, (void)id;
}

/* Per-call inputs {child input: caller input}: each pair one of the
 * binding's reviewed read map (a whole input of this caller); the child
 * gets exactly these. 0, or -1 with why. */
static int pick_inputs(const struct jig_binding *b, json_t *inputs, bool *pick, char *why, size_t cap)
{
	if (!json_is_object(inputs) || json_object_size(inputs) > JIG_MAX_DECLARED)
		return snprintf(why, cap, "binding %s: inputs must be an object {child input: this Flow's input name}", b->name), -1;
	const char *k;
	json_t *v;
	json_object_foreach(inputs, k, v) {
		const char *s = json_string_value(v);
		size_t i = 0;
		while (i < b->n_read && strcmp(b->read[i].child, k) != 0)
			i++;
		if (!s)
			return snprintf(why, cap, "binding %s: inputs: \"%.64s\" must name one of this Flow's inputs (a string)", b->name, k), -1;
		if (strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
			return snprintf(why, cap,
					"binding %s: inputs: \"%.64s\" <- \"%.64s\" is a path; a child borrows only whole inputs of its caller, by name; refused before dispatch",
					b->name, k, s),
			       -1;
		if (i == b->n_read || strcmp(b->read[i].caller, s) != 0)
			return snprintf(why, cap,
					"binding %s: inputs: \"%.64s\" <- \"%.64s\" is not in its reviewed read map; a child gets only what review allowed; refused before dispatch",
					b->name, k, s),
			       -1;
		pick[i] = true;
	}
	return 0;
}

/* The checks before dispatch (under root->lock): 0, or -1 with why. */
static int admit(struct jig_call_caller *caller, struct jig_child *c, char *why, size_t cap)
{
	struct jig_call_root *root = caller->root;
	unsigned most = caller->level == 0 ? JIG_ROOT_SIBLINGS : JIG_CHILD_FLOWS;
	if (c->picked && pick_inputs(c->b, c->inputs, c->pick, why, cap) < 0)
		return -1;
	if (caller->in_flight >= most)
		return snprintf(why, cap, "binding %s: %s already has %u child Flow%s in flight; %s (shape rule); refused before dispatch", c->b->name,
				caller->f->name, caller->in_flight, caller->in_flight == 1 ? "" : "s",
				caller->level == 0 ? "the root permits two sibling Flows" : "each child permits one Flow or effect"),
		       -1;
	if (caller->level + 1 > JIG_CHILD_LEVELS)
		return snprintf(why, cap, "binding %s: a sixth child level; the longest branch is at most %d child levels (shape rule)", c->b->name,
				JIG_CHILD_LEVELS),
		       -1;
	if (c->b->n_write && caller->stages >= JIG_CALL_MAX_STAGES)
		return snprintf(why, cap, "binding %s: %s has %d import stages not yet imported; at most %d belong to one caller; refused before dispatch",
				c->b->name, caller->f->name, JIG_CALL_MAX_STAGES, JIG_CALL_MAX_STAGES),
		       -1;
	if (root->edges >= JIG_CALL_MAX_LIVE)
		return snprintf(why, cap,
				"binding %s: the Run has %u child Flows live; at most %d live child Flows and import stages, one per child edge (six output backings with the root's); refused before dispatch",
				c->b->name, root->edges, JIG_CALL_MAX_LIVE),
		       -1;
	long long left = root->deadline_ms - mono_ms();
	if (left < 1000)
		return snprintf(why, cap, "binding %s: less than a second of the root's deadline is left; not dispatched", c->b->name), -1;
	c->wall_ms = c->b->timeout_ms < (uint64_t)left ? c->b->timeout_ms : (uint64_t)left;
	json_t *pb = NULL, *v;
	size_t i;
	json_array_foreach(json_object_get(jig_plan_flow(root->pl, caller->f->name), "bindings"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), c->b->name) == 0)
			pb = v;
	if (!pb || jig_reservation_from_json(json_object_get(pb, "reserves"), &c->res) < 0)
		return snprintf(why, cap, "binding %s: the Plan pins no reservation for it; review again", c->b->name), -1;
	c->seq = ++root->seq;
	snprintf(c->key, sizeof(c->key), "child-%u", c->seq);
	snprintf(c->dir, sizeof(c->dir), "child-%u", c->seq);
	/* The root's dispatch reserves the whole branch (its longest admitted
	 * path with its largest effect); a deeper call is inside it. */
	return caller->level == 0 ? jig_ledger_reserve(root, c->key, c->b, &c->res, why, cap) : 0;
}

void jig_call_op(void *caller_v, struct jig_run0 *r0, json_t *op)
{
	struct jig_call_caller *caller = caller_v;
	const char *kind = json_string_value(json_object_get(op, "op"));
	json_t *idv = json_object_get(op, "id");
	json_int_t id = json_is_integer(idv) ? json_integer_value(idv) : -1;
	if (id < 0 || id > INT32_MAX)
		return jig_run0_violation(r0, "a call needs an \"id\" (an integer)");
	if (strcmp(kind, "imported") == 0)
		return json_object_size(op) == 2 ? imported(caller, id) : jig_run0_violation(r0, "malformed \"imported\"");
	if (!jig_run0_take_node(r0)) { /* the record tree's cap (util/limits.h) */
		char cap[96];
		snprintf(cap, sizeof(cap), "more than %d child Flows in one Run's record", JIG_CALL_MAX_NODES);
		return jig_run0_violation(r0, cap);
	}
	const char *name = json_string_value(json_object_get(op, "binding"));
	const struct jig_binding *b = name ? jig_flow_binding(caller->f, name) : NULL;
	static const char *const keys[] = {"op", "id", "binding", "inputs", NULL};
	json_t *inputs = json_object_get(op, "inputs");
	char why[700] = "";
	for (const char *k; !why[0] && (k = jig_effect_unknown_key(op, keys));)
		snprintf(why, sizeof(why), "jig.call: unknown field \"%.40s\"", k);
	if (!why[0] && !b) { /* with the bindings it has */
		size_t len = (size_t)snprintf(why, sizeof(why), "flow %s has no reviewed binding \"%.64s\"; its bindings:", caller->f->name,
					      name ? name : "");
		for (size_t i = 0; i < caller->f->n_bindings && len < sizeof(why); i++)
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s %.64s", i ? "," : "", caller->f->bindings[i].name);
	}
	struct jig_child *c = why[0] ? NULL : jig_child_new(caller, r0, b, id, inputs);
	if (!why[0] && !c)
		snprintf(why, sizeof(why), "out of memory");
	if (why[0])
		return reply_refused(r0, id, why);
	pthread_mutex_lock(&caller->root->lock);
	int ok = c->f && caller->n_threads < JIG_CALL_MAX_CALLS ? admit(caller, c, why, sizeof(why)) : (snprintf(why, sizeof(why), "binding %s: not dispatched", b->name), -1);
	c->inputs = NULL;
	if (!ok) {
		caller->in_flight++, caller->root->edges++;
		if ((c->stage_slot = b->n_write > 0))
			caller->stages++;
		json_object_set_new(c->node, "reservation", jig_reservation_json(&c->res));
		snprintf(c->run_dir, sizeof(c->run_dir), "%s/%s", caller->root->run_dir, c->dir);
		if (pthread_create(&caller->threads[caller->n_threads], NULL, jig_child_main, c) == 0)
			caller->n_threads++;
		else
			ok = -1, snprintf(why, sizeof(why), "binding %s: cannot start its thread", b->name), jig_ledger_release(caller->root, c->key, &c->res),
			caller->in_flight--, caller->root->edges--, caller->stages -= c->stage_slot;
	}
	if (ok) {
		json_object_set_new(c->node, "status", json_string("refused"));
		json_object_set_new(c->node, "why", json_string(why));
		json_array_append(caller->children, c->node);
	}
	pthread_mutex_unlock(&caller->root->lock);
	if (ok) {
		reply_refused(r0, id, why);
		jig_child_free(c);
	}
}

void jig_call_join(struct jig_call_caller *c)
{
	for (size_t i = 0; i < c->n_threads; i++)
		pthread_join(c->threads[i], NULL);
	c->n_threads = 0;
}

void jig_call_output_ready(void *caller_v, int root_fd)
{
	struct jig_call_caller *c = caller_v;
	pthread_mutex_lock(&c->root->lock);
	if (c->outroot >= 0)
		close(c->outroot);
	c->outroot = root_fd;
	pthread_mutex_unlock(&c->root->lock);
}

void jig_call_output_close(struct jig_call_caller *c)
{
	pthread_mutex_lock(&c->root->lock);
	if (c->outroot >= 0)
		close(c->outroot);
	c->outroot = -1;
	pthread_mutex_unlock(&c->root->lock);
}
