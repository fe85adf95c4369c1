/*
 * reservations.pml - issue 37: the root budget and the durable ledger of
 * branch reservations (<run dir>/reservations.json).
 *
 * One root Run whose Flow calls three bindings (branches 0, 1, 2); the
 * root may have two in flight (the shape rule, JIG_ROOT_SIBLINGS). The
 * budget is B units: the root's own envelope takes ROOT, each branch the
 * units the Plan pins for it (RES), so not every pair fits. Each child
 * is a thread of the coordinator; its payload may crash; its cleanup may
 * be confirmed or not. The coordinator may be SIGKILLed at any step (the
 * `unless` escapes); the outer command then fences what is left and the
 * recovery-only coordinator (which never dispatches) takes over; the
 * outer command itself may be killed too, at any step (then the
 * coordinator, with SIGTERM from PR_SET_PDEATHSIG, cancels: its children
 * are fenced and it ends normally). A ledger write (write, fsync,
 * renameat, fsync of the directory) may fail.
 *
 * Abstracted: a reservation is a number of units (memory, tasks and CPU
 * are checked the same way, jig_reservation_fits); the ledger's text is a
 * bit set (one renameat: one step); root->lock makes each ledger update
 * one step (atomic); the child's directory removal is folded into its
 * cleanup's confirmation (both are required: child.c). Left out: deeper
 * levels (they run inside their branch's reservation and reserve
 * nothing), import stages (decision 125 holds them with the reservation),
 * deadlines, refusals other than the budget's.
 *
 * Properties:
 *   R1 the budget: the root's envelope and the reservations of every child
 *      scope that exists (launched, not yet confirmed removed) never pass
 *      B; nor does the in-memory sum (R-L02, R-L03);
 *   R2 written before dispatch, released only after confirmed cleanup:
 *      a child scope that exists is in the on-disk ledger while the ledger
 *      exists, and in the in-memory one while the coordinator lives
 *      (R-L02; audit #138, #175: an unconfirmed cleanup keeps it);
 *   R3 after recovery nothing is leaked: when the outer command ends, no
 *      child scope still runs unfenced and the run directory with its
 *      ledger is gone (R-O02, R-L08: an unconfirmed cleanup is reported,
 *      the cgroup kept, never claimed removed).
 *
 * Mutants:
 *   MUTANT_NO_BUDGET_CHECK        jig_ledger_reserve without the fit   -> R1
 *   MUTANT_LAUNCH_BEFORE_LEDGER   launch, then write the ledger        -> R2
 *   MUTANT_RELEASE_BEFORE_CLEANUP release when the payload ends        -> R2
 *   MUTANT_FENCE_ROOT_ONLY        recovery fences the root's scope only -> R3
 */

#define N 3
#define B 4
#define ROOT 1
#define RES(i) (i == 0 -> 2 : (i == 1 -> 1 : 2))

/* a child's scope (its cgroup) */
#define NONE  0
#define LIVE  1	/* launched: its payload may run */
#define ENDED 2	/* its payload ended, the cgroup not yet removed */
#define GONE  3	/* fenced, removed: cleanup confirmed */
#define STUCK 4	/* fenced, cleanup NOT confirmed: the cgroup stays */

#define EXISTS(i) (cg[i] == LIVE || cg[i] == ENDED || cg[i] == STUCK)
#define BIT(i) (1 << i)
#define UNITS(m) (ROOT + ((m & 1) -> RES(0) : 0) + ((m & 2) -> RES(1) : 0) + ((m & 4) -> RES(2) : 0))
#define LIVE_UNITS (ROOT + (EXISTS(0) -> RES(0) : 0) + (EXISTS(1) -> RES(1) : 0) + (EXISTS(2) -> RES(2) : 0))

byte cg[N];
byte mem;		/* root->live (ledger.c), as a bit set */
byte disk;		/* reservations.json's "live" */
bool held;		/* root->held */
bool ledger;		/* the run directory and its ledger exist */
byte in_flight;		/* caller->in_flight (call.c) */
bool c_alive, o_alive, c_kill, o_kill, cancel;
bool c_lost;

/* jig_ledger_write (host/run/ledger.c): write, fsync, renameat, fsync;
 * it may fail, leaving the old file */
inline ledger_write(ok) {
	if :: disk = mem; ok = true :: ok = false fi
}

