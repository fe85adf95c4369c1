/* A directory held by a lease (decision 320): DIR/lease, a file locked
 * (flock) by the processes that own the directory for as long as any of
 * them lives; a sweep that finds the lock free reads the facts in it (the
 * boot id, the owners' pids and start times) and removes what no process
 * owns. The Run's lease is one (publish/run_lease.h), a session's root
 * another (session/runtime.h). Here: the identity of a process (its start
 * time, the boot) and the removal with the lease last. */
#ifndef JIG_PROC_LEASE_H
#define JIG_PROC_LEASE_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"
#include "util/limits.h"

#define JIG_LEASE_FILE "lease"

/* Removes the run directory with the lease last (a sweep that finds the
 * directory without a lease reports it), never following a symlink. The
 * directory is marked first (mode 01700, JIG_RUN_DIR_ENDING): one killed
 * between the lease's unlink and its own rmdir is empty and marked, and a
 * sweep removes it (decision 188; models/recovery_sweep.pml). */
#define JIG_RUN_DIR_ENDING 01000
void jig_lease_remove_run_dir(const char *run_dir);
/* The same for the directory name beneath parent (a session's root). */
void jig_lease_remove_dir_at(int parent, const char *name);

/* The start time of pid (field 22 of /proc/PID/stat, clock ticks since
 * boot): 0 with *start, -1 when there is no such process, -2 when it
 * cannot be read (errno). */
int jig_proc_start(pid_t pid, unsigned long long *start);
/* Is the process {pid, start} still the one running? */
enum jig_proc_life { JIG_PROC_GONE, JIG_PROC_REUSED, JIG_PROC_ALIVE, JIG_PROC_UNKNOWN };
enum jig_proc_life jig_proc_life(pid_t pid, unsigned long long start);
/* /proc/sys/kernel/random/boot_id; 0 or -1. */
int jig_boot_id(char *out, size_t cap);

#endif
