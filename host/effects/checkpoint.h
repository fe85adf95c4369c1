/* Run Checkpoint (issue 18, decision 71): a reviewed, root-only effect of
 * a Flow with declared outputs ("checkpoint": true in flow.json).
 * jig.checkpoint({files, state}) sends one aggregate over Run/0; the
 * coordinator checks it against the caps of util/limits.h and hands it to
 * the outer command's private run directory (never visible to the scope):
 * checkpoint.next (the bounded replacement) renamed over checkpoint.json
 * (the one accepted aggregate). A Run that does not complete publishes the
 * accepted one as checkpoint.json in its packet after confirmed fencing,
 * its record saying "interrupted"; so does the recovery-only coordinator
 * (run/recovery.h) after coordinator loss. */
#ifndef JIG_EFFECTS_CHECKPOINT_H
#define JIG_EFFECTS_CHECKPOINT_H

#include <jansson.h>
#include <stddef.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_CHECKPOINT_FILE "checkpoint.json"
#define JIG_CHECKPOINT_FORMAT "jig-checkpoint/1"

struct jig_checkpoint_env {
	int rundir;	/* the outer command's run directory */
	unsigned saves; /* requests so far (accepted or not) */
};

/* Checks a Run/0 checkpoint message and returns the stored aggregate
 * (canonical JSON: files, format, save, state) in *out (malloc'd), or
 * NULL with why. Pure: the fuzz harness drives it. */
char *jig_checkpoint_encode(json_t *msg, unsigned save, size_t *len, char *why, size_t cap);

/* The Run/0 handler (jig_run0_effect_fn's shape, env as ctx). */
void jig_checkpoint_effect(struct jig_checkpoint_env *env, json_t *op, json_t **reply, json_t **evidence);

/* The accepted aggregate of rundir, if any, copied into stagefd as
 * checkpoint.json; *part is the record's "checkpoint" entry (progress
 * "interrupted"; save 0 when none was accepted). */
int jig_checkpoint_publish(int rundir, int stagefd, json_t **part, struct jig_error *e);

#endif
