/* The outer command of jig run (R-L05, R-L06): it owns the coordinator (a
 * child process that runs the Flow) and the Run's private directory. On
 * SIGINT/SIGTERM/SIGHUP it sends SIGTERM to that exact child once and
 * allows JIG_SETTLE_MS before SIGKILL. The command's absolute expiry, when
 * it has one, can shorten that: at the expiry the outer sends SIGTERM (if
 * no signal came first) and SIGKILL JIG_EXPIRY_GRACE_MS after the expiry.
 * Both bounds are fixed when set; later signals extend nothing. If the
 * coordinator dies without finishing, the outer fences what it left (the
 * sandbox door's recover), removes its stage and the run directory, and
 * says so; a packet already published is never touched. A coordinator it
 * killed at the expiry's grace, nothing published, gets its `cancelled`
 * record from a recovery-only coordinator (run/recovery.h). */
#ifndef JIG_RUN_OUTER_H
#define JIG_RUN_OUTER_H

#include <stdbool.h>

#include "util/error.h"

/* The coordinator's exit status asking the outer command to obtain a
 * transient delegated scope and start over (never a Flow's status). */
#define JIG_RUN_NEEDS_TRANSIENT_SCOPE 75

/* The command's time bound and how it ended the coordinator. */
struct jig_outer_bounds {
	long long expiry_at_ms; /* in: the expiry on jig_outer_now_ms()'s clock; < 0: none */
	bool expired;		/* out: the expiry came before the coordinator ended */
	bool killed;		/* out: the outer command sent it SIGKILL */
	long long kill_after_ms; /* out: SIGKILL this long after the expiry (expired) or the first stop signal */
	int stop;		 /* out: what the coordinator was told stopped it: the stop signal, -1 the expiry, 0 nothing */
	bool reported;		 /* out: the coordinator said it printed its packet's headline (jig_outer_reported) */
};

/* In the coordinator: why the outer command sent it SIGTERM, once it
 * has: the stop signal that reached the outer command (SIGINT, SIGTERM,
 * SIGHUP), -1 for the command's expiry, 0 when it has not said. */
int jig_outer_stop_cause(void);

/* In the coordinator: it has printed its packet's headline, so the outer
 * command, if it then loses it, does not print the line a second time. */
void jig_outer_reported(void);

/* CLOCK_MONOTONIC in ms: the clock of expiry_at_ms. */
long long jig_outer_now_ms(void);

/* Runs coordinator(arg, run_dir) in a child and returns its exit status;
 * a negative code with e if it was lost. */
int jig_run_outer(const char *output, struct jig_outer_bounds *b, int (*coordinator)(void *arg, const char *run_dir),
		  void *arg, struct jig_error *e);

#endif
