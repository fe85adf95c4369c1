#include <jig/module.h>

static const struct {
	uint32_t struct_size;
} ops = {sizeof(ops)};

JIG_MODULE_DEFINE(.name = "hello", .kind = JIG_KIND_DISPLAY, .ops_size = sizeof(ops),
		  .version = "0.0.1", .ops = &ops);
