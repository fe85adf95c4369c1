/* The Flow output with hidden import stages (output.c, decision 115). */
#ifndef JIG_SANDBOX_LINUX_OUTPUT_H
#define JIG_SANDBOX_LINUX_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* Mounts a fresh tmpfs of bytes in the mount namespace mntns (a
 * descriptor of the launcher's) with only its "pub" attached at point
 * (the launcher's O_PATH descriptor of the mount point) and "stage"
 * reachable by no path there. 0 with *root its root directory, or an
 * errno value with what set. */
int jig_output_project(int mntns, int point, uint64_t bytes, int *root, char *what, size_t whatlen);

#endif
