#include "run/scope_run.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <jig/trace.h>

#include "flow/plan.h"
#include "proc/reaper.h"
#include "sandbox/scope.h"
#include "snapshot/snapshot.h"
#include "snapshot/verify.h"
#include "util/relay.h"
#include "util/fileio.h"
#include "util/json.h"

_Static_assert(JIG_POLICY_MAX_FDS <= JIG_SCOPE_MAX_FDS, "a policy's descriptors fit a scope");

/* The standard streams reach the scope as pipes, relayed by a thread that
 * starts with the stop signals blocked (jig_launch's ready). */
struct relay_start {
	struct jig_scope_fd *fds;
	size_t n;
	struct jig_relay *relay;
	struct jig_terminal *term; /* NULL: none */
};

/* The pipes for every descriptor but the terminal's (jig's pty slave is
 * given as it is), then the terminal's relay. */
static int relay_start(void *ctx, struct jig_error *e)
{
	struct relay_start *rs = ctx;
	struct jig_scope_fd piped[JIG_SCOPE_MAX_FDS];
	size_t idx[JIG_SCOPE_MAX_FDS], k = 0;
	for (size_t i = 0; i < rs->n; i++)
		if (!rs->term || rs->fds[i].source != rs->term->slave)
			idx[k] = i, piped[k++] = rs->fds[i];
	int r = jig_relay_start(&rs->relay, piped, k, e);
	for (size_t i = 0; i < k; i++)
		rs->fds[idx[i]] = piped[i];
	return r ? r : rs->term ? jig_terminal_start(rs->term, e) : 0;
}

/* A policy for --terminal: its only slot is "@terminal" (descriptors);
 * resolved with jig's pty slave, parsed and live-checked again. */
static int resolve_terminal(const struct jig_scope_policy *p, const struct jig_terminal *term,
			    struct jig_scope_policy *out, struct jig_error *e)
{
	for (size_t i = 0; i < p->n_binds + p->n_rw_binds; i++) {
		const char *src = i < p->n_binds ? p->binds[i].source : p->rw_binds[i - p->n_binds].source;
		if (src[0] == '@')
			return jig_err(e, JIG_E_USAGE, "scope %s: bind source %s: jig scope run fills only the \"@terminal\" slot", p->name, src);
	}
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(p->doc, "descriptors"), i, d) {
		const char *slot = json_string_value(json_object_get(d, "source"));
		if (slot && strcmp(slot, "@terminal") != 0)
			return jig_err(e, JIG_E_USAGE, "scope %s: descriptor slot %s: jig scope run fills only \"@terminal\"", p->name, slot);
	}
	const struct jig_scope_slot slots[] = {{"terminal", term->slave}};
	struct jig_scope_run run = {.slots = slots, .n_slots = 1};
	return jig_scope_policy_resolve(p, &run, jig_caller_home(), out, e);
}

static int scope_run_checked(const struct jig_scope_policy *p, char *const *prog, struct jig_terminal *term,
			     struct jig_scope_result *res, struct jig_error *e);

int jig_scope_run(const struct jig_scope_policy *p, char *const *prog, struct jig_terminal *term,
		  struct jig_scope_result *res, struct jig_error *e)
{
	memset(res, 0, sizeof(*res));
	res->held_fd = -1;
	if (geteuid() == 0)
		return jig_err(e, JIG_E_HOST, "refusing to run a scope as root; jig is a rootless tool, run it as an unprivileged user");
	JIG_TRACE_POINT("scope: policy parsed");
	struct jig_scope_policy resolved = {0};
	int r = term ? resolve_terminal(p, term, &resolved, e) : jig_scope_policy_check_host(p, e);
	if (r)
		return r;
	r = scope_run_checked(term ? &resolved : p, prog, term, res, e);
	jig_scope_policy_free(&resolved);
	return r;
}

