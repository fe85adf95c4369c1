/* The Run's lease (R-L06, issue 31): RUN_DIR/lease, created and locked
 * (flock) by the outer command before it forks the coordinator, so the
 * lock is held, through the shared open file, by the outer command, the
 * coordinator and a recovery-only coordinator for as long as any of them
 * lives (never by a scope: the descriptor is close-on-exec). The
 * coordinator writes the facts into it before it does anything else: the
 * boot id, the uid, the outer command's and its own pid and start time
 * (/proc/PID/stat), the cgroup it started in (where its scopes' cgroups
 * go) and the absolute path of the publication stage with its
 * directory's device and inode. The abandoned-run sweep (publish/sweep.h)
 * reads it when the lock is free. */
#ifndef JIG_PUBLISH_RUN_LEASE_H
#define JIG_PUBLISH_RUN_LEASE_H

#include <jansson.h>
#include <sys/types.h>

#include "proc/lease.h"

#define JIG_RUN_BASE "/tmp" /* where run directories are made */
#define JIG_LEASE_FORMAT "jig-run-lease/1"
/* The coordinator's exit status when it could not write the lease (it
 * has done nothing else). */
#define JIG_RUN_LEASE_FAILED 76

struct jig_lease {
	int fd;
	json_t *doc; /* the facts known before the fork */
};

/* The outer command: RUN_DIR/lease created (O_EXCL, 0600) and locked
 * before it gets its name; the facts it knows gathered (output may be
 * NULL). */
int jig_lease_create(struct jig_lease *l, const char *run_dir, const char *output, struct jig_error *e);
/* The coordinator, first thing: its own pid and start time and its
 * parent's added, the whole written. 0, or -1 (errno). */
int jig_lease_write(struct jig_lease *l, pid_t outer);
/* Closes the descriptor (the lock goes with the last holder). */
void jig_lease_close(struct jig_lease *l);

#endif
