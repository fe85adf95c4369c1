/*
 * publication.pml - issue 37: the publication of a Run's packet.
 *
 * Two Runs (1 and 2) publish to the same --output path; the path may
 * already exist when they start (3: made by someone else). Each Run has
 * its outer command, its coordinator and, after the coordinator's loss,
 * a recovery-only coordinator; the killer may SIGKILL any of them at any
 * step (an `unless` escape). The abandoned-run sweep removes a stage of a
 * Run whose lease lock is free. Every step names the C function and file
 * that performs it; docs/reliability.md, "Model-checked protocols
 * (issue 37)", has the same mapping as a table.
 *
 * Abstracted: the packet's bytes are one level (stage[r]: made, files,
 * record, sealed; DAMAGED: a recursive removal part-way); the lease is
 * its lock (held while any process of the Run lives: host/publish/run_lease.c);
 * file-system calls that are one system call (mkdirat, renameat2) are one
 * indivisible step (d_step); a recursive removal is two. Left out: the
 * checkpoint's content, the record's text, the no-replace probe
 * (jig_publish_open's probe() leaves nothing), modes (seal's fchmod is
 * the step to SEALED), signals other than SIGKILL (the orphaned
 * coordinator's SIGTERM makes it cancel; it still publishes the same
 * whole way, so it is the same steps here).
 *
 * Properties (checked by the monitor `watch` in every state, and by
 * assertions):
 *   P1 never a partial publication: whatever is at the destination is a
 *      whole, sealed packet (R-S07; record.json written and sealed before
 *      the rename);
 *   P2 never a replaced publication: once the destination holds
 *      something it holds that forever (renameat2 RENAME_NOREPLACE;
 *      a stage removal never reaches it; R-S07, R-L07);
 *   P3 a recovery-only coordinator publishes only after confirmed
 *      fencing: no scope of its Run still runs (R-O02).
 *
 * Mutants (each must give a counterexample; tests/models/check.sh):
 *   MUTANT_RENAME_REPLACE   rename that replaces (plain rename(2))   -> P2
 *   MUTANT_RENAME_EARLY     rename before the record and the seal    -> P1
 *   MUTANT_SWEEP_NO_LEASE   the sweep removes a stage of a live Run  -> P1
 *   MUTANT_RECOVER_UNFENCED recovery although fencing unconfirmed    -> P3
 */

#define NONE    0
#define MADE    1	/* jig_publish_stage: the stage and its files/ */
#define FILES   2	/* jig_publish_collect / jig_checkpoint_publish */
#define RECORD  3	/* jig_publish_commit: record.json written */
#define SEALED  4	/* jig_publish_commit: seal() and fchmod 0500 */
#define DAMAGED 5	/* jig_remove_tree part-way */

#define PRE 3		/* the destination made by someone else */

/* the scope of a Run's Flow */
#define S_NONE  0
#define S_LIVE  1
#define S_GONE  2	/* fenced, cleanup confirmed */
#define S_STUCK 3	/* fencing not confirmed */

byte dest_run;		/* 0: no destination; 1, 2: that Run's packet; PRE */
byte dest_state;	/* the level of what was renamed there */
byte stage[3];		/* the stage .jig-stage-XXXXXX-NAME of Run 1, 2 */
bool at_dest[3];	/* the stage fd now names the destination (renamed) */
bool bound[3];		/* jig_recovery_bind wrote recovery.json */
byte scope[3];
bool c_alive[3], o_alive[3], r_alive[3];
bool c_kill[3], o_kill[3], r_kill[3];	/* SIGKILL sent */
bool c_lost[3];		/* the coordinator died by a signal */
bool r_lost[3];
bool fenced_ok[3];	/* cleanup_lost: jig_sandbox_recover confirmed */

/* the lease's flock is free: no process of the Run holds the file */
#define LOCK_FREE(r) (!c_alive[r] && !o_alive[r] && !r_alive[r])

/* jig_remove_tree of the stage by its name (jig_publish_close,
 * jig_publish_remove_stage, sweep.c remove_stage): not one system call */
inline remove_stage(r) {
	d_step { if :: stage[r] != NONE -> stage[r] = DAMAGED :: else -> skip fi };
	stage[r] = NONE
}

