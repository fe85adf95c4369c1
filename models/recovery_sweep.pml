/*
 * recovery_sweep.pml - issue 37: a Run's lease and the abandoned-run
 * sweep (host/publish/run_lease.c, host/proc/lease.c, host/publish/sweep.c, host/run/outer.c).
 *
 * Three run directories under /tmp: Run 0 left before the last boot (its
 * lease names another boot id; no process or cgroup of it survived), Run
 * 1 whose outer command and coordinator may each be SIGKILLed at any step
 * (or not: then it ends normally), Run 2 a new Run starting while the
 * sweeps run (never killed: the live Run beside the dead ones). Its
 * coordinator's pid may be taken by another process after it dies (the
 * new process may end later). The payload of a killed coordinator may
 * outlive it (its cgroup populated) and end later. A sweep (NSWEEP, 1 by
 * default: two at once are 18 million states, decision 189) passes over
 * every run directory PASSES times (1) at any moment; for the liveness
 * check (-DLIVE) it sweeps for ever, as every later jig command does.
 *
 * Abstracted: one lease per Run (its flock held while the outer command or
 * the coordinator, which shares the open file, lives); the lease document
 * is written by one pwrite (written or empty); /proc's pid and start time
 * are "alive", "gone" or "reused"; a Run's cgroups are one (populated,
 * empty, none); rmdir is one step that fails on a populated cgroup; the
 * stage is one entry; the sweep's 2 s wait for a held lease and its 100 ms
 * look again are one retry each. Left out: the recovery-only coordinator
 * (it holds the same lease, like the outer command: publication.pml has
 * it), the uid and format checks (a lease not whole is kept), the
 * documented window of a pid reused between the check and the rmdir
 * (docs/reliability.md, "What remains"; the model makes them one step).
 *
 * Properties:
 *   S1 the sweep never removes anything of a Run whose outer command or
 *      coordinator is alive (its run directory, lease, stage, cgroups);
 *   S2 the sweep never removes a cgroup that holds a process (nothing is
 *      ever killed);
 *   S3 (liveness, -DLIVE, weak fairness) every Run abandoned after its
 *      lease was in place is eventually removed entirely, once no check
 *      disagrees (its payload ended, its pid no longer reused).
 *
 * Mutants:
 *   MUTANT_SWEEP_NO_LOCK       the sweep ignores the lease's flock   -> S1
 *   MUTANT_RENAME_BEFORE_LOCK  the lease renamed into place, then
 *                              locked (jig_lease_create reordered)   -> S1
 *   MUTANT_SWEEP_POPULATED     cgroups removed though populated      -> S2
 *   MUTANT_NO_END_MARK         a Run's removal without its end mark
 *                              (before decision 188)                 -> S3
 */

#ifndef NSWEEP
#ifdef LIVE
#define NSWEEP 1
#else
#define NSWEEP 1
#endif
#endif

/* a sweep looks at every directory PASSES times (safety), or forever
 * (the liveness check) */
#ifdef LIVE
#define PASS_MORE true
#else
#ifndef PASSES
#define PASSES 1
#endif
#define PASS_MORE (pass < PASSES)
#endif

#define CG_NONE 0
#define CG_POP  1	/* holds a process */
#define CG_EMPTY 2

bool dir[3], lease[3], lnew[3], doc[3], other[3], stage[3], mark[3];
byte content[3];	/* package/, input/, reservations.json ... */
byte cg[3];
bool o_alive[3], c_alive[3], o_kill[3], c_kill[3], c_lost[3];
byte ofd[3];		/* processes of the Run holding the lease's open file */
bool locked[3];		/* the Run's flock on it was taken */
byte sw_lock[3];	/* the sweep holding it (1 + its number), or 0 */
bool reused[3];		/* the coordinator's pid is another process's now */
bool leased[3];		/* ghost: the lease was in place once */
bool reuse_ended;

#define RUN_LOCK(r) (locked[r] && ofd[r] > 0)
#define LOCK_FREE(r) (!RUN_LOCK(r) && sw_lock[r] == 0)
#define OWNER_ALIVE(r) (o_alive[r] || c_alive[r])