/* A child: jig_child_main (host/run/child.c) */
proctype child(byte i)
{
	bool ok;
	{
#ifdef MUTANT_LAUNCH_BEFORE_LEDGER
		atomic { cg[i] = LIVE; ledger_write(ok) };	/* (the reply is ignored in the mutant) */
#endif
		cg[i] = LIVE;		/* launch(): jig_launch */
		if			/* the payload succeeds, fails or crashes; or is cancelled */
		:: cg[i] = ENDED
		:: cancel -> cg[i] = ENDED	/* the caller's abort relayed: fenced */
		fi;
#ifdef MUTANT_RELEASE_BEFORE_CLEANUP
		atomic { mem = mem & ~BIT(i); ledger_write(ok) };
#endif
		/* fenced by the sandbox module; jig_remove_tree of its directory */
		if :: cg[i] = GONE :: cg[i] = STUCK fi;
		atomic {	/* under root->lock */
			if
			:: cg[i] == GONE -> mem = mem & ~BIT(i); ledger_write(ok)	/* jig_ledger_release */
			:: cg[i] == STUCK -> held = true; ledger_write(ok)	/* "held_after_unconfirmed_cleanup" */
			fi;
			in_flight--
		}
	} unless { c_kill }
}

/* The root's Run/0 reader dispatching its calls: jig_call_op, admit()
 * (host/run/call.c) and jig_ledger_reserve (host/run/ledger.c); then the
 * coordinator's end: jig_call_join, jig_lease_remove_run_dir. */
proctype coordinator()
{
	byte i = 0;
	bool ok;
	{
		ledger = true;	/* jig_call_root_init: the root's envelope (a failure: nothing runs) */
		do
		:: i < N ->
			atomic {	/* under root->lock */
#ifdef MUTANT_NO_BUDGET_CHECK
				if :: in_flight < 2 -> ok = true
#else
				if :: in_flight < 2 && UNITS(mem | BIT(i)) <= B -> ok = true
#endif
				   :: else -> ok = false	/* refused before dispatch */
				fi;
				if
				:: ok ->
					mem = mem | BIT(i);
#ifndef MUTANT_LAUNCH_BEFORE_LEDGER
					ledger_write(ok);	/* before the dispatch */
					if :: !ok -> mem = mem & ~BIT(i) :: else -> skip fi	/* "could not be recorded; not dispatched" */
#endif
				:: else -> skip
				fi;
				if :: ok -> in_flight++; run child(i)	/* pthread_create(jig_child_main) */
				   :: else -> skip fi
			};
			i++
		:: i == N -> break
		od;
		cancel = true;	/* the root's scope ends: its children are fenced */
		(in_flight == 0);	/* jig_call_join */
		atomic { ledger = false; c_alive = false }	/* jig_lease_remove_run_dir; _exit */
	} unless { c_kill -> c_lost = true; c_alive = false }
}

/* jig_run_outer (host/run/outer.c): after the coordinator's loss,
 * cleanup_lost fences every scope of the coordinator (jig_sandbox_recover:
 * each jig-<pid>-* cgroup); the recovery-only coordinator (recovery.c)
 * only publishes; then the run directory goes. */
proctype outer()
{
	byte j;
	{
		c_alive = true;
		run coordinator();
		(!c_alive);
		if
		:: c_lost ->
#ifndef MUTANT_FENCE_ROOT_ONLY
			j = 0;
			do
			:: j < N -> if :: EXISTS(j) -> if :: cg[j] = GONE :: cg[j] = STUCK fi :: else -> skip fi; j++
			:: j == N -> break
			od;
#endif
			ledger = false	/* jig_lease_remove_run_dir "once its scope is fenced" */
		:: else -> skip
		fi;
		/* R3, when the outer command ends */
		assert(!ledger && cg[0] != LIVE && cg[1] != LIVE && cg[2] != LIVE);
		o_alive = false
	} unless { o_kill -> cancel = true; o_alive = false }	/* PR_SET_PDEATHSIG: the coordinator cancels */
}

active proctype killer()
{
end_k:
	do
	:: atomic { c_alive && !c_kill -> c_kill = true }
	:: atomic { o_alive && !o_kill -> o_kill = true }
	od
}

/* R1 and R2 in every state */
#define R1_BUDGET (LIVE_UNITS <= B && UNITS(mem) <= B)
#define R2_DISK(i) (!ledger || !EXISTS(i) || (disk & BIT(i)))
#define R2_MEM(i) (!c_alive || !EXISTS(i) || (mem & BIT(i)))
#define R2_DURABLE (R2_DISK(0) && R2_DISK(1) && R2_DISK(2) && R2_MEM(0) && R2_MEM(1) && R2_MEM(2))
active proctype watch()
{
end_w:
	do
	:: atomic { !R1_BUDGET -> assert(R1_BUDGET) }
	:: atomic { !R2_DURABLE -> assert(R2_DURABLE) }
	od
}

init {
	atomic { o_alive = true; run outer() }
}
