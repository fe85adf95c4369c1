/* Shared by the Run/0 harnesses (fuzz_run0, fuzz_run0_effects): the bytes
 * a Flow writes, fed to the coordinator's reader over a socket pair. */
#ifndef JIG_FUZZ_RUN0_H
#define JIG_FUZZ_RUN0_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/limits.h"
#include "run/run0.h"

struct fuzz_run0 {
	struct jig_run0 r;
	int sv[2]; /* sv[1]: the Flow's end, the replies it got still unread */
	int ab[2];
};

/* Starts a reader with these effects (socket buffers of buf bytes), writes
 * d to it, ends the Flow's writing and waits for the reader; aborts if the
 * reader's bounds or its error text do not hold. */
static inline void fuzz_run0_feed(struct fuzz_run0 *f, const uint8_t *d, size_t n, int buf, jig_run0_effect_fn http,
				  jig_run0_effect_fn agent, jig_run0_effect_fn command, jig_run0_effect_fn checkpoint)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sv) < 0 || pipe2(f->ab, O_CLOEXEC) < 0)
		abort();
	setsockopt(f->sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	setsockopt(f->sv[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (jig_run0_start(&f->r, f->sv[0], f->ab[1], http, agent, command, checkpoint, NULL) < 0)
		abort();
	for (size_t off = 0; off < n;) {
		ssize_t w = write(f->sv[1], d + off, n - off);
		if (w <= 0)
			break; /* the reader ended the Run */
		off += (size_t)w;
	}
	shutdown(f->sv[1], SHUT_WR);
	jig_run0_join(&f->r);
	if (f->r.messages > JIG_RUN0_MAX_MESSAGES + 1 || json_array_size(f->r.logs) > JIG_RUN0_MAX_LOGS ||
	    !memchr(f->r.error, 0, sizeof(f->r.error)))
		abort();
}

static inline void fuzz_run0_close(struct fuzz_run0 *f)
{
	jig_run0_free(&f->r);
	close(f->sv[0]);
	close(f->sv[1]);
	close(f->ab[0]);
	close(f->ab[1]);
}

#endif
