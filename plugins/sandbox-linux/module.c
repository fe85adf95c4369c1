/* sandbox-linux: Bubblewrap + rootless cgroup v2 + seccomp + dropped
 * capabilities. probe reports what the host can enforce; launch runs one
 * scope under all of it and fences it. */
#include <jig/module.h>
#include <jig/sandbox.h>

#include "launch.h"
#include "probe.h"

static const struct jig_sandbox_ops ops = {
	.struct_size = sizeof(struct jig_sandbox_ops),
	.probe = jig_sandbox_linux_probe,
	.launch = jig_sandbox_linux_launch,
};

JIG_MODULE_DEFINE(.name = "sandbox-linux", .kind = JIG_KIND_SANDBOX,
		  .ops_size = sizeof(ops), .version = JIG_VERSION, .ops = &ops);
