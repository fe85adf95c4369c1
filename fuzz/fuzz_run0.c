/* Run/0: the Flow's lines to its coordinator, the most hostile input jig
 * reads (a Flow writes them). Effects are stubs; the reader's bounds and
 * state must hold for any bytes. */
#include <sys/socket.h>

#include "fuzz.h"
#include "run/limits.h"
#include "run/run0.h"

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
	int sv[2], ab[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ab, O_CLOEXEC) < 0)
		abort();
	int big = 1 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	struct jig_run0 r;
	if (jig_run0_start(&r, sv[0], ab[1], stub, stub, stub, stub, NULL) < 0)
		abort();
	for (size_t off = 0; off < n;) {
		ssize_t w = write(sv[1], d + off, n - off);
		if (w <= 0)
			break; /* the reader ended the Run */
		off += (size_t)w;
	}
	shutdown(sv[1], SHUT_WR);
	jig_run0_join(&r);
	if (r.messages > JIG_RUN0_MAX_MESSAGES + 1 || json_array_size(r.logs) > JIG_RUN0_MAX_LOGS || !memchr(r.error, 0, sizeof(r.error)))
		abort();
	jig_run0_free(&r);
	close(sv[0]);
	close(sv[1]);
	close(ab[0]);
	close(ab[1]);
	return 0;
}
