/* Records the in-scope launcher sends the supervisor over a SOCK_SEQPACKET
 * socket, one per message. The supervisor trusts them only
 * as far as the launcher is trusted: it also measures everything it can
 * from the cgroup itself. */
#ifndef JIG_SANDBOX_LINUX_REPORT_H
#define JIG_SANDBOX_LINUX_REPORT_H

#include <stdint.h>

#define JIG_REPORT_MAGIC 0x4a494752u /* "JIGR" */

/* Descriptor numbers the supervisor uses when it starts bwrap; policy
 * targets are 0..63, so these never collide. */
#define JIG_REPORT_FD 100
#define JIG_SECCOMP_FD 101
#define JIG_BWRAP_ERR_FD 102
#define JIG_INIT_FD 103 /* bwrap --ro-bind-fd source of /.jig/init */

enum jig_report_kind {
	JIG_REPORT_STARTED = 1,	    /* payload forked; pid set */
	JIG_REPORT_EXEC_FAILED = 2, /* err set */
	JIG_REPORT_EXITED = 3,	    /* code set */
	JIG_REPORT_SIGNALED = 4,    /* signal, core set */
	JIG_REPORT_REFUSED = 5,	    /* the launcher refused to start the payload; err set */
	JIG_REPORT_HELD = 6,	    /* carries the held directory as SCM_RIGHTS */
	/* The output with hidden import stages (decision 115): the launcher
	 * sends its mount namespace and the output's mount point (two
	 * descriptors, SCM_RIGHTS) and waits; the supervisor answers with
	 * OUTPUT_READY (err 0: mounted; otherwise what and err say why, and
	 * the launcher refuses). */
	JIG_REPORT_OUTPUT = 7,
	JIG_REPORT_OUTPUT_READY = 8,
	/* Exact loopback endpoints (ABI 1.6, decision 140; launcher argument
	 * "+net"): the launcher sends its network namespace (one descriptor)
	 * and waits; the supervisor creates the listening sockets there and
	 * answers NET_READY (err 0: listening; otherwise the launcher refuses). */
	JIG_REPORT_NET = 9,
	JIG_REPORT_NET_READY = 10,
};

struct jig_report {
	uint32_t magic;
	uint32_t kind;
	int32_t pid;  /* inside the scope's pid namespace */
	uint32_t main; /* 1: the payload itself, 0: a descendant */
	int32_t code;
	int32_t signal;
	uint32_t core;
	int32_t err;
	char what[64];
};

#endif
