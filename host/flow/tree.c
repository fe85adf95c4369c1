#include "flow/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/text.h"

#define MAX_DEPTH 16

/* Names for the statfs f_type of file systems an operator may meet, so a
 * refusal says "9p" or "fuse" rather than a number (issue 35). */
static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{0x01021997, "9p"},	 {0x65735546, "fuse"},	   {0x6969, "nfs"},	    {0xFF534D42, "cifs"},
	{0xFE534D42, "smb2"},	 {0x00C36400, "ceph"},	   {0x794C7630, "overlayfs"}, {0x858458F6, "ramfs"},
	{0x9FA0, "proc"},	 {0x62656572, "sysfs"},	   {0x73717368, "squashfs"}, {0x4D44, "vfat"},
	{0x2011BAB0, "exfat"},	 {0x7366746E, "ntfs3"},	   {0x2FC12FC1, "zfs"},	    {0xF2F52010, "f2fs"},
	{0x9660, "iso9660"},	 {0x15013346, "udf"},	   {0x1373, "devfs"},	    {0x73636673, "securityfs"},
	{0x6E736673, "nsfs"},	 {0x63677270, "cgroup2"},  {0x27E0EB, "cgroup"},    {0x64626720, "debugfs"},
};

void jig_tree_fs_name(unsigned long type, char *name, size_t cap)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (fs_names[i].magic == type) {
			snprintf(name, cap, "%s", fs_names[i].name);
			return;
		}
	snprintf(name, cap, "type 0x%lx", type);
}

void jig_tree_fs_type(int fd, char *name, size_t cap)
{
	/* statfs on 9p (9P2000.L) reports the server's f_type, so a 9p share
	 * of an ext4 directory looks like ext4: the mount's own type, from
	 * /proc/self/mountinfo by its id, says 9p. */
	uint64_t id;
	FILE *f = jig_tree_mount_id(fd, &id) == 0 ? fopen("/proc/self/mountinfo", "re") : NULL;
	char *line = NULL;
	size_t n = 0;
	bool found = false;
	while (f && !found && getline(&line, &n, f) > 0) {
		char *sep = strstr(line, " - "), type[64];
		found = strtoull(line, NULL, 10) == id && sep && sscanf(sep + 3, "%63s", type) == 1;
		if (found)
			snprintf(name, cap, "%s", type);
	}
	free(line);
	if (f)
		fclose(f);
	struct statfs sf;
	if (!found && fstatfs(fd, &sf) == 0)
		jig_tree_fs_name((unsigned long)sf.f_type, name, cap);
	else if (!found)
		snprintf(name, cap, "unknown");
}

bool jig_tree_fs_ok(int fd, char *name, size_t cap)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0) {
		snprintf(name, cap, "unknown");
		return false;
	}
	switch ((unsigned long)sf.f_type) {
	case 0xEF53: snprintf(name, cap, "ext4"); return true;
	case 0x58465342: snprintf(name, cap, "xfs"); return true;
	case 0x9123683E: snprintf(name, cap, "btrfs"); return true;
	case 0x01021994: snprintf(name, cap, "tmpfs"); return true;
	default: jig_tree_fs_name((unsigned long)sf.f_type, name, cap); return false;
	}
}

int jig_tree_mount_id(int fd, uint64_t *id)
{
	struct statx sx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) < 0)
		return -1;
	if (!(sx.stx_mask & STATX_MNT_ID))
		return errno = ENOSYS, -1;
	*id = sx.stx_mnt_id;
	return 0;
}

bool jig_tree_other_mount(int dirfd, const char *name, uint64_t mnt)
{
	struct statx sx;
	/* The last component's mount is crossed into, not followed like a link. */
	return statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) < 0 ||
	       !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != mnt;
}

/* The opened fd is still the checked entry, on the tree's mount. */
static bool same_entry(int fd, const struct stat *want, uint64_t mnt)
{
	struct stat got;
	uint64_t id;
	return fstat(fd, &got) == 0 && got.st_ino == want->st_ino && got.st_dev == want->st_dev &&
	       (got.st_mode & S_IFMT) == (want->st_mode & S_IFMT) && jig_tree_mount_id(fd, &id) == 0 && id == mnt;
}

/* Security modules label files themselves (SELinux, Smack, IMA/EVM): no
 * Flow wrote those; every other extended attribute is excess metadata. */
static bool module_label(const char *n)
{
	return strcmp(n, "security.selinux") == 0 || strncmp(n, "security.SMACK64", 16) == 0 ||
	       strcmp(n, "security.ima") == 0 || strcmp(n, "security.evm") == 0;
}

/* R-S06: fd carries an extended attribute (a user.* one, a POSIX ACL, a
 * file capability...): refused, never silently dropped by the byte copy. */
