#include "run/outer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "publish/run_lease.h"
#include "util/limits.h"
#include "publish/publish.h"
#include "run/recovery.h"
#include "sandbox/door.h"
#include "snapshot/snapshot.h"
#include "util/fault.h"
#include "util/fileio.h"

/* Under /tmp rather than the project: nothing the scope can see of its
 * mounts names the operator, the project or its .jig state. */
#define RUN_DIR_TEMPLATE JIG_RUN_BASE "/" JIG_RUN_DIR_PREFIX "XXXXXX"

long long jig_outer_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After coordinator loss: fence its scopes, remove its stage. True when
 * the fencing was confirmed. */
static bool cleanup_lost(pid_t pid, const char *output, const char *run_dir, char *msg, size_t cap)
{
	size_t len = 0;
	struct jig_snapshot s;
	struct jig_sandbox sb;
	struct jig_error e = {0};
	char libdir[PATH_MAX], err[512] = "";
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) == 0 && jig_snapshot_open_installed(&s, libdir, &e) == 0) {
		if (jig_sandbox_open(&sb, &s, &e) == 0) {
			if (jig_sandbox_recover(&sb, pid, err, sizeof(err)) != JIG_MOD_OK)
				len += (size_t)snprintf(msg + len, cap - len, "; cgroup cleanup NOT confirmed: %s", err);
			jig_sandbox_close(&sb);
		} else
			len += (size_t)snprintf(msg + len, cap - len, "; cannot load the sandbox module to fence: %s", e.msg);
		jig_snapshot_close(&s);
	} else
		len += (size_t)snprintf(msg + len, cap - len, "; cannot open the snapshot to fence: %s", e.msg);
	if (output)
		jig_publish_remove_stage(output, run_dir);
	if (len == 0)
		snprintf(msg, cap, "; its scope was fenced and its run directory and stage removed");
	return len == 0;
}

/* Without a pidfd (pidfd_open failed: an old kernel, no descriptor left)
 * the coordinator's end is looked for this often. */
#define NO_PIDFD_POLL_MS 50

/* The escalation: SIGTERM once (the first stop signal or the expiry),
 * SIGKILL once at kill_at, fixed when the SIGTERM goes. */
struct escalation {
	long long expiry_at, signal_at, kill_at;
	bool termed, killed;
};

/* The first stop signal: SIGTERM now, SIGKILL after the settlement or
 * the expiry's grace, whichever comes first. Later ones change nothing. */
/* Why the coordinator is stopped, for its record: the outer command's
 * end of a pipe (one byte: the stop signal that arrived, or
 * CAUSE_EXPIRY), and the coordinator's. */
#define CAUSE_EXPIRY 0xff
static int cause_pipe[2] = {-1, -1};

static void tell_cause(int cause)
{
	unsigned char b = (unsigned char)cause;
	if (cause_pipe[1] >= 0 && write(cause_pipe[1], &b, 1) != 1)
		return; /* the record then names the signal the coordinator saw */
}

/* Shared with the coordinator (one page, MAP_SHARED before the fork): set
 * once it printed its headline. */
static volatile sig_atomic_t *reported_flag;

void jig_outer_reported(void)
{
	if (reported_flag)
		*reported_flag = 1;
}

int jig_outer_stop_cause(void)
{
	unsigned char b;
	if (cause_pipe[0] < 0 || read(cause_pipe[0], &b, 1) != 1)
		return 0;
	return b == CAUSE_EXPIRY ? -1 : b;
}

static void on_signal(struct escalation *x, struct jig_outer_bounds *b, pid_t c, long long now, int sig)
{
	if (x->termed)
		return;
	tell_cause(sig);
	b->stop = sig;
	kill(c, SIGTERM);
	x->termed = true;
	x->signal_at = now;
	x->kill_at = now + JIG_SETTLE_MS;
	if (x->expiry_at >= 0 && x->expiry_at + JIG_EXPIRY_KILL_MS < x->kill_at)
		x->kill_at = x->expiry_at + JIG_EXPIRY_KILL_MS;
}

