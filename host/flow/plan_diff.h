/* Plan differences: what changed between the admitted Plan and the Plan of
 * the project as it is now (Flows added or removed, files of a package,
 * grants, digests, scopes, the snapshot), for a re-review and for jig
 * run's stale-Plan refusal. */
#ifndef JIG_FLOW_PLAN_DIFF_H
#define JIG_FLOW_PLAN_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "flow/plan.h"

/* At most this many changes are listed per Flow (and for the Plan's own
 * facts); the rest are counted ("more"). */
#define JIG_PLAN_DIFF_MAX_PER_FLOW 12

/* The admitted Plan's document <project>/.jig/admitted/<sha>.json, or NULL. */
json_t *jig_plan_admitted_doc(const struct jig_project *p, const char *sha);
/* The changes from was to now, in Plan order: a new array of {flow?,
 * change (flow-added, flow-removed, file-changed, file-added, file-removed,
 * added, removed, changed, agent-provider, snapshot, launch-set, more),
 * subject, detail, text}. A package whose digest changed is named by its
 * files, from the store's manifests (p's; now's files from the capture).
 * prepared: now's npm dependencies were prepared (review); jig run's Plan
 * (false) has none for a changed package, which is then no change of its
 * own. */
json_t *jig_plan_diff(const struct jig_project *p, json_t *was, json_t *now, bool prepared);
/* Every change's text, one line each ("  " first), on out, inert. */
void jig_plan_diff_print(json_t *changes, FILE *out);
/* jig run's refusal of a Plan that is not the admitted one: names the
 * Flow (flow's first, else the first changed) and the changed file or
 * fact; the count of the others. */
int jig_plan_stale(json_t *changes, const char *flow, const char *was, const char *now, struct jig_error *e);

#endif
