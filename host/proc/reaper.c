#include "proc/reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/note.h"
#include "util/fault.h"
#include "util/progress.h"

/* The reaper's whole life: no signal but SIGKILL ends it, it holds no
 * descriptor of the caller's but stderr (for its one line). */
static void reaper(int rd, pid_t sup, struct jig_sandbox *sb)
{
	prctl(PR_SET_NAME, "jig-reaper", 0, 0, 0);
	int stop[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	for (size_t i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
		signal(stop[i], SIG_IGN);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(rd, 3) < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		_exit(1);
	close_range(4, ~0u, 0);
	char c;
	ssize_t n;
	while ((n = read(3, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0); /* the supervisor finished and cleaned up itself */
	JIG_FAULT_POINT("recovery");
	char err[512] = "";
	jig_progress_clear(); /* a status on the row: the line starts its own */
	if (jig_sandbox_recover(sb, sup, err, sizeof(err)) == JIG_MOD_OK)
		jig_note("the scope's supervisor (pid %d) was lost; its scope was fenced and its cgroups removed", (int)sup);
	else
		jig_note("the scope's supervisor (pid %d) was lost; cgroup cleanup NOT confirmed: %s", (int)sup, err);
	_exit(1);
}

int jig_reaper_start(struct jig_reaper *w, struct jig_sandbox *sb)
{
	int p[2];
	w->pid = -1;
	w->fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t sup = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		reaper(p[0], sup, sb);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	w->pid = pid;
	w->fd = p[1];
	return 0;
}

void jig_reaper_stop(struct jig_reaper *w)
{
	if (w->fd >= 0) {
		if (write(w->fd, "x", 1) < 0) {
		}
		close(w->fd);
	}
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	w->pid = w->fd = -1;
}