/* The clock: the expiry's SIGTERM, then the SIGKILL when due. */
static void on_time(struct escalation *x, struct jig_outer_bounds *b, pid_t c, long long now)
{
	if (x->expiry_at >= 0 && now >= x->expiry_at && !b->expired) {
		b->expired = true;
		if (!x->termed) {
			tell_cause(CAUSE_EXPIRY);
			b->stop = -1;
			kill(c, SIGTERM);
			x->termed = true;
			x->kill_at = x->expiry_at + JIG_EXPIRY_KILL_MS;
		}
	}
	if (x->termed && !x->killed && now >= x->kill_at) {
		kill(c, SIGKILL);
		x->killed = b->killed = true;
		b->kill_after_ms = now - (b->expired ? x->expiry_at : x->signal_at);
	}
}

/* How long poll may sleep: until the next due step, or the no-pidfd poll. */
static int next_wake(const struct escalation *x, const struct jig_outer_bounds *b, bool pidfd, long long now)
{
	long long due = -1;
	if (x->termed && !x->killed)
		due = x->kill_at;
	else if (!x->termed && x->expiry_at >= 0 && !b->expired)
		due = x->expiry_at;
	int timeout = pidfd ? -1 : NO_PIDFD_POLL_MS;
	if (due >= 0) {
		long long left = due - now;
		if (timeout < 0 || left < timeout)
			timeout = left > 0 ? (int)(left < INT_MAX ? left : INT_MAX) : 0;
	}
	return timeout;
}

/* Waits for the coordinator c, relaying the first stop signal as SIGTERM
 * and escalating as struct escalation says. Returns its wait status. */
static int supervise(pid_t c, int sfd, struct jig_outer_bounds *b)
{
	int pidfd = JIG_FAULT_FAILS("pidfd_open") ? -1 : (int)syscall(SYS_pidfd_open, c, 0), status = 0;
	struct escalation x = {.expiry_at = b->expiry_at_ms, .signal_at = -1, .kill_at = -1};
	for (;;) {
		/* The signalfd first: polled with or without a pidfd. */
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
		poll(p, pidfd >= 0 ? 2 : 1, next_wake(&x, b, pidfd >= 0, jig_outer_now_ms()));
		long long now = jig_outer_now_ms();
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			int first = 0;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				first = first ? first : (int)si.ssi_signo;
			/* A signal read after the expiry is later than it. */
			if (first && (x.expiry_at < 0 || now < x.expiry_at))
				on_signal(&x, b, c, now, first);
		}
		on_time(&x, b, c, now);
		if (waitpid(c, &status, WNOHANG) == c)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	return status;
}

/* The coordinator published its packet before it was lost: the
 * destination's record is there. */
static bool packet_published(const char *output, struct stat *st)
{
	char rec[PATH_MAX];
	return output && snprintf(rec, sizeof(rec), "%s/record.json", output) < (int)sizeof(rec) && lstat(rec, st) == 0 &&
	       S_ISREG(st->st_mode);
}

/* Why the outer command killed its coordinator, for the message. */
static void kill_reason(const struct jig_outer_bounds *b, char *why, size_t cap)
{
	why[0] = '\0';
	if (b->killed && b->expired)
		snprintf(why, cap, "the command's expiry passed and the coordinator did not settle (SIGKILL %lld ms after the expiry, its grace is %d ms): ",
			 b->kill_after_ms, JIG_EXPIRY_GRACE_MS);
	else if (b->killed)
		snprintf(why, cap, "the coordinator did not settle within %d s of the first stop signal (SIGKILL %lld ms after it): ",
			 JIG_SETTLE_MS / 1000, b->kill_after_ms);
}

