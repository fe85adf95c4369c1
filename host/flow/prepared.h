/* Dependency preparation's records in the project's store (issue 16;
 * docs/dependencies.md): store/prepared/<kind>-<sha256>.json, "package"
 * (by the Flow's captured package) or "identity" (by the preparation's
 * sources and installer). prepare/ writes them; the Plan reads them. */
#ifndef JIG_FLOW_PREPARED_H
#define JIG_FLOW_PREPARED_H

#include <jansson.h>
#include <stddef.h>

#include "flow/project.h"

#define JIG_PREPARED_FORMAT "jig-prepared/1"

/* The store path of a record: kind "package" or "identity", sha its hex. */
void jig_prepared_record_name(char *out, size_t cap, const char *kind, const char *sha);
/* A record, its bytes checked against the name it is stored under when
 * it is content-addressed (by-identity); NULL if absent or not a record. */
json_t *jig_prepared_record_read(const struct jig_project *p, const char *rel);
/* The record of the Flow's captured package (a new reference), or NULL:
 * it declares no dependencies, or was never prepared. Read only. */
json_t *jig_prepared_record(const struct jig_project *p, const struct jig_flow *f);

#endif
