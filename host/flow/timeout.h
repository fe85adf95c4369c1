#ifndef JIG_FLOW_TIMEOUT_H
#define JIG_FLOW_TIMEOUT_H

#include <stdint.h>

#include "util/error.h"
#include "util/limits.h"

/* --timeout: a positive integer with a unit ms, s, m or h, at most 24 h
 * ("250ms", "30s", "5m", "2h"). Nothing else: no fractions, signs, spaces,
 * bare numbers or other units. */
int jig_parse_timeout(const char *text, uint64_t *ms, struct jig_error *e);

#endif
