/* The one trusted-state store: see state.h. */
#include "state/state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "util/note.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

#define ADMISSION_FILE "admission.json"
#define ADMITTED_DIR "admitted"
#define ADMISSION_MAX 4096
#define PLAN_MAX (8u << 20)
#define KEY_FILE "operator.key"

/* The rule for a directory: the caller's, 0700, a real directory. */
static bool dir_ok(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0700;
}

int jig_state_project_dir(int rootfd, const char *root, bool create, struct jig_error *e)
{
	if (create && mkdirat(rootfd, JIG_STATE_DIR, 0700) < 0 && errno != EEXIST)
		return jig_err(e, JIG_E_USAGE, "%s/%s: cannot create: %s", root, JIG_STATE_DIR, strerror(errno));
	int fd = openat(rootfd, JIG_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		int saved = errno;
		if (saved == ELOOP || saved == ENOTDIR)
			return jig_err(e, JIG_E_NOT_ADMITTED,
				       "%s/%s is a symbolic link or not a directory, so not yours: move it away, then run 'jig review' (jig never deletes it)",
				       root, JIG_STATE_DIR);
		if (saved != EACCES || fstatat(rootfd, JIG_STATE_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid == geteuid())
			return jig_err(e, saved == ENOENT ? JIG_E_USAGE : JIG_E_INTERNAL, "%s/%s: %s", root, JIG_STATE_DIR, strerror(saved));
		/* another user's, closed to us: said below as not yours */
	}
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0777) != 0700) {
		int r = jig_err(e, JIG_E_NOT_ADMITTED,
				"%s/%s is owned by uid %u with mode %04o, not yours (uid %u) with mode 0700: it was made by someone else, so nothing in it is trusted; fix its owner and mode or move it away, then run 'jig review' (jig never deletes it)",
				root, JIG_STATE_DIR, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

int jig_state_subdir(int dirfd, const char *name, bool create)
{
	if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	/* To write: the caller's own directory with a wider mode (a checkout
	 * keeps no directory modes) is closed to 0700 first; what is in it is
	 * checked entry by entry anyway. */
	if (fd >= 0 && create && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 0777) != 0700)
		fchmod(fd, 0700);
	if (fd >= 0 && !dir_ok(fd)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int jig_state_open(int dirfd, const char *rel, const char *what, struct jig_error *e)
{
	int fd = jig_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return jig_err(e, errno == ENOENT ? JIG_E_USAGE : JIG_E_INTEGRITY, "%s: %s", what,
			       errno == ELOOP	 ? "is or passes through a symbolic link"
			       : errno == EACCES ? "not a regular file of yours with mode 0600 and one link (it cannot be read)"
						 : strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0777) != 0600 ||
	    st.st_nlink != 1) {
		close(fd);
		return jig_err(e, JIG_E_INTEGRITY, "%s: not a regular file of yours with mode 0600 and one link", what);
	}
	return fd;
}

int jig_state_read(int dirfd, const char *rel, size_t cap, const char *what, char **out, size_t *len,
		   struct jig_error *e)
{
	jig_autoclose int fd = jig_state_open(dirfd, rel, what, e);
	return fd < 0 ? fd : jig_read_fd(fd, cap, what, out, len, NULL, e);
}

int jig_state_write(int dirfd, const char *rel, const void *data, size_t len, struct jig_error *e)
{
	if (!jig_path_is_normal_relative(rel))
		return jig_err(e, JIG_E_INTERNAL, "%s: not a state entry's name", rel);
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return jig_write_file_replace_at(dirfd, rel, data, len, 0600, e);
	char dir[256];
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	jig_autoclose int dfd = jig_open_beneath(dirfd, dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || !dir_ok(dfd))
		return jig_err(e, JIG_E_INTEGRITY, "%s: its directory is not yours, not 0700 or a symbolic link", rel);
	return jig_write_file_replace_at(dfd, slash + 1, data, len, 0600, e);
}

/* --- the operator's secret ------------------------------------------------ */

/* Is the directory fd at or under the directory rootfd? Walks up by "..". */
static bool within(int fd, int rootfd)
{
	struct stat r, c;
	if (rootfd < 0 || fstat(rootfd, &r) < 0)
		return false;
	int cur = dup(fd);
	for (int depth = 0; cur >= 0 && depth < 256; depth++) {
		if (fstat(cur, &c) < 0)
			break;
		if (c.st_dev == r.st_dev && c.st_ino == r.st_ino) {
			close(cur);
			return true;
		}
		int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat u;
		if (up < 0 || fstat(up, &u) < 0 || (u.st_dev == c.st_dev && u.st_ino == c.st_ino)) { /* "/" */
			if (up >= 0)
				close(up);
			break;
		}
		close(cur);
		cur = up;
	}
	if (cur >= 0)
		close(cur);
	return false;
}

/* One component below the home directory: the caller's (or root's) and
 * writable by no one else (.local, .local/state), or the caller's and 0700
 * (jig), made 0700 when create. */
static int key_dir_step(int parent, const char *name, bool private, bool create)
{
	if (create && mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		goto bad;
	if (private ? !dir_ok(fd) : ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022))) {
		errno = EPERM;
		goto bad;
	}
	return fd;
bad:
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

static int key_refused(struct jig_error *e, const char *path, const char *why)
{
	return jig_err(e, JIG_E_NOT_ADMITTED, "operator key %s %s; no admission made with it is trusted: %s", path, why,
		       "move it away (jig makes a new one), then run 'jig review' again");
}

/* Reads the key from an open file under the rule, exactly 32 bytes: NULL,
 * or why not. */
static const char *key_read(int fd, unsigned char key[JIG_OPERATOR_KEY_LEN])
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return "is not a regular file";
	if (st.st_uid != getuid() || (st.st_mode & 07777) != 0600 || st.st_nlink != 1)
		return "is not yours with mode 0600 and one link";
	if (st.st_size != JIG_OPERATOR_KEY_LEN || pread(fd, key, JIG_OPERATOR_KEY_LEN, 0) != JIG_OPERATOR_KEY_LEN)
		return "is not 32 bytes";
	return NULL;
}

/* A fresh key in place under the name, never replacing one another jig
 * made meanwhile: written beside, then renamed without replacing. 0, or
 * EEXIST (read the other), or another errno. */
static int key_make(int dfd, unsigned char key[JIG_OPERATOR_KEY_LEN])
{
	size_t got = 0;
	while (got < JIG_OPERATOR_KEY_LEN) {
		ssize_t n = getrandom(key + got, JIG_OPERATOR_KEY_LEN - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		got += (size_t)n;
	}
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "." KEY_FILE ".%d.tmp", (int)getpid());
	unlinkat(dfd, tmp, 0);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	int err = 0;
	if (fchmod(fd, 0600) < 0 || write(fd, key, JIG_OPERATOR_KEY_LEN) != JIG_OPERATOR_KEY_LEN || fsync(fd) < 0)
		err = errno ? errno : EIO;
	close(fd);
	if (!err && renameat2(dfd, tmp, dfd, KEY_FILE, RENAME_NOREPLACE) < 0)
		err = errno;
	if (err == EINVAL) { /* no RENAME_NOREPLACE here: create it exclusively in place */
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, KEY_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return errno;
		err = write(fd, key, JIG_OPERATOR_KEY_LEN) == JIG_OPERATOR_KEY_LEN && fsync(fd) == 0 ? 0 : EIO;
		close(fd);
		return err;
	}
	if (err)
		unlinkat(dfd, tmp, 0);
	return err;
}

int jig_state_operator_key(bool create, int project_rootfd, unsigned char key[JIG_OPERATOR_KEY_LEN],
			   struct jig_error *e)
{
	/* From the account, never $HOME or $XDG_STATE_HOME: a project can set
	 * the environment (direnv's .envrc), and so point jig at a key it
	 * knows (decision 191). */
	const char *home = jig_caller_home();
	char path[PATH_MAX];
	if (!home || home[0] != '/' ||
	    (size_t)snprintf(path, sizeof(path), "%s/.local/state/jig/" KEY_FILE, home) >= sizeof(path))
		return jig_err(e, JIG_E_NOT_ADMITTED, "uid %u has no home directory in the password database, so no operator key: nothing can be admitted",
			       (unsigned)getuid());
	jig_autoclose int h = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_autoclose int local = h < 0 ? -1 : key_dir_step(h, ".local", false, create);
	jig_autoclose int st = local < 0 ? -1 : key_dir_step(local, "state", false, create);
	jig_autoclose int dfd = st < 0 ? -1 : key_dir_step(st, "jig", true, create);
	if (dfd < 0) {
		if (errno == ENOENT && !create)
			return jig_err(e, JIG_E_NOT_ADMITTED, "no operator key (%s): nothing was admitted by you here", path);
		return key_refused(e, path, errno == ELOOP || errno == ENOTDIR ? "is in a directory reached through a symbolic link"
					     : errno == EPERM ? "is in a directory that is not yours and private (0700)"
							      : strerror(errno));
	}
	if (within(dfd, project_rootfd))
		return key_refused(e, path, "is inside the project being opened");
	for (int tries = 0; tries < 3; tries++) {
		jig_autoclose int fd = openat(dfd, KEY_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		const char *bad;
		if (fd >= 0) {
			if (!(bad = key_read(fd, key)))
				return 0;
		} else if (errno == ELOOP)
			bad = "is a symbolic link";
		else if (errno != ENOENT)
			return key_refused(e, path, strerror(errno));
		else if (!create)
			return jig_err(e, JIG_E_NOT_ADMITTED, "no operator key (%s): nothing was admitted by you here", path);
		else {
			int err = key_make(dfd, key);
			if (!err)
				return 0;
			if (err != EEXIST)
				return jig_err(e, JIG_E_INTERNAL, "operator key %s: cannot create: %s", path, strerror(err));
			continue; /* another jig made it first: read theirs */
		}
		if (!create)
			return key_refused(e, path, bad);
		/* Making an admission with a key that may have been read or
		 * replaced by someone else: it is set aside (never deleted, never
		 * used again) and a new one is made; every admission made with it
		 * is reviewed again. */
		char aside[64];
		snprintf(aside, sizeof(aside), KEY_FILE ".refused-%lld", (long long)time(NULL));
		if (renameat(dfd, KEY_FILE, dfd, aside) < 0 && errno != ENOENT)
			return key_refused(e, path, bad);
		jig_note("note: operator key %s %s: set aside as %s; a new one is made, and admissions made with the old one are not trusted",
			path, bad, aside);
	}
	return jig_err(e, JIG_E_INTERNAL, "operator key %s: cannot be had", path);
}

/* --- MACs ----------------------------------------------------------------- */

void jig_state_mac(const unsigned char key[JIG_OPERATOR_KEY_LEN], const char *domain, const void *const *parts,
		   const size_t *lens, size_t n, unsigned char out[JIG_STATE_MAC_LEN])
{
	struct hmac_sha256_ctx c;
	hmac_sha256_set_key(&c, JIG_OPERATOR_KEY_LEN, key);
	for (size_t i = 0; i <= n; i++) {
		const void *p = i == 0 ? domain : parts[i - 1];
		uint64_t l = i == 0 ? strlen(domain) : lens[i - 1];
		unsigned char be[8];
		for (int k = 0; k < 8; k++)
			be[k] = (unsigned char)(l >> (56 - 8 * k));
		hmac_sha256_update(&c, sizeof(be), be);
		hmac_sha256_update(&c, l, p);
	}
	hmac_sha256_digest(&c, JIG_STATE_MAC_LEN, out);
}

bool jig_state_mac_equal(const unsigned char a[JIG_STATE_MAC_LEN], const unsigned char b[JIG_STATE_MAC_LEN])
{
	return memeql_sec(a, b, JIG_STATE_MAC_LEN) != 0;
}

/* --- entries bound to a project ------------------------------------------ */

/* The project's identity: its directory's canonical path and (st_dev,
 * st_ino); a copy, an extraction elsewhere or a clone is another
 * directory, so another project. */
struct identity {
	char path[PATH_MAX];
	char dev[24], ino[24], uid[16];
};

static int identity(int rootfd, struct identity *id)
{
	struct stat st;
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rootfd);
	ssize_t n = readlink(proc, id->path, sizeof(id->path) - 1);
	if (n <= 0 || id->path[0] != '/' || fstat(rootfd, &st) < 0)
		return -1;
	id->path[n] = '\0';
	snprintf(id->dev, sizeof(id->dev), "%llu", (unsigned long long)st.st_dev);
	snprintf(id->ino, sizeof(id->ino), "%llu", (unsigned long long)st.st_ino);
	snprintf(id->uid, sizeof(id->uid), "%u", (unsigned)getuid());
	return 0;
}

int jig_state_binding(int statefd, bool create, struct jig_state_binding *b, struct jig_error *e)
{
	struct identity id;
	jig_autoclose int rootfd = openat(statefd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || identity(rootfd, &id) < 0)
		return jig_err(e, JIG_E_NOT_ADMITTED, "the project's canonical path cannot be had");
	int r = jig_state_operator_key(create, rootfd, b->key, e);
	if (r)
		return r;
	snprintf(b->path, sizeof(b->path), "%s", id.path);
	memcpy(b->dev, id.dev, sizeof(b->dev));
	memcpy(b->ino, id.ino, sizeof(b->ino));
	memcpy(b->uid, id.uid, sizeof(b->uid));
	return 0;
}

void jig_state_binding_clear(struct jig_state_binding *b)
{
	explicit_bzero(b->key, sizeof(b->key));
}

void jig_state_bound_mac(const struct jig_state_binding *b, const char *domain, const void *const *parts,
			 const size_t *lens, size_t n, unsigned char out[JIG_STATE_MAC_LEN])
{
	const void *all[16];
	size_t l[16], k = 0;
	for (; k < n && k < 12; k++)
		all[k] = parts[k], l[k] = lens[k];
	const char *const mine[] = {b->path, b->dev, b->ino, b->uid};
	for (size_t i = 0; i < 4; i++, k++)
		all[k] = mine[i], l[k] = strlen(mine[i]);
	jig_state_mac(b->key, domain, all, l, k, out);
}

/* --- leases --------------------------------------------------------------- */

int jig_state_lease_rewrite(int fd, const void *data, size_t len)
{
	if (pwrite(fd, data, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0)
		return errno = errno ? errno : EIO, -1;
	return 0;
}

int jig_state_lease_create(int dirfd, const char *rel, const void *data, size_t len, struct jig_error *e)
{
	char tmp[128];
	if (!jig_path_is_normal_relative(rel) || strchr(rel, '/') ||
	    (size_t)snprintf(tmp, sizeof(tmp), ".%s.new", rel) >= sizeof(tmp))
		return jig_err(e, JIG_E_INTERNAL, "%s: not a lease's name", rel);
	int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || fchmod(fd, 0600) < 0 || jig_state_lease_rewrite(fd, data, len) < 0 ||
	    renameat(dirfd, tmp, dirfd, rel) < 0) {
		int err = errno ? errno : EIO;
		if (fd >= 0) {
			unlinkat(dirfd, tmp, 0);
			close(fd);
		}
		return jig_err(e, JIG_E_HOST, "%s: cannot create, lock and write it: %s", rel, strerror(err));
	}
	return fd;
}

int jig_state_lease_take(int dirfd, const char *rel, size_t cap, const char *what, int *fd, char **out, size_t *len,
			 struct jig_error *e)
{
	*fd = -1;
	*out = NULL;
	int lfd = jig_state_open(dirfd, rel, what, e);
	if (lfd < 0)
		return lfd;
	struct stat st;
	if (flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(lfd);
		return err == EWOULDBLOCK ? 0 : jig_err(e, JIG_E_INTEGRITY, "%s: cannot lock it: %s", what, strerror(err));
	}
	if (fstat(lfd, &st) < 0 || st.st_nlink == 0) { /* removed meanwhile by its holder or another sweep */
		close(lfd);
		return 0;
	}
	int r = jig_read_fd(lfd, cap, what, out, len, NULL, e);
	if (r < 0) {
		close(lfd);
		e->code = JIG_E_INTEGRITY; /* its line kept: not "absent" */
		return -JIG_E_INTEGRITY;
	}
	*fd = lfd;
	return 1;
}

/* --- the admission -------------------------------------------------------- */

static void admission_mac(const unsigned char key[JIG_OPERATOR_KEY_LEN], const char *sha, const struct identity *id,
			  unsigned char out[JIG_STATE_MAC_LEN])
{
	const void *parts[] = {sha, id->path, id->dev, id->ino, id->uid};
	size_t lens[5];
	for (size_t i = 0; i < 5; i++)
		lens[i] = strlen(parts[i]);
	jig_state_mac(key, JIG_ADMISSION_FORMAT, parts, lens, 5, out);
}

static bool is_hex64(const char *s)
{
	return s && strlen(s) == JIG_SHA256_HEX - 1 && strspn(s, "0123456789abcdef") == JIG_SHA256_HEX - 1;
}

int jig_state_admit(int statefd, int rootfd, const char *root, const char *sha, const char *plan_text,
		    struct jig_error *e)
{
	unsigned char key[JIG_OPERATOR_KEY_LEN], mac[JIG_STATE_MAC_LEN];
	struct identity id;
	int r = jig_state_operator_key(true, rootfd, key, e);
	if (r)
		return r;
	if (identity(rootfd, &id) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: its canonical path cannot be had", root);
	admission_mac(key, sha, &id, mac);
	explicit_bzero(key, sizeof(key));
	/* The Plan's text, always written: one planted under its name is
	 * replaced (it is checked against its digest when read anyway). */
	char rel[128], hex[2 * JIG_STATE_MAC_LEN + 1];
	jig_autoclose int ad = jig_state_subdir(statefd, ADMITTED_DIR, true);
	if (ad < 0)
		return jig_err(e, JIG_E_NOT_ADMITTED, "%s/%s/%s: not yours, not 0700 or a symbolic link; move it away, then run 'jig review' again",
			       root, JIG_STATE_DIR, ADMITTED_DIR);
	snprintf(rel, sizeof(rel), "%s.json", sha);
	struct jig_error w = {0};
	if (jig_write_file_replace_at(ad, rel, plan_text, strlen(plan_text), 0600, &w) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s/%s/%s/%s", root, JIG_STATE_DIR, ADMITTED_DIR, w.msg);
	jig_hex(mac, JIG_STATE_MAC_LEN, hex);
	json_t *a = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "format", JIG_ADMISSION_FORMAT, "plan_sha256", sha, "project",
			      id.path, "dev", id.dev, "ino", id.ino, "uid", id.uid, "mac", hex);
	jig_autofree char *txt = a ? jig_json_canonical(a) : NULL;
	json_decref(a);
	if (!txt)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (jig_state_write(statefd, ADMISSION_FILE, txt, strlen(txt), &w) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s/%s/%s", root, JIG_STATE_DIR, w.msg);
	return 0;
}

static int not_admitted(struct jig_error *e, const char *root, const char *why)
{
	return jig_err(e, JIG_E_NOT_ADMITTED, "%s: not admitted by you (%s): run 'jig review' again", root, why);
}

int jig_state_admitted(int statefd, int rootfd, const char *root, char sha[JIG_SHA256_HEX], struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error why = {0};
	int r = jig_state_read(statefd, ADMISSION_FILE, ADMISSION_MAX, ".jig/" ADMISSION_FILE, &buf, &len, &why);
	if (r == -JIG_E_USAGE)
		return jig_err(e, JIG_E_USAGE, "%s: no admitted Plan; run 'jig review' first", root);
	if (r)
		return not_admitted(e, root, why.msg);
	json_t *a = NULL;
	if (jig_json_parse_object(buf, len, ".jig/" ADMISSION_FILE, &a, &why) < 0)
		return not_admitted(e, root, ".jig/" ADMISSION_FILE " is not valid JSON");
	static const char *const keys[] = {"format", "plan_sha256", "project", "dev", "ino", "uid", "mac", NULL};
	const char *format = json_string_value(json_object_get(a, "format"));
	const char *plan = json_string_value(json_object_get(a, "plan_sha256"));
	const char *mac_hex = json_string_value(json_object_get(a, "mac"));
	const char *then = json_string_value(json_object_get(a, "project"));
	unsigned char mac[JIG_STATE_MAC_LEN], want[JIG_STATE_MAC_LEN], key[JIG_OPERATOR_KEY_LEN];
	struct identity id;
	if (jig_json_only_keys(a, keys, ".jig/" ADMISSION_FILE, &why) < 0 || !format || strcmp(format, JIG_ADMISSION_FORMAT) != 0)
		r = not_admitted(e, root, ".jig/" ADMISSION_FILE " is not a " JIG_ADMISSION_FORMAT " admission");
	else if (!is_hex64(plan) || !mac_hex || jig_unhex(mac_hex, mac, sizeof(mac)) < 0)
		r = not_admitted(e, root, ".jig/" ADMISSION_FILE " is malformed");
	else if (jig_state_operator_key(false, rootfd, key, &why) < 0)
		r = not_admitted(e, root, why.msg);
	else if (identity(rootfd, &id) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s: its canonical path cannot be had", root);
	else {
		admission_mac(key, plan, &id, want);
		explicit_bzero(key, sizeof(key));
		if (!jig_state_mac_equal(mac, want))
			r = not_admitted(e, root,
					 then && strcmp(then, id.path) != 0
						 ? "its admission was made for another directory; a copy is another project"
						 : "its admission was not made with your operator key for this directory");
		else
			memcpy(sha, plan, JIG_SHA256_HEX);
	}
	json_decref(a);
	return r;
}

json_t *jig_state_admitted_plan(int statefd, const char *sha)
{
	if (!is_hex64(sha))
		return NULL;
	char rel[128];
	snprintf(rel, sizeof(rel), ADMITTED_DIR "/%s.json", sha);
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error ignored;
	char hex[JIG_SHA256_HEX];
	json_t *doc = NULL;
	if (jig_state_read(statefd, rel, PLAN_MAX, "admitted Plan", &buf, &len, &ignored) < 0)
		return NULL;
	jig_sha256_hex(buf, len, hex);
	if (strcmp(hex, sha) != 0 || jig_json_parse_object(buf, len, "admitted Plan", &doc, &ignored) < 0)
		return NULL;
	return doc;
}

int jig_state_admission_named(int statefd, char sha[JIG_SHA256_HEX], struct jig_error *e)
{
	struct stat st;
	if (fstatat(statefd, ADMISSION_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return 1;
	jig_autofree char *buf = NULL;
	size_t len;
	json_t *a = NULL;
	int r = jig_state_read(statefd, ADMISSION_FILE, ADMISSION_MAX, ".jig/" ADMISSION_FILE, &buf, &len, e);
	if (!r)
		r = jig_json_parse_object(buf, len, ".jig/" ADMISSION_FILE, &a, e);
	const char *s = r ? NULL : json_string_value(json_object_get(a, "plan_sha256"));
	if (!r && !is_hex64(s))
		r = jig_err(e, JIG_E_USAGE, ".jig/" ADMISSION_FILE ": malformed");
	if (!r)
		memcpy(sha, s, JIG_SHA256_HEX);
	json_decref(a);
	return r;
}

/* --- the operator's cache directory --------------------------------------- */

int jig_state_cache_dir(char *dir, size_t cap, char *why, size_t why_cap)
{
	if (jig_user_dir("XDG_CACHE_HOME", ".cache", dir, cap) < 0) {
		dir[0] = '\0';
		snprintf(why, why_cap, "no HOME: no verification cache");
		return -1;
	}
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%.*s", (int)(strlen(dir) - strlen("/jig")), dir);
	mkdir(parent, 0700);
	mkdir(dir, 0700);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !dir_ok(fd)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, why_cap, "cache directory %s is not yours, not 0700 or a symbolic link; not used", dir);
		return -1;
	}
	return fd;
}
