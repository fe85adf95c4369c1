/* The session's runtime directory (issue 34; seed 001 Slice 3 items 8-12):
 * $XDG_RUNTIME_DIR checked, the per-session root and its private TMPDIR,
 * the session's lease and the sweep of abandoned sessions. Every directory is reached from / one
 * component at a time with O_NOFOLLOW; nothing here follows a symlink.
 * The lease's facts and the liveness checks are proc/lease.h's:
 * the boot id, a pid with its start time, a cgroup's "populated". */
#ifndef JIG_SESSION_RUNTIME_H
#define JIG_SESSION_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

#define JIG_SESSION_LEASE_FORMAT "jig-session-lease/1"

/* $XDG_RUNTIME_DIR, checked: exactly /run/user/<caller uid>, a directory owned by the caller, mode 0700,
   no symbolic link in any component (each opened O_NOFOLLOW|O_DIRECTORY from /). Out: its path.
   Refusals name the rule that failed, one line. */
int jig_runtime_dir(char *out, size_t n, struct jig_error *e);

/* $XDG_RUNTIME_DIR/jig/<sub> (sub: "sessions"): jig/ and it created 0700 when absent, each
   opened no-follow, the caller's with mode 0700. Out: its path; returns its descriptor (the caller closes
   it) or -code. */
int jig_runtime_jig_dir(const char *sub, char *out, size_t n, struct jig_error *e);

struct jig_session_rt {
	char id[33];           /* random, [0-9a-f]{32} */
	char root[4096];       /* $XDG_RUNTIME_DIR/jig/sessions/<id> (0700) */
	char tmpdir[4096];     /* root/tmp (0700): the session's TMPDIR */
	int root_fd, lease_fd; /* lease_fd holds an flock for the session's whole life (-1 when closed) */
};
/* Creates jig/, jig/sessions/ (0700, each no-follow, owner and mode checked when they exist), the session's
   root, tmp/ and lease (0600, O_NOFOLLOW|O_EXCL; flock LOCK_EX held; records boot id, pid, process start
   time; the scope's cgroup added by jig_session_rt_set_cgroup once known). Both descriptors are
   close-on-exec: the lock lives exactly as long as the calling process (and any child that inherits
   it through fork). On failure nothing is left behind and rt->root_fd, rt->lease_fd are -1. */
int jig_session_rt_open(struct jig_session_rt *rt, struct jig_error *e);
/* Records the scope's cgroup (an absolute cgroup v2 path as in /proc/PID/cgroup, "/user.slice/...") in the
   lease; a sweep keeps the session while that cgroup reports "populated 1". */
int jig_session_rt_set_cgroup(struct jig_session_rt *rt, const char *cgroup, struct jig_error *e);
/* A cgroup v2 path as /proc/PID/cgroup gives it: absolute, not "/", no empty, "." or ".." component, no
   control character (what set_cgroup records and the sweep accepts). */
bool jig_session_cgroup_path_ok(const char *cgroup);
/* Removes root (tmp and everything in it, no-follow, never crossing a mount or following a link) and the
   lease; idempotent; called on normal exit, cancellation and after the agent crashed or was killed. */
void jig_session_rt_close(struct jig_session_rt *rt);
/* Removes every other session directory whose lease proves no live owner: the lease flock can be taken,
   the recorded boot id is this boot's and the pid/start time is absent (or the boot id differs), and the
   recorded cgroup is absent or reports populated 0. A malformed lease, a failed check, a disagreement or any
   sign of life preserves the directory (and says so on stderr, one line). Returns how many were removed,
   or -code when $XDG_RUNTIME_DIR itself is refused (e says why). */
int jig_session_rt_sweep(struct jig_error *e);

#endif
