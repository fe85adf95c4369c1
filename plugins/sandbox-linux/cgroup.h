/* Rootless cgroup v2 for one scope: a per-run root cgroup under the
 * caller's delegated subtree, and the scope's leaf with its limits. */
#ifndef JIG_SANDBOX_LINUX_CGROUP_H
#define JIG_SANDBOX_LINUX_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include <jig/sandbox.h>

struct jig_cg {
	char root[PATH_MAX]; /* the run's root cgroup */
	char leaf[PATH_MAX]; /* the scope's leaf */
	int leaf_fd;	     /* O_DIRECTORY, for clone3(CLONE_INTO_CGROUP) */
	int events_fd;	     /* leaf/cgroup.events, polled for "populated 0" */
};

/* The caller's own cgroup directory (/sys/fs/cgroup + the "0::" entry of
 * /proc/self/cgroup). -1 when there is no usable cgroup v2 entry. */
int jig_cg_self(char *dir, size_t cap);

/* Finds the delegated subtree, creates root and leaf and writes every limit
 * before returning. On failure nothing is left behind and err says why;
 * -2 means cgroup v2 is there but nothing is delegated to the caller. */
int jig_cg_create(const char *scope, const struct jig_scope_limits *l, pid_t companion, struct jig_cg *cg,
		  char *err, size_t errlen);
/* 1 populated, 0 empty, -1 unreadable. */
int jig_cg_populated(const struct jig_cg *cg);
/* cgroup.kill, then waits up to timeout_ms for populated 0. 0 if confirmed. */
int jig_cg_fence(const struct jig_cg *cg, int timeout_ms);
void jig_cg_stats(const struct jig_cg *cg, struct jig_scope_result *out);
/* Removes leaf and root; 0 if both are gone. */
int jig_cg_remove(struct jig_cg *cg, char *err, size_t errlen);

/* Fences and removes every run cgroup of coordinator pid (jig-<pid>-*) next
 * to the caller's cgroup or in its parent. 0 when none is left. */
int jig_cg_recover(int pid, char *err, size_t errlen);
/* The abandoned-run sweep: removes every run cgroup of coordinator pid
 * beside where (a "0::" cgroup path; NULL: the caller's) that is the
 * caller's and empty, deepest first; never kills. removed gets one line
 * per cgroup removed; 0 when none is left, else err says what was kept. */
int jig_cg_sweep(int pid, const char *where, char *removed, size_t removed_len, char *err, size_t errlen);

#endif