/* a write into the stage through its descriptor (stagefd): after a rename
 * the descriptor names the destination */
inline write_stage(r, lvl, ok) {
	d_step {
		if
		:: at_dest[r] -> dest_state = lvl
		:: !at_dest[r] && (stage[r] == MADE || stage[r] == FILES || stage[r] == RECORD) -> stage[r] = lvl
		:: !at_dest[r] && stage[r] == DAMAGED -> skip	/* the damage stays */
		:: !at_dest[r] && stage[r] == NONE -> ok = false
		:: else -> skip
		fi
	}
}

/* renameat2(parentfd, stage, parentfd, name, RENAME_NOREPLACE) in
 * jig_publish_commit (host/publish/publish.c) */
inline rename_stage(r, ok) {
	d_step {
		if
		:: stage[r] == NONE -> ok = false	/* ENOENT */
		:: stage[r] != NONE && dest_run == 0 ->
			dest_run = r; dest_state = stage[r]; stage[r] = NONE; at_dest[r] = true
		:: stage[r] != NONE && dest_run != 0 ->
#ifdef MUTANT_RENAME_REPLACE
			dest_run = r; dest_state = stage[r]; stage[r] = NONE; at_dest[r] = true
#else
			ok = false			/* EEXIST: "appeared while the Flow ran" */
#endif
		fi
	}
}

/* jig_publish_open (host/publish/publish.c): "already exists; jig never
 * replaces a destination" */
#define DEST_FREE (dest_run == 0)

/* jig_publish_stage: mkdirat(stage) and files/; EEXIST: "not ours" */
inline make_stage(r, ok) {
	d_step { if :: stage[r] == NONE -> stage[r] = MADE :: else -> ok = false fi }
}

/* the publication steps of jig_publish_commit: record, seal, rename */
inline commit(r, ok) {
#ifdef MUTANT_RENAME_EARLY
	rename_stage(r, ok);
	if :: ok -> write_stage(r, RECORD, ok); write_stage(r, SEALED, ok) :: else -> skip fi
#else
	write_stage(r, RECORD, ok);	/* jig_write_file_at(stagefd, "record.json") */
	if :: ok -> write_stage(r, SEALED, ok) :: else -> skip fi;	/* seal(), fchmod 0500 */
	if :: ok -> rename_stage(r, ok) :: else -> skip fi
#endif
}

/* The coordinator: jig_run_flow (host/run/flow_run.c) */
proctype coordinator(byte r)
{
	bool ok = true;
	{
		/* admit(): jig_publish_open refuses an existing destination */
		if
		:: DEST_FREE ->
			bound[r] = true;	/* ready(): jig_recovery_bind, before the launch */
			scope[r] = S_LIVE;	/* launch(): jig_launch, the Flow runs */
			scope[r] = S_GONE;	/* the scope fenced, cleanup confirmed */
			make_stage(r, ok);	/* publish(): jig_publish_stage */
			if :: ok -> write_stage(r, FILES, ok) :: else -> skip fi;	/* jig_publish_collect */
			if :: ok -> commit(r, ok) :: else -> skip fi;
			if :: !ok && !at_dest[r] && stage[r] != NONE -> remove_stage(r)	/* jig_publish_close */
			   :: else -> skip fi
		:: else -> skip	/* "already exists": nothing run */
		fi;
		c_alive[r] = false	/* exit: jig_lease_remove_run_dir, _exit */
	} unless { c_kill[r] -> c_lost[r] = true; c_alive[r] = false }
}

#define P3_FENCED(r) (scope[r] != S_LIVE && scope[r] != S_STUCK)

/* The recovery-only coordinator: recover() (host/run/recovery.c) */
proctype recovery(byte r)
{
	bool ok = true;
	{
		/* P3: only after confirmed fencing (jig_run_outer's cleanup_lost) */
		assert(P3_FENCED(r));
		if
		:: DEST_FREE ->		/* jig_publish_open */
			make_stage(r, ok);	/* jig_publish_stage: the same stage name */
			if :: ok -> write_stage(r, FILES, ok) :: else -> skip fi;	/* jig_checkpoint_publish */
			if :: ok -> commit(r, ok) :: else -> skip fi;	/* record(), jig_publish_commit */
			if :: !ok && !at_dest[r] && stage[r] != NONE -> remove_stage(r)	/* jig_publish_close */
			   :: else -> skip fi
		:: else -> skip
		fi;
		r_alive[r] = false
	} unless { r_kill[r] -> r_lost[r] = true; r_alive[r] = false }
}

