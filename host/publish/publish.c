#include "publish/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flow/tree.h"
#include "util/limits.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"

/* A check before work (issue 35): the parent takes a new entry and renames
 * it without replacing, the way the packet is published at the end. An
 * empty directory of a unique name is made, renamed to a second unique
 * name with RENAME_NOREPLACE and removed; nothing is followed. 0, or the
 * errno of the step that failed (*renaming: the rename's). */
static int probe(int parentfd, bool *renaming)
{
	unsigned char rnd[8] = {0};
	char a[64], b[64];
	*renaming = false;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return errno ? errno : EIO;
	unsigned long long id;
	memcpy(&id, rnd, sizeof(id));
	snprintf(a, sizeof(a), ".jig-probe-%016llx-a", id);
	snprintf(b, sizeof(b), ".jig-probe-%016llx-b", id);
	if (mkdirat(parentfd, a, 0700) < 0)
		return errno;
	*renaming = true;
	int err = JIG_FAULT_FAILS("noreplace probe") ? EINVAL /* test-only: no RENAME_NOREPLACE, or another refusal */
		  : JIG_FAULT_FAILS("probe rename") ? EPERM
		  : renameat2(parentfd, a, parentfd, b, RENAME_NOREPLACE) < 0 ? errno : 0;
	if (err == EEXIST) /* b was there: refused without replacing, as it should */
		err = 0;
	unlinkat(parentfd, err ? a : b, AT_REMOVEDIR);
	return err;
}

