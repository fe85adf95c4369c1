#ifndef JIG_SANDBOX_LINUX_COMPAT_H
#define JIG_SANDBOX_LINUX_COMPAT_H

#include <stddef.h>

#include <jig/sandbox.h>

/* Every named reason found that this host cannot run scopes (bwrap, user
 * namespaces, AppArmor's restriction, and with with_cgroup cgroup v1), at
 * most max. Bubblewrap is run only under AppArmor's restriction. */
uint32_t jig_linux_problems(struct jig_host_problem *p, uint32_t max, int with_cgroup);
/* cgroup v1 controllers or no cgroup v2: fills *p and returns 1, else 0. */
int jig_linux_cgroup_v1(struct jig_host_problem *p);
/* The no-delegation problem for the caller's cgroup. */
void jig_linux_no_delegation(struct jig_host_problem *p, const char *cgroup);
/* The caller's delegated cgroup lacks memory, pids or cpu. */
void jig_linux_cgroup_controllers(struct jig_host_problem *p, const char *cgroup);
/* "<id>: <what>; to fix: <remedy>", the launch refusal. */
void jig_linux_problem_text(const struct jig_host_problem *p, char *out, size_t cap);

/* Runs argv with an empty environment; up to cap-1 bytes of its stdout. */
int jig_linux_run_capture(char *const argv[], char *out, size_t cap);
/* bwrap --unshare-all ... /bin/true: its exit status. */
int jig_linux_bwrap_noop(void);

#endif
