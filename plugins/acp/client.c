/* Starting, watching and stopping the ACP client process. */
#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports on its close-on-exec pipe when it cannot exec. */
struct failure {
	int step;
	int err;
};
enum { STEP_SETSID, STEP_CWD, STEP_FDS, STEP_EXEC };
static const char *const step_names[] = {"setsid", "working directory", "standard descriptors", "exec"};

/* Between fork and exec: async-signal-safe calls only. Returns the step
 * that failed (errno set); on success it does not return. */
static int become_client(int in, int out, char *const argv[], char *const envp[], const char *cwd, int maxfd)
{
	/* The worker ignores SIGPIPE; the client gets the default back. */
	signal(SIGPIPE, SIG_DFL);
	/* Its own session and group: the exit sequence signals the group. */
	if (setsid() < 0)
		return STEP_SETSID;
	if (chdir(cwd) < 0)
		return STEP_CWD;
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
		return STEP_FDS;
	/* Nothing but 0-2 crosses exec; the report pipe stays usable until
	 * then. */
	if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
		for (int fd = 3; fd < maxfd; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	execve(argv[0], argv, envp);
	return STEP_EXEC;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void wait_for(struct jig_acp_client *c)
{
	if (c->pid > 0 && !c->reaped) {
		int st = 0;
		pid_t r;
		do
			r = waitpid(c->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		c->status = r == c->pid ? st : 0;
		c->reaped = c->exited = true;
	}
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->pidfd);
}

static int nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

int jig_acp_client_start(struct jig_acp_client *c, char *const argv[], char *const envp[], const char *cwd,
			 char *why, size_t cap)
{
	*c = (struct jig_acp_client){.pid = -1, .pidfd = -1, .in = -1, .out = -1};
	int in[2] = {-1, -1}, out[2] = {-1, -1}, rep[2] = {-1, -1};
	struct rlimit rl;
	int maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		snprintf(why, cap, "cannot start the client: pipe: %s", strerror(errno));
		for (int i = 0; i < 2; i++)
			close_fd(&in[i]), close_fd(&out[i]), close_fd(&rep[i]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		struct failure f = {become_client(in[0], out[1], argv, envp, cwd, maxfd), 0};
		f.err = errno;
		(void)!write(rep[1], &f, sizeof(f));
		_exit(127);
	}
	int fork_err = errno;
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&rep[1]);
	c->in = in[1];
	c->out = out[0];
	if (pid < 0) {
		snprintf(why, cap, "cannot start the client: fork: %s", strerror(fork_err));
		close_fd(&rep[0]);
		jig_acp_client_reap(c);
		return -1;
	}
	c->pid = pid;
	/* EOF: exec succeeded (the pipe closed with it). */
	struct failure f;
	ssize_t n;
	do
		n = read(rep[0], &f, sizeof(f));
	while (n < 0 && errno == EINTR);
	close_fd(&rep[0]);
	if (n == (ssize_t)sizeof(f)) {
		wait_for(c); /* it is on its way out, with status 127 */
		snprintf(why, cap, "cannot start the client %.200s: %s: %s", argv[0],
			 step_names[f.step >= 0 && f.step <= STEP_EXEC ? f.step : STEP_EXEC], strerror(f.err));
		return -1;
	}
	if (nonblocking(c->in) < 0 || nonblocking(c->out) < 0) {
		snprintf(why, cap, "cannot start the client: fcntl: %s", strerror(errno));
		jig_acp_client_reap(c);
		return -1;
	}
	c->pidfd = open_pidfd(pid); /* -1: the worker looks for its exit now and then */
	return 0;
}

bool jig_acp_client_exited(struct jig_acp_client *c)
{
	if (c->exited || c->pid <= 0)
		return true;
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: not reaped, so its pid names nothing else meanwhile. */
	if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == c->pid)
		c->exited = true;
	return c->exited;
}

void jig_acp_client_signal(struct jig_acp_client *c, int sig)
{
	if (c->pid > 0 && !c->reaped)
		kill(-c->pid, sig);
}

void jig_acp_client_close_input(struct jig_acp_client *c)
{
	close_fd(&c->in);
}

void jig_acp_client_reap(struct jig_acp_client *c)
{
	/* Before the wait, while the group's id is still the client's: the
	 * group's other members (a child it left behind) go too. */
	if (c->pid > 0 && !c->reaped)
		kill(-c->pid, SIGKILL);
	wait_for(c);
}

void jig_acp_client_describe(const struct jig_acp_client *c, char *out, size_t cap)
{
	if (WIFEXITED(c->status)) {
		snprintf(out, cap, "exited with status %d", WEXITSTATUS(c->status));
	} else if (WIFSIGNALED(c->status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(c->status));
		snprintf(out, cap, "was killed by signal %d (SIG%s)", WTERMSIG(c->status), abbrev ? abbrev : "?");
	} else {
		snprintf(out, cap, "ended (wait status %d)", c->status);
	}
}
