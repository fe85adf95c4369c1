#include "util/fault.h"

#ifdef JIG_FAULT_POINTS
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void jig_fault_point(const char *stage)
{
	/* JIG_FAULT_STOP is one stage or several, separated by commas: a
	 * process stops at each at most once (bit k: the k-th listed). */
	static unsigned stopped;
	const char *want = getenv("JIG_FAULT_STOP"), *log = getenv("JIG_FAULT_LOG");
	if (!want || !log)
		return;
	size_t len = strlen(stage);
	unsigned k = 0;
	for (const char *s = want;; k++) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		if (n == len && strncmp(s, stage, n) == 0)
			break;
		if (!end || k >= 31)
			return;
		s = end + 1;
	}
	if (__atomic_fetch_or(&stopped, 1u << k, __ATOMIC_SEQ_CST) & (1u << k))
		return;
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dprintf(fd, "%s %d\n", stage, (int)getpid());
		close(fd);
	}
	/* Directed at this thread: it stops before its next instruction (a
	 * signal to the process may be taken by another thread first, and this
	 * one would run on for a while). The others stop with it. */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSTOP);
}

bool jig_fault_fails(const char *what)
{
	const char *want = getenv("JIG_FAULT_FAIL");
	return want && strcmp(want, what) == 0;
}

void jig_fault_delay(const char *stage)
{
	const char *want = getenv("JIG_FAULT_DELAY"), *ms = getenv("JIG_FAULT_DELAY_MS");
	if (!want || !ms || strcmp(want, stage) != 0)
		return;
	long n = strtol(ms, NULL, 10);
	struct timespec ts = {.tv_sec = n / 1000, .tv_nsec = (n % 1000) * 1000000};
	while (n > 0 && nanosleep(&ts, &ts) < 0)
		;
}
#else
typedef int jig_fault_points_compiled_out;
#endif
