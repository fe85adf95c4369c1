#ifndef JIG_FLOW_TIMEOUT_H
#define JIG_FLOW_TIMEOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "util/limits.h"

/* --timeout: a positive integer with a unit ms, s, m or h, at most 24 h
 * ("250ms", "30s", "5m", "2h"). Nothing else: no fractions, signs, spaces,
 * bare numbers or other units. */
int jig_parse_timeout(const char *text, uint64_t *ms, struct jig_error *e);

/* --expiry, the jig run command's absolute expiry (R-L05): the same
 * syntax and bounds as --timeout, its own name in the message. */
int jig_parse_expiry(const char *text, uint64_t *ms, struct jig_error *e);

/* The command's expiry in ms from its start, 0 for none: the explicit one
 * if given (it holds with --display web too); else none for an
 * interactive dashboard (--display web); else the Run's deadline plus
 * JIG_EXPIRY_DEFAULT_MARGIN_MS. */
uint64_t jig_run_expiry_ms(uint64_t timeout_ms, uint64_t explicit_ms, bool display);

#endif
