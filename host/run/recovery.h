/* The recovery-only coordinator (issue 18, decision 72). Every Run binds
 * itself in the outer command's run directory before its Flow starts
 * (recovery.json: the project's device and inode, the Flow, the Plan, the
 * epoch, the expiry, whether it has a checkpoint). If its coordinator is
 * lost, the outer command fences and removes everything it left
 * (run/outer.h); only when that is confirmed does it open one
 * recovery-only coordinator, a child that checks the binding, then
 * publishes the terminal record and, for a Flow with "checkpoint", the
 * last accepted checkpoint (effects/checkpoint.h), never output files: a
 * Run with a checkpoint whose coordinator was lost says "interrupted"; a
 * Run whose coordinator the outer command killed at the expiry's grace
 * says "cancelled" with the expiry, as its coordinator would have
 * (decision 295). It submits no work, extends no budget and retries no
 * effect. */
#ifndef JIG_RUN_RECOVERY_H
#define JIG_RUN_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define JIG_RECOVERY_FILE "recovery.json"

/* The coordinator's binding, written before the Flow starts. */
int jig_recovery_bind(int rundir, const char *project, const char *flow, const char *plan_sha256,
		      const char *package_sha256, uint64_t timeout_ms, uint64_t expiry_ms, bool checkpoint,
		      struct jig_error *e);

/* After the loss of coordinator lost (by signal sig) and confirmed
 * fencing: runs the recovery-only coordinator if the Run was bound with a
 * checkpoint, or the outer command killed it after the expiry (stop: the
 * cause it had told the coordinator, -1 the expiry, a stop signal the
 * operator's that came first; 0: not killed at the expiry), and appends
 * what it did to msg. 1: published; 0: nothing to do; -1: nothing
 * published (why in msg). */
int jig_recovery_run(const char *run_dir, const char *output, pid_t lost, int sig, int stop, char *msg, size_t cap);

#endif
