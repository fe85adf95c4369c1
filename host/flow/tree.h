/* Bounded, descriptor-relative copies of small file trees: attachments into
 * a run, a Flow's output out of its fenced tmpfs. Only directories and
 * singly linked regular files; symlinks, hard links, special files, other
 * mounts, oversized sparse files and anything over the caps are refused. */
#ifndef JIG_FLOW_TREE_H
#define JIG_FLOW_TREE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

struct jig_tree_limits {
	const char *what;   /* "attachment data", "output" */
	size_t max_files;   /* regular files */
	size_t max_entries; /* files and directories */
	uint64_t max_bytes; /* logical bytes */
	bool reject_sparse;
	const char *deny_name; /* an entry name refused anywhere (".jig"), or NULL */
	char *const *allowed; /* if set, every file path must be one of these */
	size_t n_allowed;
	bool owner_only;   /* copies 0400, directories 0500 (a published packet, R-S07); else 0444, 0555 */
	bool reject_xattr; /* final validation: an extended attribute (other than a security module's
			    * label) on the tree, a directory or a file refuses it (R-S06) */
};

struct jig_tree_stats {
	size_t files, entries;
	uint64_t bytes;
	json_t *list; /* [{path, size, sha256}], created by the caller */
};

/* Copies the tree under srcfd (a directory) into dstfd (an empty
 * directory), prefix naming the paths. Counts accumulate in *st across
 * calls, so several attachments share one cap. dstfd -1: every check and
 * digest, nothing copied (a fenced child's output validated in place). */
int jig_tree_copy(int srcfd, const char *prefix, int dstfd, const struct jig_tree_limits *l,
		  struct jig_tree_stats *st, struct jig_error *e);
/* One regular file (by descriptor) to dstfd/name with the same checks. */
int jig_tree_copy_file(int srcfd, const char *name, int dstfd, const struct jig_tree_limits *l,
		       struct jig_tree_stats *st, struct jig_error *e);
/* The mount id of fd (statx's, so a bind mount of the same file system has
 * its own): 0, or -1 with errno. */
int jig_tree_mount_id(int fd, uint64_t *id);
/* dirfd/name (not followed) is on another mount than mnt, or its mount
 * cannot be told (R-S03: nested mounts, a same-file-system bind mount too). */
bool jig_tree_other_mount(int dirfd, const char *name, uint64_t mnt);
/* The file system of fd is ext4, XFS, Btrfs or tmpfs; name gets its name
 * (jig_tree_fs_name) either way. */
bool jig_tree_fs_ok(int fd, char *name, size_t cap);
/* The file system of fd by its mount's type in /proc/self/mountinfo
 * ("9p", "fuse.sshfs", "ext4"), else by its f_type. */
void jig_tree_fs_type(int fd, char *name, size_t cap);
/* A statfs f_type's name ("9p", "fuse", "nfs", ...), or "type 0xNN". */
void jig_tree_fs_name(unsigned long type, char *name, size_t cap);

#endif
