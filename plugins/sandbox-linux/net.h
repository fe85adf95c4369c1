/* A scope's exact loopback endpoints (net.c, ABI 1.6, issue 34). */
#ifndef JIG_SANDBOX_LINUX_NET_H
#define JIG_SANDBOX_LINUX_NET_H

#include <stddef.h>
#include <stdint.h>

#include <jig/sandbox.h>

/* At most this many listeners in one scope (the host's policy allows 17). */
#define JIG_NET_MAX_LISTENERS 32

/* Creates, inside the network namespace netns (a descriptor of the
 * launcher's), one listening TCP socket per entry of l (non-blocking,
 * close-on-exec) and returns them in fds[0..n). 0, or an errno value with
 * what set (no descriptor left open). */
int jig_net_listen(int netns, const struct jig_scope_listener *l, uint32_t n, int *fds, char *what, size_t whatlen);

#endif
