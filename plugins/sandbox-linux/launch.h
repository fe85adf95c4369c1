#ifndef JIG_SANDBOX_LINUX_LAUNCH_H
#define JIG_SANDBOX_LINUX_LAUNCH_H

#include <jig/sandbox.h>

int jig_sandbox_linux_launch(void *state, const struct jig_scope *scope, struct jig_scope_result *out);

#endif
