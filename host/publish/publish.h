/* Publication of a Run's packet: a new name in an existing directory,
 * never replaced. Files are collected (final validation) into a private
 * stage next to it, then the stage is renamed into place with
 * RENAME_NOREPLACE. The stage's name carries the run directory's random
 * part (.jig-stage-XXXXXX-NAME for /tmp/jig-run-XXXXXX), so the outer
 * command can remove it if the coordinator is lost (R-L06) and the
 * abandoned-run sweep (publish/sweep.h) can tell it from any other Run's: a
 * reused pid cannot collide with it. */
#ifndef JIG_PUBLISH_PUBLISH_H
#define JIG_PUBLISH_PUBLISH_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

struct jig_publish {
	const char *output; /* as the operator wrote it, for messages */
	int parentfd;
	char name[NAME_MAX + 1];
	char stage[NAME_MAX + 1]; /* "" when there is none */
	int stagefd;
};

/* The destination must be a plain new name in an existing directory. */
int jig_publish_open(struct jig_publish *p, const char *output, struct jig_error *e);
#define JIG_RUN_DIR_PREFIX "jig-run-"
#define JIG_STAGE_PREFIX ".jig-stage-"
/* The stage's name for the Run's directory and the destination name. */
void jig_publish_stage_name(char *out, size_t cap, const char *run_dir, const char *name);
int jig_publish_stage(struct jig_publish *p, const char *run_dir, struct jig_error *e);
/* Removes the stage of the Run of run_dir for output (its coordinator was
 * lost). */
void jig_publish_remove_stage(const char *output, const char *run_dir);
/* Final validation: the held output directory copied into the stage's
 * files/ within the limits, only declared outputs; list gets one entry
 * per file (path, size, sha256). */
/* -JIG_E_USAGE: the output was refused (e says why); the caller may
 * still publish the record without files (jig_publish_discard_files). */
int jig_publish_collect(struct jig_publish *p, int held_fd, char *const *allowed, size_t n_allowed, json_t *list,
			struct jig_error *e);
/* record.json into the stage, then the stage into place. */
int jig_publish_commit(struct jig_publish *p, const char *record, struct jig_error *e);
/* Removes an uncommitted stage; closes everything. */
void jig_publish_close(struct jig_publish *p);

/* An output refusal: the stage's files/ emptied (list cleared), so the
 * packet holds the record and its logs, nothing published as output. */
int jig_publish_discard_files(struct jig_publish *p, json_t *list, struct jig_error *e);

#endif
