/* A remembered admission's file (host/flow/memo.c, decision 179). No scope
 * can write it (it lives in <project>/.jig, which no scope sees); its bytes
 * are still parsed as untrusted: any memo the parser takes has a Plan text
 * that is its digest's and scopes of the checked shape. */
#include <string.h>

#include "flow/memo.h"
#include "fuzz.h"
#include "util/crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > JIG_MEMO_MAX_BYTES)
		return 0;
	json_t *doc = jig_memo_parse((const char *)d, n);
	if (!doc)
		return 0;
	const char *plan = json_string_value(json_object_get(doc, "plan"));
	unsigned char dg[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(plan, strlen(plan), dg);
	jig_hex(dg, JIG_SHA256_LEN, hex);
	if (strcmp(hex, json_string_value(json_object_get(doc, "plan_sha256"))) != 0 ||
	    json_array_size(json_object_get(doc, "scopes")) == 0)
		abort();
	/* What the parser took, written again, is taken again. */
	char *again = json_dumps(doc, JSON_COMPACT);
	json_t *doc2 = again ? jig_memo_parse(again, strlen(again)) : NULL;
	if (again && !doc2)
		abort();
	json_decref(doc2);
	free(again);
	json_decref(doc);
	return 0;
}
