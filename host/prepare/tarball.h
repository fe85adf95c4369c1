/* A registry tarball, inspected by jig before any installer unpacks it
 * (issue 16; docs/dependencies.md): its bytes must match the lock's sha512
 * integrity, and its entries — read with libarchive, bounded — must be
 * plain files and directories below one top directory, at paths
 * jig_package_path_rule accepts (any name npm can publish; the refusal
 * names the rule), each path once, within the preparation's file and
 * byte budget.
 * Links, devices, FIFOs, absolute or ".." paths, duplicates, entries
 * below a file, setuid/setgid/sticky bits, more than
 * JIG_TARBALL_UNPACKED_MAX decompressed, and anything over the budget
 * refuse the whole preparation. */
#ifndef JIG_PREPARE_TARBALL_H
#define JIG_PREPARE_TARBALL_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/limits.h"


/* What a preparation may still unpack; each inspection takes its share. */
struct jig_tarball_budget {
	uint64_t files; /* entries, directories included */
	uint64_t bytes; /* file content */
};

/* Checks buf (a .tgz as fetched) against integrity ("sha512-" + base64)
 * and inspects every entry, charging budget. 0, or -JIG_E_INTEGRITY with
 * one line naming what (the package) and the entry. */
int jig_tarball_inspect(const void *buf, size_t len, const char *integrity, const char *what,
			struct jig_tarball_budget *budget, struct jig_error *e);

#endif
