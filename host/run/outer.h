/* The outer command of jig run (R-L05, R-L06): it owns the coordinator (a
 * child process that runs the Flow) and the Run's private directory. On
 * SIGINT/SIGTERM/SIGHUP it sends SIGTERM to that exact child once and
 * allows JIG_SETTLE_MS before SIGKILL; later signals extend nothing. If the
 * coordinator dies without finishing, the outer fences what it left (the
 * sandbox door's recover), removes its stage and the run directory, and
 * says so; a packet already published is never touched. */
#ifndef JIG_RUN_OUTER_H
#define JIG_RUN_OUTER_H

#include <stdbool.h>

#include "util/error.h"

/* The coordinator's exit status asking the outer command to obtain a
 * transient delegated scope and start over (never a Flow's status). */
#define JIG_RUN_NEEDS_TRANSIENT_SCOPE 75

/* Runs coordinator(arg, run_dir) in a child and returns its exit status;
 * a negative code with e if it was lost. */
int jig_run_outer(const char *output, int (*coordinator)(void *arg, const char *run_dir), void *arg,
		  struct jig_error *e);

#endif
