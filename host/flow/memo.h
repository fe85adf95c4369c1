/* A remembered admission (decisions 179-181): what building the Plan
 * established — its canonical text and digest, every composed scope's
 * template (policy, argv, held directory) and the host facts composition
 * read — kept in <project>/.jig/admission-memo.json (state no scope ever
 * sees) under a key of every other input the Plan is built from. jig run
 * uses it instead of composing only while the key and every fact are proven
 * against the host as it is now and its Plan is the admitted one; anything
 * else (no memo, a corrupt, foreign, linked or oversized one, a changed
 * input) derives the Plan as before and refreshes the memo. */
#ifndef JIG_FLOW_MEMO_H
#define JIG_FLOW_MEMO_H

#include <jansson.h>
#include <stdbool.h>

#include "flow/plan.h"

#define JIG_MEMO_FORMAT "jig-admission-memo/1"
#define JIG_MEMO_FILE "admission-memo.json"

/* The key of the Plan's inputs other than its host facts: the jig binary
 * (version and file identity), the caller (uid, euid, home), the snapshot
 * (directory, id, manifest and catalog digests), the project (jig.json's
 * bytes, each Flow's name, package directory and digest, its prepared
 * record as the Plan reads it) and the operator's agents.json bytes.
 * -1: no key (an input could not be read; nothing is remembered). */
int jig_memo_key(const struct jig_project *p, const struct jig_snapshot *s, char out[JIG_SHA256_HEX]);
/* Whether the project's Plan can be remembered at all: not with a native
 * Agent route (its provider identity hashes the operator's client trees). */
bool jig_memo_applies(const struct jig_project *p);

/* Keeps pl's memo (pl built with its key and facts; best effort). */
void jig_memo_write(const struct jig_project *p, const struct jig_plan *pl);

/* The memo's document from bytes: format, key, plan, plan_sha256 (the
 * text's digest), facts and scopes well-formed and within bounds; NULL
 * otherwise. Pure: what a fuzz target and a unit test drive. */
json_t *jig_memo_parse(const char *buf, size_t len);

/* Fills *pl from the project's memo if it is proven now: its key is s's and
 * p's now, every fact holds, its Plan is admitted and every scope's policy
 * digest and argv are the Plan's. Only the scopes a Run of flow can launch
 * (flow's, its routes', and those of the Flows its bindings reach) are
 * restored. true: used (why unset); false: *pl is untouched and why (cap
 * bytes) says why not: the last-Run entry's admission_why. */
bool jig_memo_use(const struct jig_project *p, const struct jig_snapshot *s, const char *flow, const char *admitted,
		  struct jig_plan *pl, char *why, size_t cap);

#endif
