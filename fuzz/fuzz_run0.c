/* Run/0: the Flow's lines to its coordinator, the most hostile input jig
 * reads (a Flow writes them). Effects are stubs; the reader's bounds and
 * state must hold for any bytes. */
#include "fuzz_run0.h"

static void stub(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	(void)ctx;
	*interrupted = 0;
	*evidence = json_pack("{s:O?}", "route", json_object_get(op, "route"));
	*reply = json_pack("{s:O?,s:b}", "op", json_object_get(op, "op"), "ok", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 2 * JIG_RUN0_MAX_LINE)
		return 0;
	struct fuzz_run0 f;
	fuzz_run0_feed(&f, d, n, 1 << 20, stub, stub, stub, stub);
	fuzz_run0_close(&f);
	return 0;
}