static int check_xattr(int fd, const char *rel, const struct jig_tree_limits *l, struct jig_error *e)
{
	char names[4096];
	ssize_t n = l->reject_xattr ? flistxattr(fd, names, sizeof(names)) : 0;
	if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
		return 0;
	if (n < 0 && errno != ERANGE)
		return jig_err(e, JIG_E_USAGE, "%s %s: extended attributes: %s", l->what, rel[0] ? rel : ".", strerror(errno));
	for (ssize_t k = 0; n > 0 && k < n; k += (ssize_t)strlen(names + k) + 1) {
		if (module_label(names + k))
			continue;
		char shown[65];
		size_t i = 0;
		for (; names[k + i] && i < sizeof(shown) - 1; i++) /* a Flow's name, shown inert */
			shown[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", names[k + i]) ? names[k + i] : '?';
		shown[i] = '\0';
		return jig_err(e, JIG_E_USAGE, "%s %s: has the extended attribute %s (excess metadata); refused", l->what, rel[0] ? rel : ".", shown);
	}
	return n < 0 ? jig_err(e, JIG_E_USAGE, "%s %s: has too many extended attributes (excess metadata); refused", l->what, rel[0] ? rel : ".") : 0;
}

static bool allowed(const struct jig_tree_limits *l, const char *path)
{
	if (!l->allowed)
		return true;
	for (size_t i = 0; i < l->n_allowed; i++) {
		size_t n = strlen(l->allowed[i]);
		/* A declared output names a file, or a directory for what is below it. */
		if (strncmp(l->allowed[i], path, n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* Checks st (from fstatat without following) for a file at rel. */
static int check_file(const struct stat *st, const char *rel, const struct jig_tree_limits *l,
		      struct jig_tree_stats *s, struct jig_error *e)
{
	if (st->st_nlink != 1)
		return jig_err(e, JIG_E_USAGE, "%s %s: has %lu hard links; only singly linked files are accepted", l->what, rel,
			       (unsigned long)st->st_nlink);
	if (l->reject_sparse && (uint64_t)st->st_blocks * 512 + 65536 < (uint64_t)st->st_size)
		return jig_err(e, JIG_E_USAGE, "%s %s: is a sparse file (%lld bytes, %lld allocated); refused", l->what, rel,
			       (long long)st->st_size, (long long)st->st_blocks * 512);
	if (!allowed(l, rel)) { /* what is declared, so the fix is one look away */
		char list[400];
		return jig_err(e, JIG_E_USAGE, "%s %s: is not a declared output of the Flow (it declares %s)", l->what, rel,
			       jig_text_list(list, sizeof(list), l->allowed, l->n_allowed));
	}
	if (++s->files > l->max_files)
		return jig_err(e, JIG_E_USAGE, "%s: more than %zu files", l->what, l->max_files);
	if (++s->entries > l->max_entries)
		return jig_err(e, JIG_E_USAGE, "%s: more than %zu entries", l->what, l->max_entries);
	if ((s->bytes += (uint64_t)st->st_size) > l->max_bytes)
		return jig_err(e, JIG_E_USAGE, "%s: more than %llu bytes", l->what, (unsigned long long)l->max_bytes);
	return 0;
}

/* Streams in (opened from the checked entry) to dstfd/name, at most size
 * bytes; records path, size and SHA-256. */
static int copy_bytes(int in, const struct stat *want, const char *rel, int dstfd, const char *name,
		      const struct jig_tree_limits *l, struct jig_tree_stats *s, struct jig_error *e)
{
	struct stat got;
	if (fstat(in, &got) < 0 || got.st_ino != want->st_ino || got.st_dev != want->st_dev || !S_ISREG(got.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s %s: changed while it was copied", l->what, rel);
	if (check_xattr(in, rel, l, e) < 0)
		return -JIG_E_USAGE;
	jig_autoclose int out = dstfd < 0 ? -1 : openat(dstfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dstfd >= 0 && out < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s %s: cannot create the copy: %s", l->what, rel, strerror(errno));
	struct jig_sha256_ctx *c = jig_sha256_begin();
	if (!c)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	char buf[65536];
	uint64_t total = 0;
	int r = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = jig_err(e, JIG_E_USAGE, "%s %s: read: %s", l->what, rel, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (total > (uint64_t)want->st_size) {
			r = jig_err(e, JIG_E_USAGE, "%s %s: grew while it was copied", l->what, rel);
			break;
		}
		jig_sha256_update(c, buf, (size_t)n);
		if (out >= 0 && write(out, buf, (size_t)n) != n) {
			r = jig_err(e, JIG_E_INTERNAL, "%s %s: write: %s", l->what, rel, strerror(errno));
			break;
		}
	}
	unsigned char h[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256_end(c, h);
	jig_hex(h, JIG_SHA256_LEN, hex);
	if (r == 0 && out >= 0 && fchmod(out, l->owner_only ? 0400 : 0444) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s %s: %s", l->what, rel, strerror(errno));
	if (r == 0 && s->list)
		json_array_append_new(s->list, json_pack("{s:s,s:I,s:s}", "path", rel, "size", (json_int_t)total, "sha256", hex));
	return r;
}

int jig_tree_copy_file(int srcfd, const char *name, int dstfd, const struct jig_tree_limits *l,
		       struct jig_tree_stats *s, struct jig_error *e)
{
	struct stat st;
	if (fstat(srcfd, &st) < 0 || !S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: not a regular file", l->what);
	int r = check_file(&st, name, l, s, e);
	return r ? r : copy_bytes(srcfd, &st, name, dstfd, name, l, s, e);
}

static int copy_dir(int srcfd, dev_t dev, uint64_t mnt, const char *prefix, int dstfd, const struct jig_tree_limits *l,
		    struct jig_tree_stats *s, int depth, struct jig_error *e)
{
	if (depth > MAX_DEPTH)
		return jig_err(e, JIG_E_USAGE, "%s %s: nested deeper than %d directories", l->what, prefix, MAX_DEPTH);
	DIR *d = jig_dir_open(srcfd);
	if (!d)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", l->what, strerror(errno));
	int r = 0;
	struct dirent *de;
	while (r == 0 && (de = jig_dir_next(d))) {
		const char *n = de->d_name;
		char rel[1024];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", n);
		struct stat st;
		if (!jig_path_is_normal_relative(rel))
			r = jig_err(e, JIG_E_USAGE, "%s %s: names must be [A-Za-z0-9._+@-]", l->what, rel);
		else if (l->deny_name && strcmp(n, l->deny_name) == 0)
			r = jig_err(e, JIG_E_USAGE, "%s %s: is protected host state (%s); refused", l->what, rel, l->deny_name);
		else if (fstatat(srcfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = jig_err(e, JIG_E_USAGE, "%s %s: %s", l->what, rel, strerror(errno));
		else if (S_ISLNK(st.st_mode))
			r = jig_err(e, JIG_E_USAGE, "%s %s: is a symbolic link; refused", l->what, rel);
		else if (st.st_dev != dev || jig_tree_other_mount(srcfd, n, mnt))
			r = jig_err(e, JIG_E_USAGE, "%s %s: is another mount; refused", l->what, rel);
		else if (S_ISDIR(st.st_mode)) {
			if (++s->entries > l->max_entries)
				r = jig_err(e, JIG_E_USAGE, "%s: more than %zu entries", l->what, l->max_entries);
			else if (dstfd >= 0 && mkdirat(dstfd, n, 0700) < 0)
				r = jig_err(e, JIG_E_INTERNAL, "%s %s: %s", l->what, rel, strerror(errno));
			else {
				/* checked, not yet opened: a test mounts over it here (unit.tree mount_swapped_after_check) */
				JIG_FAULT_POINT("tree entry checked");
				jig_autoclose int sub = openat(srcfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				jig_autoclose int dsub = dstfd < 0 ? -1 : openat(dstfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub < 0 || (dstfd >= 0 && dsub < 0))
					r = jig_err(e, JIG_E_USAGE, "%s %s: %s", l->what, rel, strerror(errno));
				else if (!same_entry(sub, &st, mnt))
					r = jig_err(e, JIG_E_USAGE, "%s %s: changed while it was copied (another directory or mount)", l->what, rel);
				else if (!(r = check_xattr(sub, rel, l, e)))
					r = copy_dir(sub, dev, mnt, rel, dsub, l, s, depth + 1, e);
				if (!r && dsub >= 0)
					fchmod(dsub, l->owner_only ? 0500 : 0555);
			}
		} else if (!S_ISREG(st.st_mode))
			r = jig_err(e, JIG_E_USAGE, "%s %s: is a special file (fifo, socket or device); refused", l->what, rel);
		else if (!(r = check_file(&st, rel, l, s, e))) {
			JIG_FAULT_POINT("tree entry checked");
			jig_autoclose int in = openat(srcfd, n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			r = in < 0 ? jig_err(e, JIG_E_USAGE, "%s %s: %s", l->what, rel, strerror(errno))
			    : !same_entry(in, &st, mnt) ? jig_err(e, JIG_E_USAGE, "%s %s: changed while it was copied (another file or mount)", l->what, rel)
							 : copy_bytes(in, &st, rel, dstfd, n, l, s, e);
		}
	}
	closedir(d);
	return r;
}

int jig_tree_copy(int srcfd, const char *prefix, int dstfd, const struct jig_tree_limits *l,
		  struct jig_tree_stats *s, struct jig_error *e)
{
	struct stat st;
	uint64_t mnt;
	if (fstat(srcfd, &st) < 0 || !S_ISDIR(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: not a directory", l->what);
	if (jig_tree_mount_id(srcfd, &mnt) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: cannot tell its mount: %s", l->what, strerror(errno));
	int r = check_xattr(srcfd, prefix, l, e);
	return r ? r : copy_dir(srcfd, st.st_dev, mnt, prefix, dstfd, l, s, 0, e);
}
