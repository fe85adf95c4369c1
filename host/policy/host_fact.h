/* Host facts: what composing a scope read from the live host (a bind
 * source's stat, a resolved path), each one an observation that can be
 * made again and compared (flow/memo.h: a remembered admission is used
 * only while every fact it was composed from still holds). */
#ifndef JIG_POLICY_HOST_FACT_H
#define JIG_POLICY_HOST_FACT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>

/* {"stat": path, "dev", "ino", "mode", "uid", "size", "mtime_ns",
 * "ctime_ns"} of a stat that succeeded (st), {"stat": path, "errno": N} of
 * one that failed (st NULL, err its errno). */
json_t *jig_host_fact_stat(const char *path, const struct stat *st, int err);
/* {"realpath": path, "is": resolved} or {"realpath": path, "errno": N}. */
json_t *jig_host_fact_realpath(const char *path, const char *resolved, int err);
/* Appends fact to the list noted, once (when noted is set; fact is consumed). */
void jig_host_fact_note(json_t *noted, json_t *fact);
/* stat(path) into *st, its outcome noted in noted as a fact (NULL: not
 * noting); returns stat's result, errno as stat left it. */
int jig_host_fact_stat_noted(json_t *noted, const char *path, struct stat *st);
/* Observes the fact again: true iff it is a well-formed fact and the host
 * still shows exactly that. */
bool jig_host_fact_holds(const json_t *fact);

#endif