int jig_publish_open(struct jig_publish *p, const char *output, struct jig_error *e)
{
	memset(p, 0, sizeof(*p));
	p->output = output;
	p->parentfd = p->stagefd = -1;
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", output) >= (int)sizeof(buf))
		return jig_err(e, JIG_E_USAGE, "--output %s: too long", output);
	char *slash = strrchr(buf, '/');
	const char *name = slash ? slash + 1 : buf;
	const char *parent = slash ? (slash == buf ? "/" : buf) : ".";
	if (slash)
		*slash = '\0';
	if (!jig_path_is_normal_relative(name) || strchr(name, '/'))
		return jig_err(e, JIG_E_USAGE, "--output %s: the last component must be a plain new name", output);
	snprintf(p->name, sizeof(p->name), "%.255s", name); /* normal names are at most 255 bytes */
	if ((p->parentfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return jig_err(e, JIG_E_USAGE, "--output %s: parent directory: %s", output, strerror(errno));
	struct stat st;
	if (fstatat(p->parentfd, p->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return jig_err(e, JIG_E_USAGE, "--output %s already exists; jig never replaces a destination", output);
	char fs[32];
	bool fs_ok = jig_tree_fs_ok(p->parentfd, fs, sizeof(fs)), renaming;
	int err = probe(p->parentfd, &renaming);
	if (renaming && (err == EINVAL || err == EOPNOTSUPP || err == ENOSYS)) {
		jig_tree_fs_type(p->parentfd, fs, sizeof(fs)); /* 9p reports its server's f_type */
		return jig_err(e, JIG_E_USAGE,
			       "--output %s: its parent directory is on %s, which cannot rename without replacing (renameat2 RENAME_NOREPLACE: %s), so the packet could not be published; nothing was run: choose an --output on a local file system (ext4, XFS, Btrfs or tmpfs)",
			       output, fs, strerror(err));
	}
	if (!fs_ok) /* R-S03: the destination parent's file system */
		return jig_err(e, JIG_E_USAGE,
			       "--output %s: its parent directory is on %s; packets are published onto ext4, XFS, Btrfs or tmpfs only; nothing was run: choose an --output on one of them",
			       output, fs);
	if (err)
		return jig_err(e, JIG_E_USAGE, "--output %s: its parent directory refused a %s (%s), so the packet could not be published; nothing was run: choose an --output in a directory you can write",
			       output, renaming ? "test rename" : "new entry", strerror(err));
	return 0;
}

void jig_publish_stage_name(char *out, size_t cap, const char *run_dir, const char *name)
{
	const char *run = strrchr(run_dir, '/') ? strrchr(run_dir, '/') + 1 : run_dir;
	if (strncmp(run, JIG_RUN_DIR_PREFIX, strlen(JIG_RUN_DIR_PREFIX)) == 0)
		run += strlen(JIG_RUN_DIR_PREFIX);
	snprintf(out, cap, JIG_STAGE_PREFIX "%.32s-%.80s", run, name);
}

void jig_publish_remove_stage(const char *output, const char *run_dir)
{
	char parent[PATH_MAX], stage[NAME_MAX + 1];
	snprintf(parent, sizeof(parent), "%s", output);
	char *sl = strrchr(parent, '/');
	jig_publish_stage_name(stage, sizeof(stage), run_dir, sl ? sl + 1 : parent);
	int pfd = open(sl ? (sl == parent ? "/" : (*sl = '\0', parent)) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0) {
		jig_remove_tree(pfd, stage);
		close(pfd);
	}
}

int jig_publish_stage(struct jig_publish *p, const char *run_dir, struct jig_error *e)
{
	jig_publish_stage_name(p->stage, sizeof(p->stage), run_dir, p->name);
	if (mkdirat(p->parentfd, p->stage, 0700) < 0 ||
	    (p->stagefd = openat(p->parentfd, p->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(p->stagefd, "files", 0700) < 0) {
		int err = errno;
		if (err == EEXIST && p->stagefd < 0)
			p->stage[0] = '\0'; /* not ours */
		return jig_err(e, JIG_E_INTERNAL, "--output %s: cannot create the stage: %s", p->output, strerror(err));
	}
	return 0;
}

int jig_publish_collect(struct jig_publish *p, int held_fd, char *const *allowed, size_t n_allowed, json_t *list,
			struct jig_error *e)
{
	jig_autoclose int files = openat(p->stagefd, "files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jig_tree_limits l = {.what = "output", .max_files = JIG_OUTPUT_MAX_FILES, .max_entries = JIG_OUTPUT_MAX_ENTRIES,
				    .max_bytes = JIG_OUTPUT_MAX_BYTES, .reject_sparse = true, .allowed = allowed,
				    .n_allowed = n_allowed, .owner_only = true, .reject_xattr = true};
	struct jig_tree_stats st = {.list = list};
	struct jig_error oe = {0};
	JIG_FAULT_POINT("output copy");
	if (files < 0 || jig_tree_copy(held_fd, "", files, &l, &st, &oe) < 0)
		return jig_err(e, JIG_E_USAGE, "output refused, no file published: %s", files < 0 ? strerror(errno) : oe.msg);
	fchmod(files, 0500);
	return 0;
}

int jig_publish_discard_files(struct jig_publish *p, json_t *list, struct jig_error *e)
{
	json_array_clear(list);
	jig_remove_tree(p->stagefd, "files");
	if (mkdirat(p->stagefd, "files", 0500) < 0)
		return jig_err(e, JIG_E_INTERNAL, "--output %s: cannot empty the stage's files: %s; nothing published", p->output,
			       strerror(errno));
	return 0;
}

/* R-S07: what the stage holds beside files/ (record.json, an interrupted
 * Run's checkpoint) owner-only and read-only, like files/ and below. */
static int seal(struct jig_publish *p)
{
	int fd = dup(p->stagefd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	int r = 0;
	struct dirent *de;
	struct stat st;
	while (r == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    (fstatat(p->stagefd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) ||
		     fchmodat(p->stagefd, de->d_name, S_ISDIR(st.st_mode) ? 0500 : 0400, 0) < 0))
			r = -1;
	closedir(d);
	return r;
}

int jig_publish_commit(struct jig_publish *p, const char *record, struct jig_error *e)
{
	if (jig_write_file_at(p->stagefd, "record.json", record, strlen(record), 0400, e) < 0)
		return -JIG_E_INTERNAL;
	if (seal(p) < 0)
		return jig_err(e, JIG_E_INTERNAL, "--output %s: cannot make the packet private: %s; nothing published", p->output, strerror(errno));
	JIG_FAULT_POINT("stage rename");
	if (fchmod(p->stagefd, 0500) < 0 || renameat2(p->parentfd, p->stage, p->parentfd, p->name, RENAME_NOREPLACE) < 0)
		return jig_err(e, JIG_E_USAGE, "--output %s: %s; nothing published", p->output,
			       errno == EEXIST ? "appeared while the Flow ran; jig never replaces a destination" : strerror(errno));
	p->stage[0] = '\0';
	return 0;
}

void jig_publish_close(struct jig_publish *p)
{
	if (p->stage[0] && p->parentfd >= 0)
		jig_remove_tree(p->parentfd, p->stage);
	p->stage[0] = '\0';
	if (p->stagefd >= 0)
		close(p->stagefd);
	if (p->parentfd >= 0)
		close(p->parentfd);
	p->stagefd = p->parentfd = -1;
}
