/* The client process: started with exactly the request's argv, environment
 * and working directory, in a session and process group of its own, and
 * stopped through that group. */
#ifndef JIG_ACP_CLIENT_H
#define JIG_ACP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum jig_acp_forced {
	JIG_ACP_FORCED_NONE, /* it exited on its own */
	JIG_ACP_FORCED_TERM, /* after SIGTERM to its group */
	JIG_ACP_FORCED_KILL, /* after SIGKILL to its group */
};

struct jig_acp_client {
	pid_t pid;    /* also its process group and session */
	int pidfd;    /* readable once it exits; -1 if the kernel has none */
	int in;       /* its stdin (ours to write, non-blocking); -1 once closed */
	int out;      /* its stdout (ours to read, non-blocking) */
	bool exited;  /* it has exited (not reaped yet) */
	bool reaped;
	int status;   /* wait status, once reaped */
	enum jig_acp_forced forced;
};

/* Starts argv[0] (absolute; no PATH search) with envp as its whole
 * environment in cwd: stdin and stdout are pipes to the worker, stderr is
 * /dev/null, nothing else is open. 0, or -1 with a one-line reason (then
 * nothing is left running; *c may still hold a reaped pid). */
int jig_acp_client_start(struct jig_acp_client *c, char *const argv[], char *const envp[], const char *cwd,
			 char *why, size_t cap);

/* Whether the client has exited, without reaping it: its pid stays its
 * own (and its group's) until jig_acp_client_reap. */
bool jig_acp_client_exited(struct jig_acp_client *c);

/* Sends sig to the client's process group. */
void jig_acp_client_signal(struct jig_acp_client *c, int sig);

/* Closes the client's stdin (the first step of the exit sequence). */
void jig_acp_client_close_input(struct jig_acp_client *c);

/* SIGKILL to whatever is left of the group, then waits for the client and
 * closes every descriptor. Safe to call twice. */
void jig_acp_client_reap(struct jig_acp_client *c);

/* "exited with status 3", "was killed by signal 11 (SIGSEGV)". */
void jig_acp_client_describe(const struct jig_acp_client *c, char *out, size_t cap);

#endif
