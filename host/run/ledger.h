/* The root's durable ledger of reservations (<run dir>/reservations.json,
 * call.h): the root's own envelope, each dispatched branch's reservation
 * until its cleanup is confirmed, and whether one is held. Every function
 * here runs under root->lock (but jig_call_root_init/_free). */
#ifndef JIG_RUN_LEDGER_H
#define JIG_RUN_LEDGER_H

#include <stddef.h>

#include "run/call.h"

/* Adds r for child id, if the sum stays within the budget: 0, or -1 with
 * why (nothing reserved). */
int jig_ledger_reserve(struct jig_call_root *root, const char *id, const struct jig_binding *b,
		       const struct jig_reservation *r, char *why, size_t cap);
/* Removes child id's r: only after its cleanup is confirmed. */
void jig_ledger_release(struct jig_call_root *root, const char *id, const struct jig_reservation *r);
/* The ledger replaced atomically and synced: 0, or -1. */
int jig_ledger_write(struct jig_call_root *root);

#endif
