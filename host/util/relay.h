/* Standard streams through pipes: a scope's descriptors 0, 1 and 2 are
 * given to it as pipes that jig relays to and from the caller's own
 * descriptors, so that nothing inside can resolve them to a host path
 * (/proc/self/fd), reach the caller's terminal (ioctls, /dev/console) or
 * learn what file they are. A source that already is a pipe or a socket
 * names nothing and is passed as it is. */
#ifndef JIG_UTIL_RELAY_H
#define JIG_UTIL_RELAY_H

#include <stddef.h>

#include <jig/sandbox.h>

#include "error.h"

struct jig_relay;

/* Replaces, in fds[0..n), the source of every target 0/1/2 that is not a
 * pipe or socket with the scope's end of a new pipe, and starts relaying.
 * *out is NULL when nothing needed a relay. */
int jig_relay_start(struct jig_relay **out, struct jig_scope_fd *fds, size_t n, struct jig_error *e);

/* After the scope has ended: closes the scope's ends, copies what is still
 * in the pipes to the caller, and frees. NULL is fine. */
void jig_relay_finish(struct jig_relay *r);

#endif
