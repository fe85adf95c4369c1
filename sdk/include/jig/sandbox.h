/* Sandbox kind (JIG_KIND_SANDBOX): containment mechanism for one platform.
 *
 * A sandbox module provides mechanism and facts only. It never decides
 * whether a host is good enough: the host reads the probe and decides.
 */
#ifndef JIG_SANDBOX_H
#define JIG_SANDBOX_H

#include <jig/module.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_PROBE_MAX_ITEMS 16

enum jig_probe_status {
	JIG_PROBE_MISSING = 0,   /* the mechanism cannot be enforced here */
	JIG_PROBE_AVAILABLE = 1, /* the mechanism was exercised and works */
};

/* One mechanism's observation. Strings are NUL-terminated, may be empty. */
struct jig_probe_item {
	char name[32];     /* stable id, e.g. "userns", "bwrap", "cgroup2.memory" */
	uint32_t status;   /* enum jig_probe_status */
	char path[256];    /* a filesystem path the fact is about, if any */
	char version[64];  /* a version, if any */
	char reason[320];  /* why it is missing / how it was shown to work */
};

#define JIG_PROBE_MAX_PROBLEMS 8

/* A named reason this host cannot run scopes, with the operator's remedy
 * (ABI 1.2). The same id, what and remedy make the module's launch refusal
 * ("<id>: <what>; to fix: <remedy>"), so jig host check and a refused
 * launch explain it alike. */
struct jig_host_problem {
	char id[32];      /* stable, e.g. "userns-disabled", "cgroup-v1" */
	char what[224];   /* what was observed */
	char remedy[256]; /* what the operator can do about it */
};

struct jig_probe_result {
	uint32_t struct_size; /* set by the host before calling probe */
	uint32_t count;
	struct jig_probe_item items[JIG_PROBE_MAX_ITEMS];
	/* ABI 1.2: filled only when struct_size covers them. */
	uint32_t problem_count;
	struct jig_host_problem problems[JIG_PROBE_MAX_PROBLEMS];
};

/* A scope: one contained program. The host has validated every field
 * (jig's scope policy); the module enforces exactly this and nothing more.
 * Strings are NUL-terminated; paths are absolute and normalised. */
struct jig_scope_bind {
	const char *source; /* host path, bound read-only */
	const char *target; /* path inside the scope */
};

struct jig_scope_tmpfs {
	const char *target;
	uint64_t size_bytes; /* hard cap of the private tmpfs */
};

struct jig_scope_symlink {
	const char *target; /* the link inside the scope */
	const char *link;   /* what it points to */
};

struct jig_scope_fd {
	int source; /* the caller's descriptor */
	int target; /* its number inside the scope */
};

/* ABI 1.6: one exact loopback endpoint inside a scope's private network
 * namespace (struct jig_scope.listeners). */
struct jig_scope_listener {
	uint32_t ipv4;	/* address in host byte order: 0x7f000001 (127.0.0.1) today */
	uint16_t port;	/* 1..65535 */
	uint16_t reserved; /* 0 */
};

enum jig_scope_network {
	JIG_NET_NONE = 0, /* private network namespace: no route anywhere */
	JIG_NET_HOST = 1, /* the host's network (workers that need it) */
};

struct jig_scope_limits {
	uint64_t memory_bytes; /* memory.max; swap is always 0 */
	uint32_t tasks;	       /* pids.max, the launcher and bwrap included */
	uint32_t cpu_quota_us; /* cpu.max quota per 100000 us period */
	uint64_t wall_ms;      /* wall-clock deadline */
};

#define JIG_SCOPE_MAX_FDS 16
/* Descriptor numbers a scope may be given: 0..JIG_SCOPE_MAX_TARGET_FD. */
#define JIG_SCOPE_MAX_TARGET_FD 63
/* Where the trusted launcher (init_fd) is bound in every scope; nothing
 * else may be bound there or at its parent. */
#define JIG_SCOPE_LAUNCHER "/.jig/init"

/* What every scope has besides its binds and tmpfs: a read-only root, a
 * private read-only /proc, and a read-only /dev holding only these device
 * nodes (character devices, usable for reading and writing; no storage,
 * no /dev/shm) and a read-only devpts. A sandbox module must provide
 * exactly this; the host prints it in every permission plan. */
