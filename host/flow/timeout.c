#include "flow/timeout.h"

#include <string.h>

int jig_parse_timeout(const char *text, uint64_t *ms, struct jig_error *e)
{
	const char *p = text;
	uint64_t n = 0;
	if (*p < '1' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > JIG_RUN_TIMEOUT_MAX_MS)
			goto range;
	}
	uint64_t unit;
	if (strcmp(p, "ms") == 0)
		unit = 1;
	else if (strcmp(p, "s") == 0)
		unit = 1000;
	else if (strcmp(p, "m") == 0)
		unit = 60 * 1000;
	else if (strcmp(p, "h") == 0)
		unit = 3600 * 1000;
	else
		goto bad;
	if (n > JIG_RUN_TIMEOUT_MAX_MS / unit)
		goto range;
	*ms = n * unit;
	return 0;
bad:
	return jig_err(e, JIG_E_USAGE, "--timeout \"%s\": must be a positive whole number with a unit ms, s, m or h (e.g. 30s, 5m)", text);
range:
	return jig_err(e, JIG_E_USAGE, "--timeout \"%s\": at most 24h", text);
}
