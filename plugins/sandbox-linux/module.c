/* sandbox-linux: Bubblewrap + rootless cgroup v2 + seccomp + dropped
 * capabilities. probe reports what the host can enforce; launch runs one
 * scope under all of it and fences it. */
#include <jig/module.h>
#include <jig/sandbox.h>

#include "launch.h"
#include "probe.h"
#include "cgroup.h"

static int jig_sandbox_linux_recover(void *state, int32_t pid, char *err, size_t errlen)
{
	(void)state;
	return jig_cg_recover(pid, err, errlen) == 0 ? JIG_MOD_OK : JIG_MOD_EFAIL;
}

static int jig_sandbox_linux_sweep(void *state, int32_t pid, const char *where, char *removed, size_t removed_len,
				   char *err, size_t errlen)
{
	(void)state;
	return jig_cg_sweep(pid, where, removed, removed_len, err, errlen) == 0 ? JIG_MOD_OK : JIG_MOD_EFAIL;
}

static const struct jig_sandbox_ops ops = {
	.struct_size = sizeof(struct jig_sandbox_ops),
	.probe = jig_sandbox_linux_probe,
	.launch = jig_sandbox_linux_launch,
	.recover = jig_sandbox_linux_recover,
	.sweep = jig_sandbox_linux_sweep,
};

JIG_MODULE_DEFINE(.name = "sandbox-linux", .kind = JIG_KIND_SANDBOX,
		  .ops_size = sizeof(ops), .version = JIG_VERSION, .ops = &ops);
