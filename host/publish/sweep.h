/* The abandoned-run sweep (R-L06, R-L08, R-C11; issue 31). When the outer
 * command and the coordinator die together (a kill of the process group,
 * the OOM killer, a power cut), nothing of the Run is there to clean up:
 * its scopes' cgroups, its run directory and its publication stage stay.
 * Every jig command that launches scopes (run, scope run, review) calls
 * jig_sweep first. For each
 * JIG_RUN_BASE/jig-run-* directory of the caller's uid it takes the Run's
 * lease (publish/run_lease.h) without waiting; a Run whose lease is held and whose
 * recorded owner lives is a live Run and is never touched. Otherwise the
 * Run is abandoned only if every check agrees: the lock was free, the
 * lease is whole and the caller's, and its boot id is another boot's or
 * both recorded processes are gone (no such pid, or one with another start
 * time). Then, in this order, each step only if the one before left
 * nothing: the coordinator's cgroups beside the recorded one (the sandbox
 * door's sweep: empty ones only, deepest first, never a kill; skipped for
 * another boot's Run, and kept while the coordinator's pid is in use by a
 * new process, whose cgroups would have the same names), the stage (its
 * directory reached without following a symlink, its device and inode the
 * recorded ones), the run directory (made writable first, never following
 * a symlink). Each removal is said in one line; each disagreement or check
 * that cannot be made keeps everything of that Run and says why. */
#ifndef JIG_PUBLISH_SWEEP_H
#define JIG_PUBLISH_SWEEP_H

#include <stddef.h>
#include <sys/types.h>

struct jig_sweep {
	const char *base; /* JIG_RUN_BASE, or a test's directory */
	/* One line, without a "jig: " prefix (the caller prints it inert). */
	void (*say)(void *ctx, const char *line);
	void *ctx;
	/* Removes the empty cgroups of a gone coordinator (the sandbox door's
	 * sweep, which jig_sweep opens when a Run needs it, if NULL): 0 when
	 * none is left; removed gets one line each, err why one was kept. */
	int (*cgroups)(void *ctx, pid_t coordinator, const char *where, char *removed, size_t removed_len, char *err,
		       size_t errlen);
	/* How long a held lease whose recorded owners are gone is waited for
	 * (another sweep removing it) before it is reported; 0: 2000 ms. */
	int wait_ms;
};

/* Sweeps sw->base; returns the number of Runs removed. */
int jig_sweep(const struct jig_sweep *sw);

#endif
