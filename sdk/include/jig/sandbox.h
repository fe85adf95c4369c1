/* Sandbox kind (JIG_KIND_SANDBOX): containment mechanism for one platform.
 *
 * A sandbox module provides mechanism and facts only. It never decides
 * whether a host is good enough: the host reads the probe and decides.
 */
#ifndef JIG_SANDBOX_H
#define JIG_SANDBOX_H

#include <jig/module.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_PROBE_MAX_ITEMS 16

enum jig_probe_status {
	JIG_PROBE_MISSING = 0,   /* the mechanism cannot be enforced here */
	JIG_PROBE_AVAILABLE = 1, /* the mechanism was exercised and works */
};

/* One mechanism's observation. Strings are NUL-terminated, may be empty. */
struct jig_probe_item {
	char name[32];     /* stable id, e.g. "userns", "bwrap", "cgroup2.memory" */
	uint32_t status;   /* enum jig_probe_status */
	char path[256];    /* a filesystem path the fact is about, if any */
	char version[64];  /* a version, if any */
	char reason[320];  /* why it is missing / how it was shown to work */
};

struct jig_probe_result {
	uint32_t struct_size; /* set by the host before calling probe */
	uint32_t count;
	struct jig_probe_item items[JIG_PROBE_MAX_ITEMS];
};

struct jig_sandbox_ops {
	uint32_t struct_size;
	/* Fills *out with one item per mechanism. Returns JIG_MOD_OK or < 0. */
	int (*probe)(void *state, struct jig_probe_result *out);
	void *reserved[8];
};

#ifdef __cplusplus
}
#endif

#endif
