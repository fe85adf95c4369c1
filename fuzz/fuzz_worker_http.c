/* The HTTP worker's result (plugins/http's stdout, written inside its
 * scope: untrusted), as the coordinator reads it: parsed and checked
 * (effects/worker.c), then turned into the Flow's reply and the evidence
 * (effects/http.c). The reply must always be a JSON object. */
#include <jansson.h>
#include <jig/http.h>

#include "effects/http.h"
#include "effects/worker.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	json_t *result = NULL;
	char why[256];
	if (jig_worker_result_parse((const char *)d, n, JIG_HTTP_RESULT_FORMAT, &result, why, sizeof(why)) < 0)
		return 0;
	json_t *ev = json_object(), *reply = NULL;
	jig_http_deliver(result, ev, &reply);
	char *s = json_dumps(reply, JSON_COMPACT);
	if (!json_is_object(reply) || !s)
		abort();
	free(s);
	json_decref(reply);
	json_decref(ev);
	json_decref(result);
	return 0;
}