int jig_run_outer(const char *output, struct jig_outer_bounds *b, int (*coordinator)(void *arg, const char *run_dir),
		  void *arg, struct jig_error *e)
{
	char run_dir[] = RUN_DIR_TEMPLATE;
	if (!mkdtemp(run_dir))
		return jig_err(e, JIG_E_INTERNAL, "cannot create a private run directory in /tmp: %s", strerror(errno));
	/* Held by this process and the coordinator (and a recovery-only
	 * one) while any of them lives: the abandoned-run sweep's proof. */
	struct jig_lease lease;
	if (jig_lease_create(&lease, run_dir, output, e) < 0) {
		jig_lease_close(&lease);
		jig_lease_remove_run_dir(run_dir);
		return -e->code;
	}
	sigset_t saved;
	int sfd = jig_sandbox_interrupt_open(&saved); /* the stop signals, blocked */
	pid_t parent = getpid();
	if (pipe2(cause_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		cause_pipe[0] = cause_pipe[1] = -1; /* the record names the signal the coordinator saw */
	void *page = mmap(NULL, sizeof(*reported_flag), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	reported_flag = page == MAP_FAILED ? NULL : page;
	fflush(NULL);
	pid_t c = sfd < 0 ? -1 : fork();
	if (c == 0) {
		close(cause_pipe[1]);
		cause_pipe[1] = -1;
		/* Loss of the outer command is a cancellation (issue 18): the
		 * stop signals stay blocked, so one that comes before the Flow
		 * is launched waits for the supervisor's signalfd (it fences
		 * at once); the coordinator removes the run directory itself
		 * when it is done, so an orphaned one leaves nothing. */
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		if (getppid() != parent)
			_exit(JIG_E_INTERNAL);
		close(sfd);
		if (jig_lease_write(&lease, parent) < 0)
			_exit(JIG_RUN_LEASE_FAILED); /* nothing done yet */
		int code = coordinator(arg, run_dir);
		fflush(NULL);
		jig_lease_remove_run_dir(run_dir); /* done with it (its owner may be gone) */
		_exit(code);
	}
	if (cause_pipe[0] >= 0)
		close(cause_pipe[0]);
	cause_pipe[0] = -1;
	int status = c < 0 ? 0 : supervise(c, sfd, b);
	b->reported = reported_flag && *reported_flag;
	if (reported_flag)
		munmap((void *)reported_flag, sizeof(*reported_flag));
	reported_flag = NULL;
	jig_sandbox_interrupt_close(sfd, &saved);
	if (cause_pipe[1] >= 0)
		close(cause_pipe[1]);
	cause_pipe[1] = -1;
	if (c < 0) {
		jig_lease_remove_run_dir(run_dir);
		jig_lease_close(&lease);
		return jig_err(e, JIG_E_INTERNAL, "cannot start the coordinator: %s", strerror(errno));
	}
	if (WIFEXITED(status)) {
		jig_lease_remove_run_dir(run_dir);
		jig_lease_close(&lease);
		if (WEXITSTATUS(status) == JIG_RUN_LEASE_FAILED)
			return jig_err(e, JIG_E_INTERNAL, "%s/" JIG_LEASE_FILE ": the coordinator could not write the Run's lease; nothing was run", run_dir);
		return WEXITSTATUS(status);
	}
	char msg[1536] = "";
	/* Saved progress only after confirmed fencing (run/recovery.h); a
	 * packet the coordinator published before it was killed stands (the
	 * destination did not exist when the command started). */
	struct stat st;
	bool had = packet_published(output, &st);
	/* Killed at the expiry's grace: the record its coordinator would have
	 * published, by the one who saw the expiry (decision 295). */
	int stop = b->killed && b->expired ? b->stop : 0;
	int published = cleanup_lost(c, output, run_dir, msg, sizeof(msg)) && !had
				? jig_recovery_run(run_dir, output, c, WTERMSIG(status), stop, msg, sizeof(msg))
				: had;
	jig_lease_remove_run_dir(run_dir); /* once its scope is fenced */
	jig_lease_close(&lease);
	char why[256];
	kill_reason(b, why, sizeof(why));
	return jig_err(e, JIG_E_INTERNAL, "%sthe coordinator (pid %d) was killed by signal %d before it finished%s%s", why, (int)c,
		       WTERMSIG(status), had ? "; its packet was published before" : published == 1 ? "" : "; nothing was published", msg);
}
