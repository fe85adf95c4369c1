#ifndef JIG_SANDBOX_LINUX_PROBE_H
#define JIG_SANDBOX_LINUX_PROBE_H

#include <jig/sandbox.h>

int jig_sandbox_linux_probe(void *state, struct jig_probe_result *out);

#endif