/* S1, S2: asserted at every removal by a sweep */
#define S1_OWNER_GONE(r) (!OWNER_ALIVE(r))
#define S2_EMPTY(r) (cg[r] != CG_POP)

/* jig_lease_remove_dir_at (host/proc/lease.c), by a Run or a sweep: its
 * end mark (decision 188), everything but the lease, the lease, the
 * directory */
inline remove_run_dir(r, bysweep) {
#ifndef MUTANT_NO_END_MARK
	mark[r] = true;		/* fchmod(fd, 01700) */
#endif
	if :: bysweep -> assert(S1_OWNER_GONE(r)) :: else -> skip fi;
	content[r] = 0;
	if :: bysweep -> assert(S1_OWNER_GONE(r)) :: else -> skip fi;
	d_step { lease[r] = false; doc[r] = false };	/* unlinkat(lease) */
	d_step { if :: !lease[r] && !lnew[r] && content[r] == 0 && !stage[r] -> dir[r] = false; mark[r] = false :: else -> skip fi }	/* rmdir */
}

/* The outer command and its coordinator: jig_run_outer (outer.c),
 * jig_run_flow (flow_run.c) */
proctype coordinator(byte r)
{
	{
		doc[r] = true;		/* jig_lease_write: boot id, pids, start times, cgroup, stage */
		content[r] = 1;		/* prepare(): package/, input/; reservations.json */
		cg[r] = CG_POP;		/* jig_launch: its scopes' cgroups jig-<pid>-* */
		if :: r == 2 -> end_live: (false) :: else -> skip fi;	/* Run 2 stays live */
		cg[r] = CG_EMPTY;	/* the payload ended, fenced */
		cg[r] = CG_NONE;	/* cleanup confirmed: the cgroups removed */
		stage[r] = true;	/* jig_publish_stage */
		stage[r] = false;	/* jig_publish_commit: renamed to --output */
		remove_run_dir(r, false);	/* jig_lease_remove_run_dir */
		atomic { c_alive[r] = false; ofd[r]-- }	/* _exit */
	} unless { c_kill[r] -> c_lost[r] = true; c_alive[r] = false; ofd[r]-- }
}

proctype outer(byte r)
{
	{
		dir[r] = true;		/* mkdtemp: 0700, empty */
#ifdef MUTANT_RENAME_BEFORE_LOCK
		lnew[r] = true;
		atomic { lease[r] = true; lnew[r] = false; leased[r] = true; ofd[r] = 1 };
		atomic { sw_lock[r] == 0 -> locked[r] = true };
#else
		atomic { lnew[r] = true; ofd[r] = 1 };		/* openat(lease.new, O_CREAT|O_EXCL) */
		atomic { sw_lock[r] == 0 -> locked[r] = true };	/* flock(LOCK_EX) */
		atomic { lease[r] = true; lnew[r] = false; leased[r] = true };	/* renameat(lease.new, lease) */
#endif
		atomic { c_alive[r] = true; ofd[r]++; run coordinator(r) };	/* fork: the open file shared */
end_wait:	(!c_alive[r]);		/* supervise(): waitpid */
		if
		:: c_lost[r] ->		/* cleanup_lost: jig_sandbox_recover fences, confirmed */
			cg[r] = CG_NONE;
			stage[r] = false	/* jig_publish_remove_stage */
		:: else -> skip
		fi;
		if :: dir[r] -> remove_run_dir(r, false) :: else -> skip fi;
		atomic { o_alive[r] = false; ofd[r]-- }	/* jig_lease_close, exit */
	} unless { o_kill[r] -> o_alive[r] = false; if :: ofd[r] > 0 -> ofd[r]-- :: else -> skip fi }
}

/* Run 1's SIGKILLs; after the coordinator's death its pid may be reused,
 * its payload may live on (cgroup populated) and end later */
active proctype world()
{
end_w:
	do
	:: atomic { c_alive[1] && !c_kill[1] -> c_kill[1] = true }
	:: atomic { o_alive[1] && !o_kill[1] -> o_kill[1] = true }
	:: atomic { c_lost[1] && !c_alive[1] && !reused[1] && !reuse_ended -> reused[1] = true }
	:: atomic { reused[1] && !reuse_ended -> reused[1] = false; reuse_ended = true }	/* the new process ended */
	:: atomic { cg[1] == CG_POP && !c_alive[1] -> cg[1] = CG_EMPTY }	/* the payload ended */
	od
}

