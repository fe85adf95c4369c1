#ifndef JIG_FLOW_TIMEOUT_H
#define JIG_FLOW_TIMEOUT_H

#include <stdint.h>

#include "util/error.h"

#define JIG_RUN_TIMEOUT_DEFAULT_MS 30000ull
#define JIG_RUN_TIMEOUT_MAX_MS (24ull * 3600 * 1000)

/* --timeout: a positive integer with a unit ms, s, m or h, at most 24 h
 * ("250ms", "30s", "5m", "2h"). Nothing else: no fractions, signs, spaces,
 * bare numbers or other units. */
int jig_parse_timeout(const char *text, uint64_t *ms, struct jig_error *e);

#endif
