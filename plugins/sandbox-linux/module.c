/* sandbox-linux: Bubblewrap + rootless cgroup v2 + seccomp + dropped
 * capabilities. This version provides the host probe; launching scopes
 * comes with the scope policy. */
#include <jig/module.h>
#include <jig/sandbox.h>

#include "probe.h"

static const struct jig_sandbox_ops ops = {
	.struct_size = sizeof(struct jig_sandbox_ops),
	.probe = jig_sandbox_linux_probe,
};

JIG_MODULE_DEFINE(.name = "sandbox-linux", .kind = JIG_KIND_SANDBOX,
		  .ops_size = sizeof(ops), .version = JIG_VERSION, .ops = &ops);
