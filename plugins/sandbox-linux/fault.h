/* Test-only fault points in the supervisor's path (issue 18;
 * docs/reliability.md, "Fault injection"): the same contract as the
 * host's host/util/fault.h (a module cannot use the host's code: the SDK
 * is its only contract), compiled in only with -DJIG_FAULT_POINTS=ON.
 * JIG_FAULT_POINT("stage") in a process whose environment has
 * JIG_FAULT_STOP=stage appends "stage pid" to $JIG_FAULT_LOG and stops
 * the process (once a process), for the harness to SIGKILL an owner;
 * JIG_FAULT_FAILS("what") is true when JIG_FAULT_FAIL=what. */
#ifndef JIG_SANDBOX_FAULT_H
#define JIG_SANDBOX_FAULT_H

#ifdef JIG_FAULT_POINTS
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void jig_sandbox_fault_point(const char *stage)
{
	static int once;
	const char *want = getenv("JIG_FAULT_STOP"), *log = getenv("JIG_FAULT_LOG");
	if (!want || !log || strcmp(want, stage) != 0 || __atomic_exchange_n(&once, 1, __ATOMIC_SEQ_CST))
		return;
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dprintf(fd, "%s %d\n", stage, (int)getpid());
		close(fd);
	}
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSTOP);
}
#define JIG_FAULT_POINT(stage) jig_sandbox_fault_point(stage)
/* JIG_FAULT_FAIL=what: the named step takes its failure path. */
static inline int jig_sandbox_fault_fails(const char *what)
{
	const char *want = getenv("JIG_FAULT_FAIL");
	return want && strcmp(want, what) == 0;
}
#define JIG_FAULT_FAILS(what) jig_sandbox_fault_fails(what)
#else
#define JIG_FAULT_POINT(stage) ((void)0)
#define JIG_FAULT_FAILS(what) 0
#endif

#endif
