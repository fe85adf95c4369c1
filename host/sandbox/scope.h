/* One launch of a scope, the same for every kind jig runs (a Flow, a child
 * Flow, a Project Command, an effect's worker, the installer, jig scope
 * run): the Plan's composed template resolved with this launch's slot
 * values, described, the interrupt opened, the caller's set-up, the
 * launch; then the interrupt closed (unless kept) and the resolved policy
 * freed. The sandbox room uses policy here; policy never uses sandbox. */
#ifndef JIG_SANDBOX_SCOPE_H
#define JIG_SANDBOX_SCOPE_H

#include <signal.h>
#include <stdbool.h>

#include "policy/catalog.h"
#include "policy/scope_policy.h"
#include "sandbox/door.h"
#include "util/error.h"

/* The launch's stop request (SIGINT, SIGTERM, SIGHUP relayed to the
 * supervisor through a signalfd: struct jig_scope.interrupt_fd). */
enum jig_launch_stop {
	JIG_LAUNCH_STOP_NONE,	/* none: the abort descriptor alone (a child Flow) */
	JIG_LAUNCH_STOP_AROUND, /* opened before the launch, closed (the mask restored) after it */
	JIG_LAUNCH_STOP_KEEP,	/* opened before the launch; once launched, the caller's
				 * (interrupt, saved); closed when nothing was */
};

struct jig_launch {
	struct jig_sandbox *sb;
	/* What runs: the composed template t resolved with run's values, or
	 * (t NULL) policy as it is (jig scope run's, checked, no slots). */
	const struct jig_scope_template *t;
	struct jig_scope_run run;
	const struct jig_scope_policy *policy;
	/* What the launch adds. With t: its digest and held directory are t's,
	 * and its argv when l.argv is NULL. interrupt_fd is set here. */
	struct jig_scope_launch l;
	enum jig_launch_stop stop;
	/* Called after the interrupt is open (a thread it starts inherits the
	 * blocked signals), just before the launch; NULL: none. */
	int (*ready)(void *ctx, struct jig_error *e);
	void *ctx;
	/* Out: whether the module was asked to launch (res is its result);
	 * launched with JIG_LAUNCH_STOP_KEEP, the signalfd (or -1) and the mask
	 * before it, for jig_sandbox_interrupt_close or to keep. */
	bool launched;
	int interrupt;
	sigset_t saved;
};

/* 0 when the scope ran and is fenced: res is complete and res->held_fd
 * (the held directory, or -1) is the caller's. Otherwise -code with e:
 * nothing launched (resolve, describe, the interrupt, ready), or, with
 * s->launched, the module's refusal (e says res->error). */
int jig_launch(struct jig_launch *s, struct jig_scope_result *res, struct jig_error *e);

#endif
