/* What a Flow's scope reaches through Run/0, wired the same for the root
 * and a child: its effects (HTTP, Agents, Project Commands, checkpoints)
 * and its bindings (run/call.h). */
#ifndef JIG_RUN_FLOW_EFFECTS_H
#define JIG_RUN_FLOW_EFFECTS_H

#include "effects/agents.h"
#include "effects/checkpoint.h"
#include "effects/command.h"
#include "effects/http.h"
#include "flow/plan.h"
#include "flow/project.h"
#include "run/run0.h"
#include "sandbox/door.h"

struct jig_call_caller;

/* Where one Flow scope's effects run. */
struct jig_flow_site {
	struct jig_sandbox *sb;
	const struct jig_plan *pl;
	int init_fd, companion_pid;
	int statefd;	     /* <project>/.jig: retained Agent sessions */
	int abort_fd;	     /* readable when the Flow is fenced: its effects are cancelled */
	const char *run_dir; /* the Flow's private run directory */
	int rundir;	     /* the same, open */
};

struct jig_flow_effects {
	const struct jig_flow *f;
	struct jig_http_effect_env http;
	struct jig_agent_effect_env agent;
	struct jig_command_effect_env command;
	struct jig_checkpoint_env checkpoint;
};

/* Wires fx for Flow f at site (fx must not move afterwards: agent points
 * at http). */
void jig_flow_effects_init(struct jig_flow_effects *fx, const struct jig_flow *f, const struct jig_flow_site *site);

/* Starts r0's reader on fd (abort_wr: a violation's abort) with the
 * effects f declares and, with caller, its bindings; shared: the root's
 * record budget for a child, NULL for the root. -1 if it cannot start. */
int jig_flow_effects_start(struct jig_flow_effects *fx, struct jig_run0 *r0, int fd, int abort_wr, struct jig_call_caller *caller,
			   struct jig_run0_budget *shared);

/* Whether f has effects for the record ("effects"). */
bool jig_flow_effects_any(const struct jig_flow *f);

#endif
