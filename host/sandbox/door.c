#include "sandbox/door.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* Is op within what the module's descriptor says its ops table holds? */
#define HAS_OP(sb, op) \
	((sb)->h.desc->ops_size >= offsetof(struct jig_sandbox_ops, op) + sizeof((sb)->ops->op) && (sb)->ops->op)

int jig_sandbox_open(struct jig_sandbox *sb, const struct jig_snapshot *s, struct jig_error *e)
{
	memset(sb, 0, sizeof(*sb));
	int r = jig_module_load(s, JIG_SANDBOX_MODULE, JIG_KIND_SANDBOX, &sb->h, e);
	if (r)
		return r;
	sb->ops = sb->h.desc->ops;
	if (!HAS_OP(sb, probe) || !HAS_OP(sb, launch) || !HAS_OP(sb, recover)) {
		jig_module_unload(&sb->h);
		sb->ops = NULL;
		return jig_err(e, JIG_E_INTEGRITY, "module %s cannot probe, launch and recover scopes (built against an older SDK)",
			       JIG_SANDBOX_MODULE);
	}
	return 0;
}

void jig_sandbox_close(struct jig_sandbox *sb)
{
	if (sb->ops)
		jig_module_unload(&sb->h);
	sb->ops = NULL;
}

int jig_sandbox_probe(struct jig_sandbox *sb, struct jig_probe_result *out, struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	out->struct_size = sizeof(*out);
	if (sb->ops->probe(sb->h.state, out) != JIG_MOD_OK || out->count > JIG_PROBE_MAX_ITEMS ||
	    out->problem_count > JIG_PROBE_MAX_PROBLEMS)
		return jig_err(e, JIG_E_INTERNAL, "module %s: probe failed", JIG_SANDBOX_MODULE);
	for (uint32_t i = 0; i < out->problem_count; i++) {
		struct jig_host_problem *p = &out->problems[i];
		p->id[sizeof(p->id) - 1] = p->what[sizeof(p->what) - 1] = p->remedy[sizeof(p->remedy) - 1] = '\0';
	}
	return 0;
}

/* What a module built before ABI 1.6 would silently ignore (writable
 * binds, loopback listeners, a controlling terminal): named, or NULL. */
static const char *needs_abi_1_6(const struct jig_scope *sc)
{
	if (sc->n_rw_binds)
		return "writable binds";
	if (sc->n_listeners)
		return "loopback endpoints";
	if (sc->controlling_tty)
		return "a controlling terminal";
	return NULL;
}

int jig_sandbox_launch(struct jig_sandbox *sb, const struct jig_scope *sc, struct jig_scope_result *res)
{
	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	res->held_fd = -1;
	const char *what = needs_abi_1_6(sc);
	if (what && sb->h.desc->abi_minor < 6) {
		/* Never degraded: the launch is refused, nothing started. */
		if (sc->n_listeners) /* engineer N's words, engineer T's check (merged) */
			snprintf(res->error, sizeof(res->error), "module %s (ABI %u.%u) cannot enforce loopback endpoints (it cannot create a scope's network endpoints; they need ABI 1.6)",
				 JIG_SANDBOX_MODULE, sb->h.desc->abi_major, sb->h.desc->abi_minor);
		else
			snprintf(res->error, sizeof(res->error), "module %s (ABI %u.%u) cannot enforce %s; it needs ABI 1.6 or later",
				 JIG_SANDBOX_MODULE, sb->h.desc->abi_major, sb->h.desc->abi_minor, what);
		res->outcome = JIG_SCOPE_FAILED;
		res->exit_status = -1;
		return JIG_MOD_EINVAL;
	}
	int r = sb->ops->launch(sb->h.state, sc, res);
	res->error[sizeof(res->error) - 1] = res->cgroup[sizeof(res->cgroup) - 1] = '\0';
	return r;
}

int jig_sandbox_recover(struct jig_sandbox *sb, pid_t pid, char *err, size_t cap)
{
	return sb->ops->recover(sb->h.state, pid, err, cap);
}

int jig_sandbox_sweep(struct jig_sandbox *sb, pid_t pid, const char *where, char *removed, size_t removed_len, char *err,
		      size_t cap)
{
	if (removed_len)
		removed[0] = '\0';
	if (!HAS_OP(sb, sweep)) {
		snprintf(err, cap, "module %s cannot sweep cgroups (built against an older SDK)", JIG_SANDBOX_MODULE);
		return JIG_MOD_EFAIL;
	}
	int r = sb->ops->sweep(sb->h.state, pid, where, removed, removed_len, err, cap);
	if (removed_len)
		removed[removed_len - 1] = '\0';
	if (cap)
		err[cap - 1] = '\0';
	return r;
}

const char *jig_scope_outcome_name(uint32_t outcome)
{
	static const char *const names[] = {"exited", "signaled", "crashed", "timeout", "oom", "failed"};
	return outcome < sizeof(names) / sizeof(names[0]) ? names[outcome] : "unknown";
}

int jig_scope_payload_started(const struct jig_scope_result *r)
{
	return r->payload_started == JIG_SCOPE_START_RAN ? 1 : r->payload_started == JIG_SCOPE_START_NEVER ? 0 : -1;
}

json_t *jig_scope_payload_started_json(const struct jig_scope_result *r)
{
	int s = jig_scope_payload_started(r);
	return s < 0 ? json_null() : json_boolean(s);
}

bool jig_scope_killed_while_running(const struct jig_scope_result *r)
{
	return r->outcome == JIG_SCOPE_FAILED && r->payload_started == JIG_SCOPE_START_RAN && !r->launcher_reported &&
	       !r->aborted && !r->interrupted_by;
}

void jig_scope_signal_text(char *buf, size_t cap, const char *who, int sig, int core, const char *also)
{
	const char *abbrev = sigabbrev_np(sig);
	char name[32];
	snprintf(name, sizeof(name), abbrev ? "SIG%s" : "an unnamed signal", abbrev);
	snprintf(buf, cap, "%s was killed by %s (signal %d, %s)%s%s", who, name, sig,
		 core ? "core dumped" : "no core dumped", also && also[0] ? "; " : "", also ? also : "");
}

int jig_sandbox_interrupt_open(sigset_t *saved)
{
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, saved);
	return signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
}

void jig_sandbox_interrupt_close(int fd, const sigset_t *saved)
{
	if (fd >= 0)
		close(fd);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}