#define JIG_SCOPE_DEVICES "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"

struct jig_scope {
	uint32_t struct_size;
	const char *name;	   /* [a-z0-9-], names the cgroup leaf */
	const char *policy_sha256; /* identity of the policy this came from */
	int init_fd; /* the trusted launcher from the snapshot, open and verified
		      * by the host; bound from this descriptor (no path race) */
	const struct jig_scope_bind *binds;
	uint32_t n_binds;
	const struct jig_scope_tmpfs *tmpfs;
	uint32_t n_tmpfs;
	const struct jig_scope_symlink *symlinks;
	uint32_t n_symlinks;
	const char *const *env; /* "NAME=value", the whole environment */
	uint32_t n_env;
	const struct jig_scope_fd *fds;
	uint32_t n_fds;
	const char *cwd; /* inside the scope */
	uint32_t network; /* enum jig_scope_network */
	struct jig_scope_limits limits;
	const char *const *argv; /* NULL-terminated; argv[0] absolute or found via env PATH */
	/* The host may end the scope early: when abort_fd becomes readable (or
	 * hangs up) the supervisor fences at once. -1: none. */
	int abort_fd;
	/* A directory inside the scope (e.g. its output tmpfs) the launcher
	 * opens before the payload starts and hands back as result.held_fd, so
	 * the host can read it after every writer is fenced. NULL: none. */
	const char *hold_path;
	/* The host's request to stop: a signalfd the host created for the
	 * signals that should fence the scope (they are blocked in the
	 * calling thread). When it is readable the supervisor reads one
	 * struct signalfd_siginfo, fences, and reports its signal in
	 * result.interrupted_by. -1: none. The module never changes the
	 * host's signal dispositions or masks. */
	int interrupt_fd;
	/* A process of the host's own that shares the caller's cgroup and may
	 * be moved with it into a delegated child (jig run's outer command).
	 * 0: none. The module does not look for such processes itself. */
	int32_t companion_pid;
	/* ABI 1.5: an output with hidden import stages (docs/decisions.md
	 * 115), used instead of hold_path. Before the payload starts the
	 * module creates a fresh tmpfs of output_bytes that is never attached
	 * in the scope: its directory "pub" is projected at output_path (over
	 * whatever the policy mounted there) and its directory "stage" is
	 * reachable by no path in the scope. output_ready(output_ctx, fd) gets
	 * the tmpfs root (the host owns and closes fd) before the payload
	 * starts; result.held_fd is "pub". The host may write into the root
	 * while the payload runs (import stages, renamed into "pub"). NULL
	 * output_path: none. A module that cannot do this refuses the launch. */
	const char *output_path;
	uint64_t output_bytes;
	void (*output_ready)(void *ctx, int root_fd);
	void *output_ctx;
	/* ABI 1.6 (jig session, issue 34). A module built against an older
	 * ABI ignores these, so the host refuses to set any of them for a
	 * module whose abi_minor is below 6.
	 *
	 * Writable binds (a session's mapped read/write worktree and its state
	 * root): bound read/write, mounted in target order together with the
	 * read-only binds, tmpfs and symlinks. */
	const struct jig_scope_bind *rw_binds;
	uint32_t n_rw_binds;
	/* Exact loopback endpoints (network JIG_NET_NONE only): before the
	 * payload starts the module creates, inside the scope's own network
	 * namespace, one listening TCP socket per entry bound to its address
	 * and port, and hands each to listen_ready(listen_ctx, i, fd) (the host
	 * owns fd and relays what it accepts, from outside the scope). The
	 * payload may then use AF_INET/AF_INET6 sockets in its private
	 * namespace. A module that cannot do this refuses the launch. */
	const struct jig_scope_listener *listeners;
	uint32_t n_listeners;
	void (*listen_ready)(void *ctx, uint32_t i, int fd);
	void *listen_ctx;
	/* Nonzero: descriptor 0 of the payload is a terminal (the host's pty,
	 * never the operator's) and becomes the payload's controlling terminal
	 * in its new session, so job control and window-size changes work. */
	uint32_t controlling_tty;
};

