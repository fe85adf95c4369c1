/* The ACP worker's result (plugins/acp's stdout, written inside the
 * provider's scope: untrusted), as the coordinator reads it: parsed and
 * checked (effects/worker.c), then the Flow's reply and the evidence, an
 * answer holding the credential withheld (effects/agents.c). The reply
 * must always be a JSON object, and never hold the credential. */
#include <jansson.h>
#include <jig/acp.h>

#include "effects/agents.h"
#include "effects/worker.h"
#include "fuzz.h"

#define CREDENTIAL "s3cret-k"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	json_t *result = NULL;
	char why[256];
	if (jig_worker_result_parse((const char *)d, n, JIG_ACP_RESULT_FORMAT, &result, why, sizeof(why)) < 0)
		return 0;
	json_t *ev = json_object(), *reply = NULL;
	jig_agent_deliver(result, CREDENTIAL, ev, &reply, 7);
	char *s = json_dumps(reply, JSON_COMPACT);
	if (!json_is_object(reply) || !s)
		abort();
	const char *text = json_string_value(json_object_get(reply, "text"));
	if (text && strstr(text, CREDENTIAL))
		abort(); /* an answer holding the credential reached the Flow */
	free(s);
	json_decref(reply);
	json_decref(ev);
	json_decref(result);
	return 0;
}
