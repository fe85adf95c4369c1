/* A session's launch: the check that must be fresh (the state root), the
 * runtime directory and its lease, the template made this
 * launch's (its id in the TMPDIR path), then the one launch every scope
 * kind uses (jig_launch), the session's terminal as its 0, 1 and 2. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/scope_argv.h"
#include "proc/reaper.h"
#include "proc/terminal.h"
#include "session/broker.h"
#include "sandbox/scope.h"
#include "session/internal.h"
#include "session/places.h"
#include "util/note.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"

#define MAX_ARGV 256

/* The state root made (or repaired) below the home, no link followed. */
static int state_root(struct jig_session *s, struct jig_error *e)
{
	int fd = jig_session_state_dir(s->home, s->state_rel, e);
	return fd < 0 ? fd : (close(fd), 0);
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
	pthread_t rec;
	bool rec_running;
	int rec_stop[2]; /* the recorder's stop request */
	struct jig_session_rt rt;
	struct jig_scope_template it;
	struct jig_sandbox sb;
	struct jig_reaper reaper;
	int init_fd, stdio_fd;
	bool sb_open;
	struct jig_terminal *term; /* NULL: stdio_fd as it is */
};

/* jig's own cgroup v2 path ("0::" of /proc/self/cgroup) into out. */
static int own_cgroup(char *out, size_t cap)
{
	char line[PATH_MAX + 8];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			r = snprintf(out, cap, "%s", line + 3) < (int)cap ? 0 : -1;
		}
	if (f)
		fclose(f);
	return r;
}

/* The scope's cgroup: <jig's cgroup or its parent>/jig-<pid>-*\/<name>
 * (where the sandbox module makes it, beside jig's own), once it exists. */
static bool find_scope_cgroup(const char *name, char *out, size_t cap)
{
	char self[PATH_MAX], dirs[2][PATH_MAX], prefix[32];
	if (own_cgroup(self, sizeof(self)) < 0)
		return false;
	snprintf(dirs[0], sizeof(dirs[0]), "%s", strcmp(self, "/") == 0 ? "" : self);
	snprintf(dirs[1], sizeof(dirs[1]), "%s", dirs[0]);
	char *slash = strrchr(dirs[1], '/');
	if (slash)
		*slash = '\0';
	snprintf(prefix, sizeof(prefix), "jig-%d-", (int)getpid());
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX + 32];
		if (snprintf(path, sizeof(path), "/sys/fs/cgroup%.*s", PATH_MAX - 1, dirs[i]) >= (int)sizeof(path))
			continue;
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			struct stat st;
			char leaf[PATH_MAX * 2 + 600];
			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(leaf, sizeof(leaf), "%s/%s/%s", path, de->d_name, name);
			if (lstat(leaf, &st) == 0 && S_ISDIR(st.st_mode) &&
			    snprintf(out, cap, "%s/%s/%s", dirs[i], de->d_name, name) < (int)cap && jig_session_cgroup_path_ok(out)) {
				closedir(d);
				return true;
			}
		}
		if (d)
			closedir(d);
	}
	return false;
}

/* Records the scope's cgroup in the lease as soon as the sandbox module
 * has made it (a sweep keeps the session while it is populated), polling
 * until found or stopped. */
static void *record_cgroup(void *ctx)
{
	struct session_run *sr = ctx;
	char cg[PATH_MAX];
	for (int i = 0; i < 6000; i++) {
		if (find_scope_cgroup(sr->s->name, cg, sizeof(cg))) {
			struct jig_error e = {0};
			if (jig_session_rt_set_cgroup(&sr->rt, cg, &e) < 0)
				jig_note("%s", e.msg);
			return NULL;
		}
		struct pollfd p = {.fd = sr->rec_stop[0], .events = POLLIN};
		if (poll(&p, 1, 20) != 0)
			return NULL;
	}
	return NULL;
}

/* Just before the launch (SIGINT, SIGTERM, SIGHUP blocked): the relay of
 * jig's terminal and the cgroup recorder. */
static int session_ready(void *ctx, struct jig_error *e)
{
	struct session_run *sr = ctx;
	int r = sr->term ? jig_terminal_start(sr->term, e) : 0;
	if (r)
		return r;
	if (pipe2(sr->rec_stop, O_CLOEXEC) < 0)
		return jig_err(e, JIG_E_HOST, "session: pipe: %s", strerror(errno));
	if (pthread_create(&sr->rec, NULL, record_cgroup, sr) != 0) {
		close(sr->rec_stop[0]), close(sr->rec_stop[1]);
		return jig_err(e, JIG_E_HOST, "session: cannot start the cgroup recorder");
	}
	sr->rec_running = true;
	return 0;
}

static void recorder_stop(struct session_run *sr)
{
	if (!sr->rec_running)
		return;
	jig_poke(sr->rec_stop[1]);
	pthread_join(sr->rec, NULL);
	close(sr->rec_stop[0]), close(sr->rec_stop[1]);
	sr->rec_running = false;
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
				.stop = JIG_LAUNCH_STOP_KEEP, .ready = session_ready, .ctx = sr};
	r = jig_launch(&st, res, e);
	recorder_stop(sr);
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
	if ((r = state_root(s, e)))
		return r;
	struct jig_terminal term;
	struct session_run sr = {.s = s, .init_fd = -1, .stdio_fd = stdio_fd, .reaper = {.pid = -1, .fd = -1},
				 .term = stdio_fd < 0 ? &term : NULL};
	if (sr.term && (r = jig_terminal_open(&term, e))) {
		jig_terminal_stop(&term);
		return r;
	}
	struct jig_error swept;
	jig_session_rt_sweep(&swept); /* what abandoned sessions left; each kept one says why in a note */
	if ((r = jig_session_rt_open(&sr.rt, e))) {
		if (sr.term)
			jig_terminal_stop(&term);
		return r;
	}
	struct jig_broker broker = {.pid = -1};
	r = jig_broker_start(&broker, s, sr.rt.id, e);
	if (!r)
		r = jig_session_instance(&s->t, sr.rt.id, jig_caller_home(), &sr.it, e);
	if (!r && JIG_FAULT_FAILS("session-instance"))
		r = jig_err(e, JIG_E_HOST, "session: the launch failed before the scope (fault point \"session-instance\")");
	if (!r) {
		r = run_scope(&sr, argv, res, e);
		/* Nothing of the agent runs now, nor of its brokered git: what
		 * mounts could not stop (a new nested .git, a changed
		 * .gitattributes...) is found, reported and a new .git
		 * quarantined before the operator's next git (decision 212). */
		jig_broker_stop(&broker);
		jig_session_git_end(&s->git, jig_note_stream());
	}
	jig_broker_stop(&broker);
	if (sr.reaper.pid > 0)
		jig_reaper_stop(&sr.reaper);
	if (sr.init_fd >= 0)
		close(sr.init_fd);
	if (sr.sb_open)
		jig_sandbox_close(&sr.sb);
	if (sr.it.policy.doc)
		jig_scope_policy_free(&sr.it.policy);
	/* The pty pair closed on every path (idempotent after run_scope's). */
	if (sr.term)
		jig_terminal_stop(&term);
	jig_session_rt_close(&sr.rt);
	JIG_FAULT_POINT("session-launch-end"); /* the test looks at what jig still holds */
	return r;
}
