/* The project's last Run of each Flow (<project>/.jig/runs/FLOW.json,
 * jig-last-run/1): what jig why FLOW explains, kept by jig run whether the
 * Run published a packet or was refused before or after it ran (a stale
 * Plan, an output refused), since a refusal leaves no packet. */
#ifndef JIG_PACKET_HISTORY_H
#define JIG_PACKET_HISTORY_H

#include <jansson.h>

#include "util/error.h"

#define JIG_HISTORY_FORMAT "jig-last-run/1"
#define JIG_HISTORY_DIR "runs"
/* What an entry keeps of a record: its logs and the scope's policy are
 * left out (the packet has them); over this, effects and children are cut
 * to their stubs, then left out. */
#define JIG_HISTORY_MAX_BYTES (1u << 20)

struct jig_history_entry {
	const char *flow;   /* a valid Flow name */
	const char *packet; /* --output as given */
	json_t *record;     /* the published record, or NULL */
	const struct jig_error *refusal; /* the command's error, or NULL */
	json_t *changes;    /* a stale Plan's differences (flow/plan_diff.h), or NULL */
	const char *admission; /* "remembered" or "derived": how the Run had its Plan (flow/memo.h); NULL: not that far */
	const char *admission_why; /* derived: why the remembered one was not used, or NULL */
};

/* Replaces the Flow's entry in the state directory statefd (best effort:
 * a failure to keep it never changes the Run's outcome). */
void jig_history_note(int statefd, const struct jig_history_entry *h);
/* The Flow's entry, checked for its format; a missing one says so. */
int jig_history_load(int statefd, const char *project, const char *flow, json_t **doc, struct jig_error *e);

#endif