static int scope_run_checked(const struct jig_scope_policy *p, char *const *prog, struct jig_terminal *term,
			     struct jig_scope_result *res, struct jig_error *e)
{
	int r;
	/* The installed files this scope uses are verified as for jig run:
	 * by the operator's mode (JIG_VERIFICATION; cached by default), so an
	 * unchanged launcher, an unchanged root-owned sandbox module and a
	 * manifest signature already verified byte for byte are not hashed or
	 * verified again on every launch (decision 85). */
	struct jig_verifier v;
	if ((r = jig_verifier_init(&v, NULL, JIG_VERIFY_CACHED, e)))
		return r;
	char libdir[PATH_MAX];
	struct jig_snapshot s;
	struct jig_signature_memo memo = jig_verifier_signature_memo(&v);
	if ((r = jig_snapshot_default_libdir(libdir, sizeof(libdir), e)) ||
	    (r = jig_snapshot_open_installed_memo(&s, libdir, &memo, e))) {
		jig_verifier_finish(&v);
		return r;
	}
	JIG_TRACE_POINT("scope: snapshot opened");
	s.verifier = &v;
	struct jig_sandbox sb;
	if ((r = jig_sandbox_open(&sb, &s, e))) {
		jig_verifier_finish(&v);
		jig_snapshot_close(&s);
		return r;
	}
	JIG_TRACE_POINT("scope: sandbox module loaded");
	/* If this supervisor is SIGKILLed, its reaper removes what it left. */
	struct jig_reaper reaper;
	jig_reaper_start(&reaper, &sb);
	/* The launcher must be the snapshot's own, byte for byte; the
	 * descriptor that was hashed is the one bwrap binds. Standard streams
	 * reach the scope as pipes, never as the caller's terminal or files. */
	int init_fd = jig_verifier_open(&v, &s, JIG_SCOPE_INIT_FILE, e);
	JIG_TRACE_POINT("scope: launcher hashed");
	struct jig_scope_fd fds[JIG_SCOPE_MAX_FDS];
	memcpy(fds, p->fds, p->n_fds * sizeof(*fds));
	/* ^C, hang-up or kill of jig scope run fences the scope: blocked here
	 * (and in the relay thread, started once they are) and relayed to the
	 * supervisor. */
	struct relay_start rs = {.fds = fds, .n = p->n_fds, .term = term};
	bool ctty = false;
	for (size_t i = 0; term && i < p->n_fds; i++)
		ctty |= fds[i].target == 0 && fds[i].source == term->slave;
	struct jig_launch st = {.sb = &sb, .policy = p,
				.l = {.init_fd = init_fd, .argv = (const char *const *)prog, .abort_fd = -1, .fds = fds,
				      .companion_pid = reaper.pid > 0 ? reaper.pid : 0, .controlling_tty = ctty},
				.stop = JIG_LAUNCH_STOP_KEEP, .ready = relay_start, .ctx = &rs};
	JIG_TRACE_POINT("scope: launcher verified");
	r = init_fd < 0 ? init_fd : jig_launch(&st, res, e);
	if (r && st.launched)
		r = jig_err(e, JIG_E_HOST, "scope %s refused: %s", p->name, e->msg);
	JIG_TRACE_POINT("scope: launch returned");
	jig_relay_finish(rs.relay);
	/* The operator's terminal mode back on every path (before the stop
	 * signals are unblocked: nothing can end jig in between). */
	if (term)
		jig_terminal_stop(term);
	if (st.launched)
		jig_sandbox_interrupt_close(st.interrupt, &st.saved);
	jig_reaper_stop(&reaper);
	if (init_fd >= 0)
		close(init_fd);
	jig_sandbox_close(&sb);
	jig_verifier_finish(&v);
	jig_snapshot_close(&s);
	return r;
}

int jig_scope_exit_status(const struct jig_scope_result *res)
{
	if (!res->cleanup_confirmed)
		return JIG_E_INTERNAL;
	switch (res->outcome) {
	case JIG_SCOPE_EXITED:
		return res->exit_status;
	case JIG_SCOPE_SIGNALED:
	case JIG_SCOPE_CRASHED:
		return 128 + res->signal;
	case JIG_SCOPE_TIMEOUT:
		return 124;
	case JIG_SCOPE_OOM:
		return 125;
	default:
		return JIG_E_INTERNAL;
	}
}