/* The sweep: sweep_run (host/publish/sweep.c) for each run directory */
proctype sweep(byte s)
{
	byte r, pass = 0;
end_s:
	do
	:: PASS_MORE ->
	   pass++;
	   r = 0;
	   do
	   :: r < 3 ->
		if
		:: !dir[r] -> skip
		:: dir[r] && !lease[r] ->	/* no lease: look again 100 ms later */
			if
			:: !dir[r] || lease[r] -> skip
			:: dir[r] && !lease[r] ->
				/* decision 188: an empty directory with the end mark is
				 * a Run killed as it removed itself; else kept */
				d_step { if :: mark[r] && !lnew[r] && content[r] == 0 && !stage[r] && !lease[r] -> dir[r] = false; mark[r] = false
					 :: else -> skip fi }
			fi
		:: dir[r] && lease[r] ->	/* openat(lease): the sweep holds its inode */
#ifdef MUTANT_SWEEP_NO_LOCK
			if :: true ->
#else
			if
			:: atomic { LOCK_FREE(r) -> sw_lock[r] = s + 1 }	/* take(): flock(LOCK_EX|LOCK_NB) */
			:: atomic { !LOCK_FREE(r) -> skip }	/* held: a live Run, or kept (the 2 s wait) */
				goto next
			fi;
			if :: true ->
#endif
			if
			:: !lease[r] -> skip		/* st_nlink 0: another sweep removed it */
			:: lease[r] && !doc[r] && content[r] == 0 && !stage[r] ->	/* only_lease */
				remove_run_dir(r, true)
			:: lease[r] && !doc[r] && (content[r] != 0 || stage[r]) -> skip	/* kept */
			:: lease[r] && doc[r] ->
				if
				:: other[r] -> skip			/* another boot's: no cgroups survived it */
				:: !other[r] && (o_alive[r] || c_alive[r]) -> goto unlock	/* "still runs": kept */
				:: !other[r] && !o_alive[r] && !c_alive[r] && reused[r] -> goto unlock	/* pid in use again: kept */
				:: !other[r] && !o_alive[r] && !c_alive[r] && !reused[r] ->
					/* cgroups(): the sandbox door's sweep op, rmdir only */
#ifdef MUTANT_SWEEP_POPULATED
					d_step { assert(S2_EMPTY(r)); cg[r] = CG_NONE };
#else
					d_step { if :: cg[r] == CG_EMPTY -> assert(S1_OWNER_GONE(r)); cg[r] = CG_NONE :: else -> skip fi };
#endif
					if :: cg[r] == CG_POP -> goto unlock :: else -> skip fi	/* "not empty": kept */
				fi;
				d_step { if :: stage[r] -> assert(S1_OWNER_GONE(r)); stage[r] = false :: else -> skip fi };	/* remove_stage */
				remove_run_dir(r, true)
			fi
			fi;
unlock:			skip;
			d_step { if :: sw_lock[r] == s + 1 -> sw_lock[r] = 0 :: else -> skip fi };	/* close(lfd) */
next:			skip
		fi;
		r++
	   :: r == 3 -> break
	   od
	od
}

init {
	atomic {
		/* Run 0: left before the last boot, with or without its stage */
		dir[0] = true; lease[0] = true; doc[0] = true; other[0] = true; content[0] = 1; leased[0] = true;
		if :: stage[0] = true :: skip fi;
		o_alive[1] = true;
		run outer(1);
#ifndef LIVE	/* the live Run matters to S1, not to S3: left out of the liveness check */
		o_alive[2] = true;
		run outer(2);
#endif
		byte i = 0;
		do :: i < NSWEEP -> run sweep(i); i++ :: else -> break od
	}
}

#ifdef LIVE
/* S3: Run 0, and Run 1 once abandoned with its lease in place, are
 * eventually removed (the world's payload and reused pid end: weak
 * fairness) */
#define ABANDONED1 (leased[1] && !o_alive[1] && !c_alive[1])
ltl s3 { <> !dir[0] && [] (ABANDONED1 -> <> !dir[1]) }
#endif
