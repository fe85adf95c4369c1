/* Helper for jig's own scope programs (the http, ACP and installer
 * workers), not part of the module ABI: a growing byte buffer with a cap.
 * Header-only, because modules and scope programs cannot share host code. */
#ifndef JIG_BUF_H
#define JIG_BUF_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Zeroed is empty; limit 0 is no cap. p is NUL-terminated once anything
 * was added (the NUL is not counted in len). */
struct jig_buf {
	char *p;
	size_t len, cap, limit;
	bool over; /* an add was refused for the cap */
};

/* Appends n bytes of d: 0, or -1 (over the cap: over set; out of memory). */
static inline int jig_buf_add(struct jig_buf *b, const void *d, size_t n)
{
	if (b->limit && b->len + n > b->limit) {
		b->over = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 16384;
		while (c < b->len + n + 1)
			c *= 2;
		char *q = realloc(b->p, c);
		if (!q)
			return -1;
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

#endif
