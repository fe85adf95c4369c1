/* The client's lines, classified before the worker acts on them
 * (message.h). */
#include "message.h"

#include <stdio.h>
#include <string.h>

enum jig_acp_line jig_acp_line_read(const char *p, size_t n, json_t **msg, char *why, size_t cap)
{
	json_error_t err;
	*msg = NULL;
	json_t *m = json_loadb(p, n, JSON_REJECT_DUPLICATES, &err);
	if (!m) {
		/* JSON's grammar allows these; jig passes on text only, and the
		 * message might have been the answer: never dropped quietly. */
		enum json_error_code code = json_error_code(&err);
		if (code == json_error_null_character) {
			snprintf(why, cap, "a string holds U+0000 (NUL, \\u0000), which jig does not pass on (at byte %d)", err.position);
			return JIG_ACP_LINE_NOT_TEXT;
		}
		if (code == json_error_invalid_utf8) {
			snprintf(why, cap, "the line is not UTF-8 text (at byte %d)", err.position);
			return JIG_ACP_LINE_NOT_TEXT;
		}
		if (code == json_error_invalid_syntax && strncmp(err.text, "invalid Unicode", 15) == 0) {
			snprintf(why, cap, "a string holds a lone UTF-16 surrogate escape, which is not a character (at byte %d)",
				 err.position);
			return JIG_ACP_LINE_NOT_TEXT;
		}
		return JIG_ACP_LINE_SKIPPED;
	}
	json_t *v = json_object_get(m, "jsonrpc");
	if (!json_is_object(m) || !json_is_string(v) || json_string_length(v) != 3 || memcmp(json_string_value(v), "2.0", 3) != 0) {
		json_decref(m);
		return JIG_ACP_LINE_SKIPPED;
	}
	*msg = m;
	return JIG_ACP_LINE_MESSAGE;
}

bool jig_acp_stop_reason_known(const char *s, size_t n)
{
	static const char *const known[] = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"};
	for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
		if (n == strlen(known[i]) && memcmp(s, known[i], n) == 0)
			return true;
	return false;
}
