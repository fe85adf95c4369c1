/* jig module ABI — the only contract between the jig host and a module.
 *
 * A module is a shared object exporting exactly one symbol,
 * JIG_MODULE_ENTRY_SYMBOL, a `const struct jig_module`. The host verifies the
 * file's bytes against the signed snapshot manifest *before* dlopen (that is
 * the security gate; constructors run inside dlopen), then checks this
 * descriptor for compatibility.
 *
 * Evolution is append-only: new fields go at the end of a struct and are
 * announced by struct_size; a reader copies min(struct_size, its own size)
 * and treats the rest as zero. ABI major changes break; minor adds.
 */
#ifndef JIG_MODULE_H
#define JIG_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JIG_MODULE_MAGIC UINT64_C(0x4c55444f4d47494a) /* "JIGMODUL" little-endian */
#define JIG_ABI_MAJOR 1
#define JIG_ABI_MINOR 6
#define JIG_MODULE_ENTRY_SYMBOL "jig_module_v1"

enum jig_module_kind {
	JIG_KIND_SANDBOX = 1,
	JIG_KIND_HTTP = 2,
	JIG_KIND_ACP = 3,
	JIG_KIND_DISPLAY = 4,
};

enum jig_log_level {
	JIG_LOG_ERROR = 0,
	JIG_LOG_WARN = 1,
	JIG_LOG_INFO = 2,
	JIG_LOG_DEBUG = 3,
};

/* Handed to a module's init. The host owns it; it outlives the module. */
struct jig_host_api {
	uint32_t struct_size;
	uint16_t abi_major;
	uint16_t abi_minor;
	void *host; /* opaque, passed back to callbacks */
	void (*log)(void *host, enum jig_log_level level, const char *message);
	void *reserved[8];
};

/* Return codes of module operations: 0 or a negative JIG_MOD_E*. */
#define JIG_MOD_OK 0
#define JIG_MOD_EINVAL (-1)
#define JIG_MOD_ENOMEM (-2)
#define JIG_MOD_EFAIL (-3)

struct jig_module {
	uint64_t magic;     /* JIG_MODULE_MAGIC */
	uint16_t abi_major; /* JIG_ABI_MAJOR the module was built against */
	uint16_t abi_minor; /* JIG_ABI_MINOR the module was built against */
	uint32_t struct_size; /* sizeof(struct jig_module) at build time */
	const char *name;     /* equals the manifest entry's name */
	uint32_t kind;        /* enum jig_module_kind; equals the manifest's kind */
	uint32_t ops_size;    /* sizeof the kind's ops struct */
	const char *version;  /* module's own version string */
	/* Optional (NULL allowed). init may set *state; fini gets it back. */
	int (*init)(const struct jig_host_api *host, void **state);
	void (*fini)(void *state);
	const void *ops; /* kind-specific table, e.g. struct jig_sandbox_ops */
	void *reserved[8];
};

#if defined(__GNUC__)
#define JIG_MODULE_EXPORT __attribute__((visibility("default"), used))
#else
#define JIG_MODULE_EXPORT
#endif

/* Defines the module's one exported descriptor. */
#define JIG_MODULE_DEFINE(...)                                                 \
	JIG_MODULE_EXPORT const struct jig_module jig_module_v1 = {           \
		.magic = JIG_MODULE_MAGIC,                                     \
		.abi_major = JIG_ABI_MAJOR,                                    \
		.abi_minor = JIG_ABI_MINOR,                                    \
		.struct_size = sizeof(struct jig_module),                      \
		__VA_ARGS__}

#ifdef __cplusplus
}
#endif

#endif
