/* The packet's record (jig-run-record/1, docs/flow-format.md): what a Run
 * writes next to its files, and what jig inspect checks and shows. */
#ifndef JIG_PACKET_RECORD_H
#define JIG_PACKET_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jig/sandbox.h>

#include "util/error.h"

#define JIG_RECORD_FORMAT "jig-run-record/1"

struct jig_record_facts {
	const char *status, *why, *flow, *plan_sha256, *package_sha256;
	uint64_t timeout_ms;
	long long started_ms;
	json_t *inputs, *outputs, *logs;
};

/* The record of a Run whose scope ended with res. */
json_t *jig_record_new(const struct jig_record_facts *f, const struct jig_scope_result *res);
/* The record of a Run whose coordinator was lost to signal sig after its
 * scope was fenced (confirmed): termination "coordinator_lost", nothing
 * of the scope's own end known (run/recovery.h). */
json_t *jig_record_lost(const struct jig_record_facts *f, int sig);
/* The record's text as published (two-space indent, sorted keys), at
 * most cap bytes. A record over cap is cut to fit, in this order until it
 * does: every log line, every effect's evidence but its kind, route and
 * outcome, every child node but its binding, flow, status and children,
 * the scope's policy; its status becomes "failed" and its error says how
 * large it was and what was cut (*cut). NULL: out of memory, or not even
 * that fits. */
char *jig_record_text(json_t *rec, size_t cap, bool *cut);
/* An effect's evidence reduced to its kind, route, outcome and save (strings
 * of at most 64 bytes): what a record keeps of evidence over its cap. */
json_t *jig_record_effect_stub(json_t *ev);
/* Reads and checks record.json of the packet directory pfd. */
int jig_record_load(int pfd, const char *packet, json_t **rec, struct jig_error *e);
/* R-S07 on read (decision 121): the packet directory and everything in it
 * is owner-only (no group or other permission bit), or one line refuses it. */
int jig_record_check_private(int pfd, struct jig_error *e);
/* Every listed file of files/ is there with its size and SHA-256, nothing
 * unlisted, no links or special files. */
int jig_record_verify_files(int pfd, json_t *rec, struct jig_error *e);
/* The record as text; everything from it is shown inert. */
void jig_record_print(FILE *out, const char *packet, json_t *rec);

#endif
