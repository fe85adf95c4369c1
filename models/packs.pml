/*
 * packs.pml - issue 50: the write of a Package/0 store pack
 * (host/flow/pack.c jig_pack_commit; docs/store.md, "Crash story").
 *
 * One review writes one pack and its index; a power loss may come at any
 * step (the crash process, once). What the loss keeps is what was made
 * durable: a file's bytes only once fsynced (before that, a file of the
 * right size may hold garbage: ext4's delayed allocation), a rename only
 * once its directory is fsynced (before that, each rename may or may not
 * survive, independently). A reader (jig_packs_load, which materialise,
 * the review's presence check and gc use) counts the pack as present only
 * when an index whose content is its name is named, and the pack it names
 * is named at the size the index says.
 *
 * Property (the monitor `watch`, in every state, before and after a
 * crash):
 *   P1 a pack a reader counts as present is all of itself (FULL): never
 *      a partial or torn pack.
 * (The digest checks on read, of the pack by the review and of each blob
 * by materialise and gc, are left out: P1 holds without them.)
 *
 * Mutants (each must give a counterexample; tests/models/check.sh):
 *   MUTANT_NO_PACK_SYNC   the pack named without its fsync         -> P1
 *   MUTANT_INDEX_FIRST    the index named before the pack's fsync  -> P1
 *   MUTANT_NO_SIZE_CHECK  the reader does not compare the pack's
 *                         size with the index's, and the pack is
 *                         named before its bytes are all written   -> P1
 */

#define NONE    0
#define PARTIAL 1	/* some of its bytes written */
#define FULL    2	/* all of them */
#define TORN    3	/* its full size, its bytes not (a crash before fsync) */

byte pk;		/* the pack file's content */
bool pk_sync;		/* its bytes durable */
bool pk_named;		/* renamed to <sha>.pack */
bool pk_named_d;	/* that rename durable */
byte ix;		/* the index: NONE (absent or torn: not its name) or FULL */
bool ix_sync, ix_named, ix_named_d;
bool crashed;

#ifdef MUTANT_NO_SIZE_CHECK
#define SIZED (pk != NONE)
#else
#define SIZED (pk == FULL || pk == TORN)
#endif
#define VISIBLE (ix_named && ix == FULL && pk_named && SIZED)

inline dir_sync() {
	d_step { pk_named_d = pk_named; ix_named_d = ix_named }
}

inline write_pack() {
	pk = PARTIAL;		/* jig_pack_add_fd: append */
	pk = FULL
}

inline sync_pack() {
#ifndef MUTANT_NO_PACK_SYNC
	pk_sync = true		/* fsync(w->fd) */
#else
	skip
#endif
}

inline write_index() {
	ix = FULL;		/* jig_write_file_at: written ... */
	ix_sync = true		/* ... and fsynced */
}

active proctype review() {
	{
#if defined(MUTANT_INDEX_FIRST)
	write_index();
	ix_named = true;
	write_pack();
	pk_named = true;
	sync_pack();
#elif defined(MUTANT_NO_SIZE_CHECK)
	pk_named = true;	/* written in place under its name */
	write_index();
	ix_named = true;
	write_pack();
	sync_pack();
#else
	write_pack();		/* jig_pack_add_fd, each blob */
	sync_pack();		/* "pack written" -> "pack synced" */
	pk_named = true;	/* renameat: "pack named" */
	write_index();		/* "index synced" */
	ix_named = true;	/* renameat: "index named" */
#endif
	dir_sync()		/* fsync(store/packs) */
	} unless { crashed }	/* the review ends with the machine */
}

/* A power loss at any step, once: what was not durable may be lost. */
active proctype crash() {
	atomic {	/* not d_step: each choice below is explored */
		!crashed ->
		crashed = true;
		if
		:: !pk_sync && pk == FULL -> if :: pk = NONE :: pk = TORN :: skip fi
		:: !pk_sync && pk == PARTIAL -> if :: pk = NONE :: skip fi
		:: else -> skip
		fi;
		if
		:: !ix_sync && ix == FULL -> if :: ix = NONE :: skip fi
		:: else -> skip
		fi;
		if
		:: pk_named && !pk_named_d -> if :: pk_named = false :: skip fi
		:: else -> skip
		fi;
		if
		:: ix_named && !ix_named_d -> if :: ix_named = false :: skip fi
		:: else -> skip
		fi
	}
}

/* P1, in every state */
active proctype watch() {
end:	atomic { (VISIBLE && pk != FULL) -> assert(!VISIBLE || pk == FULL) }
}
