/* A session's launch: the checks that must be fresh (the cache entry, the
 * state root), the runtime directory and its lease, the template made this
 * launch's (its id in the TMPDIR path), then the one launch every scope
 * kind uses (jig_launch), the session's terminal as its 0, 1 and 2. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/scope_argv.h"
#include "run/reaper.h"
#include "run/terminal.h"
#include "session/broker.h"
#include "sandbox/scope.h"
#include "session/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define MAX_ARGV 256

/* path and each missing parent below the caller's home: created 0700, no
 * link followed; the last must be a directory of the caller's, mode 0700. */
static int state_root(const char *path, struct jig_error *e)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char keep = *c;
		*c = '\0';
		struct stat st;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return jig_err(e, JIG_E_USAGE, "session: state root %s: %s", p, strerror(errno));
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
			return jig_err(e, JIG_E_USAGE, "session: state root %s: not a directory (a link is never followed); refused", p);
		if (!keep) {
			if (st.st_uid != geteuid() || (st.st_mode & 077))
				return jig_err(e, JIG_E_USAGE, "session: state root %s must be yours and mode 0700; refused", p);
			return 0;
		}
		*c = keep;
	}
}

/* The program's argv: the template's (the client's program), then the
 * session's (or, for a probe, its own argv alone). */
static int session_argv(struct jig_session *s, const struct jig_scope_template *it, const char *const *probe,
			const char **argv, struct jig_error *e)
{
	if (probe) {
		size_t n = 0;
		for (; probe[n] && n + 1 < MAX_ARGV; n++)
			argv[n] = probe[n];
		argv[n] = NULL;
		return probe[n] ? jig_err(e, JIG_E_USAGE, "session: too many arguments") : 0;
	}
	const char *call[MAX_ARGV];
	size_t n = json_array_size(s->argv);
	if (n >= MAX_ARGV)
		return jig_err(e, JIG_E_USAGE, "session: at most %d arguments", MAX_ARGV - 1);
	for (size_t i = 0; i < n; i++)
		call[i] = json_string_value(json_array_get(s->argv, i));
	return jig_scope_argv(it, call, n, argv, MAX_ARGV, e);
}

struct session_run {
	struct jig_session *s;
	struct jig_session_rt rt;
	struct jig_scope_template it;
	struct jig_sandbox sb;
	struct jig_reaper reaper;
	int init_fd, stdio_fd;
	bool sb_open;
	struct jig_terminal *term; /* NULL: stdio_fd as it is */
};

static int term_start(void *ctx, struct jig_error *e)
{
	return jig_terminal_start(ctx, e);
}

static int run_scope(struct session_run *sr, const char *const *probe, struct jig_scope_result *res, struct jig_error *e)
{
	const char *argv[MAX_ARGV];
	int r = session_argv(sr->s, &sr->it, probe, argv, e);
	if (r || (r = jig_sandbox_open(&sr->sb, &sr->s->snap, e)))
		return r;
	sr->sb_open = true;
	jig_reaper_start(&sr->reaper, &sr->sb);
	if ((sr->init_fd = jig_verifier_open(&sr->s->v, &sr->s->snap, JIG_SESSION_INIT_FILE, e)) < 0)
		return sr->init_fd;
	/* jig's pty slave (never the operator's terminal) becomes the agent's
	 * controlling terminal; a probe's descriptor is given as it is. */
	struct jig_scope_slot slots[] = {{.name = "terminal", .fd = sr->term ? sr->term->slave : sr->stdio_fd}};
	struct jig_launch st = {.sb = &sr->sb, .t = &sr->it, .run = {.slots = slots, .n_slots = 1},
				.l = {.policy_sha256 = sr->s->sha256, .init_fd = sr->init_fd, .argv = argv, .abort_fd = -1,
				      .companion_pid = sr->reaper.pid > 0 ? sr->reaper.pid : 0, .controlling_tty = sr->term != NULL},
				.stop = JIG_LAUNCH_STOP_KEEP, .ready = sr->term ? term_start : NULL, .ctx = sr->term};
	r = jig_launch(&st, res, e);
	if (r && st.launched)
		r = jig_err(e, JIG_E_HOST, "session %s refused: %s", sr->s->name, e->msg);
	/* The operator's terminal mode back on every path, before the stop
	 * signals are unblocked. */
	if (sr->term)
		jig_terminal_stop(sr->term);
	if (st.launched)
		jig_sandbox_interrupt_close(st.interrupt, &st.saved);
	return r;
}

static int refuse_high_risk(unsigned bits, struct jig_error *e)
{
	for (unsigned b = 1; b & JIG_SESSION_HR_ALL; b <<= 1)
		if (bits & b)
			return jig_err(e, JIG_E_USAGE, "--%s: not built yet; the session was not started", jig_session_high_risk_name(b));
	return 0;
}

int jig_session_launch(struct jig_session *s, const char *const *argv, const struct jig_scope_bind *extra,
		       size_t n_extra, int stdio_fd, struct jig_scope_result *res, struct jig_error *e)
{
	memset(res, 0, sizeof(*res));
	res->held_fd = -1;
	int r = refuse_high_risk(s->high_risk, e);
	if (r)
		return r;
	if (geteuid() == 0)
		return jig_err(e, JIG_E_HOST, "refusing to run a session as root; jig is a rootless tool");
	if (n_extra) {
		s->facts.extra = extra;
		s->facts.n_extra = n_extra;
		if ((r = jig_session_build(s, e)))
			return r;
	}
	if ((r = jig_policy_cache_recheck(&s->cache, s->sha256, e)) || (r = state_root(s->state_root, e)))
		return r;
	struct jig_terminal term;
	struct session_run sr = {.s = s, .init_fd = -1, .stdio_fd = stdio_fd, .reaper = {.pid = -1, .fd = -1},
				 .term = stdio_fd < 0 ? &term : NULL};
	if (sr.term && (r = jig_terminal_open(&term, e))) {
		jig_terminal_stop(&term);
		return r;
	}
	struct jig_error swept;
	jig_session_rt_sweep(&swept); /* what abandoned sessions left; each kept one says why on stderr */
	if ((r = jig_session_rt_open(&sr.rt, e))) {
		if (sr.term)
			jig_terminal_stop(&term);
		return r;
	}
	struct jig_broker broker = {.pid = -1};
	r = jig_broker_start(&broker, s, sr.rt.id, e);
	if (!r)
		r = jig_session_instance(&s->t, sr.rt.id, jig_caller_home(), &sr.it, e);
	if (!r)
		r = run_scope(&sr, argv, res, e);
	jig_broker_stop(&broker);
	if (sr.reaper.pid > 0)
		jig_reaper_stop(&sr.reaper);
	if (sr.init_fd >= 0)
		close(sr.init_fd);
	if (sr.sb_open)
		jig_sandbox_close(&sr.sb);
	if (sr.it.policy.doc)
		jig_scope_policy_free(&sr.it.policy);
	jig_session_rt_close(&sr.rt);
	return r;
}
