/* Schema/0: the small JSON-schema subset an operator may attach to an HTTP
 * grant (docs/schema0.md). A request body that does not validate is
 * refused before any connection is made.
 *
 * Keywords: type (one of object, array, string, integer, number, boolean,
 * null, or an array of them), required, properties, additionalProperties
 * (boolean), enum (scalars), minLength/maxLength, minItems/maxItems, items,
 * minimum/maximum (integers). Anything else in a schema is an error. */
#ifndef JIG_UTIL_SCHEMA0_H
#define JIG_UTIL_SCHEMA0_H

#include <jansson.h>

#include "util/error.h"
#include "util/limits.h"

/* The schema itself is well formed. */
int jig_schema0_check(json_t *schema, struct jig_error *e);
/* value satisfies schema (already checked); the error names the JSON
 * pointer of the first violation. */
int jig_schema0_validate(json_t *schema, json_t *value, struct jig_error *e);

#endif
