#ifndef JIG_SANDBOX_LINUX_FILTER_H
#define JIG_SANDBOX_LINUX_FILTER_H

#include <stddef.h>

/* Builds the scope's seccomp BPF program into a sealed memfd (offset 0).
 * Returns 0 and *out_fd, or -1 with err set. */
int jig_filter_build(int network_host, int *out_fd, char *err, size_t errlen);

#endif
