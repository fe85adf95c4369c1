/* The scope's second owner for jig scope run (issue 18, decision 70): a
 * small child of the supervisor that waits on a pipe. If the supervisor
 * ends normally it says so first; if it is SIGKILLed the pipe closes
 * unannounced and the reaper fences and removes the cgroups the supervisor
 * made (the sandbox door's recover), then says on stderr whether that was
 * confirmed. Killing both (or the machine) is outside the guarantee. */
#ifndef JIG_PROC_REAPER_H
#define JIG_PROC_REAPER_H

#include <sys/types.h>

#include "sandbox/door.h"

struct jig_reaper {
	pid_t pid; /* -1: none */
	int fd;	   /* the supervisor's end of the pipe */
};

/* Starts the reaper (sb must be open; call before any thread starts).
 * Its pid is the launch's companion, so it may share the supervisor's
 * cgroup. -1 if it could not be started (then nothing is watched). */
int jig_reaper_start(struct jig_reaper *w, struct jig_sandbox *sb);
/* The supervisor's normal end: tells the reaper and reaps it. */
void jig_reaper_stop(struct jig_reaper *w);

#endif
