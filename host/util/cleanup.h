/* Scope-bound ownership, as in bubblewrap/systemd: a variable declared with
 * one of these is released when it goes out of scope; jig_steal() hands it
 * over explicitly. */
#ifndef JIG_UTIL_CLEANUP_H
#define JIG_UTIL_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static inline void jig_freep(void *p)
{
	free(*(void **)p);
}

static inline void jig_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define jig_autofree __attribute__((cleanup(jig_freep)))
#define jig_autoclose __attribute__((cleanup(jig_closep)))

static inline void *jig_steal_ptr(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}

static inline int jig_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

#define jig_steal(pp) jig_steal_ptr(pp)

#endif