enum jig_scope_outcome {
	JIG_SCOPE_EXITED = 0,	/* the payload exited; see exit_status */
	JIG_SCOPE_SIGNALED = 1, /* the payload was killed by a signal */
	JIG_SCOPE_CRASHED = 2,	/* a process in the scope dumped core / died of a fatal signal */
	JIG_SCOPE_TIMEOUT = 3,	/* the wall-clock deadline passed */
	JIG_SCOPE_OOM = 4,	/* the memory limit was hit and the scope was OOM-killed */
	JIG_SCOPE_FAILED = 5,	/* the scope could not be started or supervised */
};

/* Whether the scope's payload started (ABI 1.4), from the in-scope
 * launcher's report that it started the payload: a scope whose bwrap died
 * half-way through a run is not one that never ran. */
enum jig_scope_start {
	JIG_SCOPE_START_UNKNOWN = 0, /* a module built before ABI 1.4 says nothing */
	JIG_SCOPE_START_NEVER = 1,   /* the payload never started (or its exec failed) */
	JIG_SCOPE_START_RAN = 2,     /* the launcher reported the payload started */
};

/* What happened, as measured by the supervisor. Signals are real signal
 * numbers, never 128+n. */
struct jig_scope_result {
	uint32_t struct_size;
	uint32_t outcome;     /* enum jig_scope_outcome */
	int32_t exit_status;  /* payload exit status, or -1 */
	int32_t signal;	      /* payload's or crashing process's signal, or 0 */
	uint32_t core_dumped; /* the kernel reported a core dump */
	uint32_t fenced;      /* the supervisor killed the scope (crash, timeout, leftovers) */
	uint32_t cleanup_confirmed; /* populated 0 seen and the cgroups removed */
	uint32_t launcher_reported; /* the in-scope launcher reported the payload's end */
	uint64_t oom_kills;	    /* memory.events oom_kill */
	uint64_t pids_max_hits;	    /* pids.events max */
	uint64_t memory_peak_bytes; /* memory.peak */
	uint64_t cpu_usec;	    /* cpu.stat usage_usec */
	uint64_t cpu_throttled_usec; /* cpu.stat throttled_usec */
	uint64_t wall_ms;
	int32_t held_fd; /* scope.hold_path opened inside the scope, or -1; the
			  * host owns and closes it */
	uint32_t aborted; /* fenced because the host asked (abort_fd) */
	int32_t interrupted_by; /* the supervisor got this signal and fenced, or 0 */
	uint32_t needs_delegation; /* refused only because no delegated cgroup v2
				    * subtree was found; the host may obtain one */
	char cgroup[256]; /* the scope's cgroup, for the record */
	char error[512];  /* why, when outcome is FAILED or cleanup is unconfirmed */
	/* ABI 1.4: enum jig_scope_start. The host zeroes the result before
	 * launch, so an older module leaves JIG_SCOPE_START_UNKNOWN. */
	uint32_t payload_started;
};

struct jig_sandbox_ops {
	uint32_t struct_size;
	/* Fills *out with one item per mechanism. Returns JIG_MOD_OK or < 0. */
	int (*probe)(void *state, struct jig_probe_result *out);
	/* Runs one scope to completion and fences it. Returns JIG_MOD_OK when
	 * a result was recorded (any outcome), < 0 with out->error set when
	 * the scope was refused before anything ran. */
	int (*launch)(void *state, const struct jig_scope *scope, struct jig_scope_result *out);
	/* After a coordinator (the process that called launch) died: fences and
	 * removes every cgroup it left. Returns JIG_MOD_OK when nothing of it is
	 * left, < 0 with err set otherwise. */
	int (*recover)(void *state, int32_t coordinator_pid, char *err, size_t errlen);
	/* The abandoned-run sweep (after the host has proved the coordinator
	 * gone): removes the cgroups it left beside `where` (the cgroup it
	 * started in, as the "0::" path of /proc/PID/cgroup; NULL: the
	 * caller's) when they are empty, deepest first; never kills, never
	 * touches a populated one. removed gets one line per cgroup removed.
	 * Returns JIG_MOD_OK when none is left, < 0 with err saying what was
	 * kept and why. Optional (NULL in modules built before it). */
	int (*sweep)(void *state, int32_t coordinator_pid, const char *where, char *removed, size_t removed_len,
		     char *err, size_t errlen);
	void *reserved[7];
};

#ifdef __cplusplus
}
#endif

#endif
