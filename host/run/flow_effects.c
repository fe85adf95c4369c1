/* A Flow scope's effects and bindings on Run/0: see flow_effects.h. */
#include "run/flow_effects.h"

#include <string.h>

#include "run/call.h"
#include "util/progress.h"

/* Progress (util/progress.h): the effect as it starts, and a line when it
 * ended, with its outcome and how long it took. */
static long long started(const struct jig_flow_effects *fx, const char *kind, json_t *op)
{
	jig_progress_status("flow %s: %s %s ...", fx->f->name, kind, json_string_value(json_object_get(op, "route")) ?: "?");
	return jig_progress_now_ms();
}

static void ended(const struct jig_flow_effects *fx, const char *kind, json_t *op, json_t *ev, long long t0)
{
	long long ms = jig_progress_now_ms() - t0;
	jig_progress_line("flow %s: %s %s: %s (%lld.%llds)", fx->f->name, kind, json_string_value(json_object_get(op, "route")) ?: "?",
			  json_string_value(json_object_get(ev, "outcome")) ?: "no outcome", ms / 1000, (ms % 1000) / 100);
}

void jig_flow_effects_init(struct jig_flow_effects *fx, const struct jig_flow *f, const struct jig_flow_site *s)
{
	fx->f = f;
	fx->http = (struct jig_http_effect_env){.sandbox = s->sb, .plan = s->pl, .init_fd = s->init_fd, .flow = f->name,
						.abort_fd = s->abort_fd, .companion_pid = s->companion_pid};
	fx->agent = (struct jig_agent_effect_env){.http = &fx->http, .sandbox = s->sb, .plan = s->pl, .init_fd = s->init_fd,
						  .abort_fd = s->abort_fd, .companion_pid = s->companion_pid,
						  .statefd = s->statefd};
	fx->command = (struct jig_command_effect_env){.sandbox = s->sb, .plan = s->pl, .init_fd = s->init_fd,
						      .abort_fd = s->abort_fd, .companion_pid = s->companion_pid,
						      .run_dir = s->run_dir, .rundir = s->rundir};
	fx->checkpoint = (struct jig_checkpoint_env){.rundir = s->rundir};
}

/* One timed effect call: the operation's kind names its room's entry. */
static void timed(void *ctx, const char *kind, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	struct jig_flow_effects *fx = ctx;
	long long t0 = started(fx, kind, op);
	if (strcmp(kind, "http") == 0)
		jig_http_effect(&fx->http, fx->f, op, reply, evidence, interrupted);
	else if (strcmp(kind, "agent") == 0)
		jig_agent_effect(&fx->agent, fx->f, op, reply, evidence, interrupted);
	else
		jig_command_effect(&fx->command, fx->f, op, reply, evidence, interrupted);
	ended(fx, kind, op, *evidence, t0);
}

static void http_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	timed(ctx, "http", op, reply, evidence, interrupted);
}

static void agent_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	timed(ctx, "agent", op, reply, evidence, interrupted);
}

static void command_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	timed(ctx, "command", op, reply, evidence, interrupted);
}

/* Run Checkpoint is root-only: review refuses it in a child (binding.c). */
static void checkpoint_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	struct jig_flow_effects *fx = ctx;
	(void)interrupted;
	jig_checkpoint_effect(&fx->checkpoint, op, reply, evidence);
}

int jig_flow_effects_start(struct jig_flow_effects *fx, struct jig_run0 *r0, int fd, int abort_wr, struct jig_call_caller *caller,
			   struct jig_run0_budget *shared)
{
	const struct jig_flow *f = fx->f;
	return jig_run0_start_calls(r0, fd, abort_wr, f->n_http ? http_effect : NULL, f->n_agents ? agent_effect : NULL,
				    f->n_commands ? command_effect : NULL, f->checkpoint ? checkpoint_effect : NULL, fx,
				    caller ? jig_call_op : NULL, caller, shared);
}

bool jig_flow_effects_any(const struct jig_flow *f)
{
	return f->n_http || f->n_agents || f->n_commands || f->checkpoint;
}