/* The outer command: jig_run_outer (host/run/outer.c) */
proctype outer(byte r)
{
	{
		c_alive[r] = true;
		run coordinator(r);	/* fork; the lease's descriptor is shared */
		(!c_alive[r]);		/* supervise(): waitpid */
		if
		:: c_lost[r] ->
			/* cleanup_lost: jig_sandbox_recover fences the scopes */
			if
			:: scope[r] == S_LIVE -> scope[r] = S_GONE; fenced_ok[r] = true
			:: scope[r] == S_LIVE -> scope[r] = S_STUCK	/* not confirmed */
			:: scope[r] != S_LIVE -> fenced_ok[r] = true
			fi;
			remove_stage(r);	/* jig_publish_remove_stage, by name */
#ifdef MUTANT_RECOVER_UNFENCED
			if :: bound[r] ->
#else
			if :: fenced_ok[r] && bound[r] ->
#endif
				/* jig_recovery_run: fork the recovery-only coordinator */
				r_alive[r] = true;
				run recovery(r);
				(!r_alive[r]);
				if :: r_lost[r] -> remove_stage(r)	/* "it was lost too: its stage goes" */
				   :: else -> skip fi
			:: else -> skip
			fi
		:: else -> skip
		fi;
		o_alive[r] = false	/* jig_lease_remove_run_dir, jig_lease_close */
	} unless { o_kill[r] -> o_alive[r] = false }
}

/* The abandoned-run sweep: sweep_run (host/publish/sweep.c): take() the
 * lease's lock, abandoned(), then remove_stage() */
active proctype sweep()
{
	byte r = 1;
	do
	:: r < 3 ->
#ifdef MUTANT_SWEEP_NO_LEASE
		if :: stage[r] != NONE -> remove_stage(r) :: else -> skip fi;
#else
		if :: LOCK_FREE(r) && stage[r] != NONE -> remove_stage(r) :: else -> skip fi;
#endif
		r++
	:: r == 3 -> break
	od
}

/* SIGKILL at any moment (the OOM killer, kill -9, a process-group
 * kill): any process of either Run, at most KILLS of them in one
 * execution (the bound that keeps the state space small) */
#ifndef KILLS
#define KILLS 2
#endif
active proctype killer()
{
	byte k = 0;
end_k:
	do
	:: atomic { k < KILLS && c_alive[1] && !c_kill[1] -> c_kill[1] = true; k++ }
	:: atomic { k < KILLS && c_alive[2] && !c_kill[2] -> c_kill[2] = true; k++ }
	:: atomic { k < KILLS && o_alive[1] && !o_kill[1] -> o_kill[1] = true; k++ }
	:: atomic { k < KILLS && o_alive[2] && !o_kill[2] -> o_kill[2] = true; k++ }
	:: atomic { k < KILLS && r_alive[1] && !r_kill[1] -> r_kill[1] = true; k++ }
	:: atomic { k < KILLS && r_alive[2] && !r_kill[2] -> r_kill[2] = true; k++ }
	od
}

/* P1 and P2, in every state */
#define P1_WHOLE (dest_run == 0 || dest_run == PRE || dest_state == SEALED)
#define P2_NEVER_REPLACED (dest_run == seen)
active proctype watch()
{
	byte seen = 0;
end_w:
	do
	:: atomic { seen == 0 && dest_run != 0 -> seen = dest_run }
	:: atomic { seen != 0 && dest_run != seen -> assert(P2_NEVER_REPLACED) }	/* replaced or removed */
	:: atomic { !P1_WHOLE -> assert(P1_WHOLE) }	/* partial */
	od
}

init {
	atomic {
		if :: dest_run = PRE :: skip fi;	/* an existing destination, or none */
		o_alive[1] = true; o_alive[2] = true;
		run outer(1); run outer(2)
	}
}
