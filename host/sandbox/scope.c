/* One launch of a scope: see scope.h. */
#include "sandbox/scope.h"

#include <errno.h>
#include <string.h>

#include "sandbox/netrelay.h"
#include "util/fileio.h"

int jig_launch(struct jig_launch *s, struct jig_scope_result *res, struct jig_error *e)
{
	*res = (struct jig_scope_result){.held_fd = -1};
	s->launched = false;
	s->interrupt = -1;
	struct jig_scope_launch l = s->l;
	l.interrupt_fd = -1;
	struct jig_scope_policy resolved;
	const struct jig_scope_policy *p = s->policy;
	int rc = 0;
	if (s->t) {
		l.policy_sha256 = l.policy_sha256 ? l.policy_sha256 : s->t->policy.sha256; /* a session pins its own */
		l.hold_path = s->t->hold;
		l.argv = l.argv ? l.argv : (const char *const *)s->t->argv;
		if ((rc = jig_scope_policy_resolve(&s->t->policy, &s->run, jig_caller_home(), &resolved, e)))
			return rc;
		p = &resolved;
	}
	/* An exact network grant: its relay for the scope's lifetime, from
	 * the policy alone, whatever the kind. */
	struct jig_netrelay *relay = NULL;
	if (p->n_listeners && (rc = jig_netrelay_start(p, &relay, e)) == 0) {
		l.listen_ready = jig_netrelay_listen_ready;
		l.listen_ctx = relay;
	}
	struct jig_scope sc;
	sigset_t saved;
	if (!rc)
		rc = jig_scope_describe(p, &l, &sc, e);
	bool opened = !rc && s->stop != JIG_LAUNCH_STOP_NONE;
	if (opened && (sc.interrupt_fd = jig_sandbox_interrupt_open(&saved)) < 0)
		rc = jig_err(e, JIG_E_INTERNAL, "signalfd: %s", strerror(errno));
	if (!rc && s->ready)
		rc = s->ready(s->ctx, e);
	if (!rc) {
		s->launched = true;
		if (jig_sandbox_launch(s->sb, &sc, res) != JIG_MOD_OK)
			rc = jig_err(e, JIG_E_HOST, "%s", res->error[0] ? res->error : "launch failed");
	}
	jig_netrelay_stop(relay); /* the scope is fenced */
	if (opened && s->stop == JIG_LAUNCH_STOP_KEEP && s->launched)
		s->interrupt = sc.interrupt_fd, s->saved = saved;
	else if (opened)
		jig_sandbox_interrupt_close(sc.interrupt_fd, &saved);
	if (s->t)
		jig_scope_policy_free(&resolved);
	return rc;
}
