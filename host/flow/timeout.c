#include "flow/timeout.h"

#include <string.h>

static int parse_duration(const char *option, const char *text, uint64_t *ms, struct jig_error *e)
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
	return jig_err(e, JIG_E_USAGE, "%s \"%s\": must be a positive whole number with a unit ms, s, m or h (e.g. 30s, 5m)", option, text);
range:
	return jig_err(e, JIG_E_USAGE, "%s \"%s\": at most %lluh", option, text, JIG_RUN_TIMEOUT_MAX_MS / 3600000);
}

int jig_parse_timeout(const char *text, uint64_t *ms, struct jig_error *e)
{
	return parse_duration("--timeout", text, ms, e);
}

int jig_parse_expiry(const char *text, uint64_t *ms, struct jig_error *e)
{
	return parse_duration("--expiry", text, ms, e);
}

uint64_t jig_run_expiry_ms(uint64_t timeout_ms, uint64_t explicit_ms, bool display)
{
	if (explicit_ms)
		return explicit_ms;
	return display ? 0 : timeout_ms + JIG_EXPIRY_DEFAULT_MARGIN_MS;
}
