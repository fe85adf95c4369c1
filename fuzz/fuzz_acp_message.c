/* The ACP worker's reading of what the agent sends (plugins/acp/message.c):
 * the bytes split into lines at '\n' as the worker splits them, each line
 * classified; a stopReason of a message checked against ACP's list. */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "message.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const char *p = (const char *)d, *end = p + n;
	while (p <= end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *m = (json_t *)1;
		char why[160] = "";
		enum jig_acp_line kind = jig_acp_line_read(p, k, &m, why, sizeof(why));
		if (kind == JIG_ACP_LINE_MESSAGE) {
			json_t *v = json_object_get(m, "jsonrpc");
			if (!json_is_object(m) || !json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
				abort(); /* a message is JSON-RPC 2.0 */
			json_t *sr = json_object_get(json_object_get(m, "result"), "stopReason");
			if (json_is_string(sr))
				jig_acp_stop_reason_known(json_string_value(sr), json_string_length(sr));
			json_decref(m);
		} else if (m != NULL) {
			abort(); /* nothing handed out otherwise */
		} else if (kind == JIG_ACP_LINE_NOT_TEXT && (!why[0] || strchr(why, '\n'))) {
			abort(); /* the reason is one line */
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}
