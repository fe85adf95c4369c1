/* acp: the module names the protocol its worker speaks; the worker,
 * jig-acp-worker (JIG_ACP_WORKER_FILE), does the turn. The host decides
 * everything else (<jig/acp.h>). */
#include <jig/acp.h>
#include <jig/module.h>

static const struct jig_acp_ops ops = {
	.struct_size = sizeof(struct jig_acp_ops),
	.protocol_version = JIG_ACP_PROTOCOL_VERSION,
};

JIG_MODULE_DEFINE(.name = "acp", .kind = JIG_KIND_ACP, .ops_size = sizeof(ops), .version = JIG_VERSION,
		  .ops = &ops);
