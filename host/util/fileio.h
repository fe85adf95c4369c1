/* Descriptor-relative file access: no symlink is ever followed. */
#ifndef JIG_UTIL_FILEIO_H
#define JIG_UTIL_FILEIO_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

/* true iff rel is a normalised relative path: non-empty components of
 * [A-Za-z0-9._+@-], none "." or "..", no leading/trailing/double '/',
 * at most 255 bytes. */
bool jig_path_is_normal_relative(const char *rel);

/* NULL iff rel is a path a package may ship (issue 46, decision 261):
 * any valid UTF-8 name npm can publish (spaces, "#", brackets, "~",
 * commas, non-ASCII) in non-empty components, none "." or "..", not
 * absolute, no control character (C0, DEL, C1), each component at most
 * 255 bytes (NAME_MAX) and the whole at most JIG_PACKAGE_PATH_MAX bytes.
 * Otherwise the rule that fired, as a phrase ("has a \"..\" component").
 * Flow input, output, entry and state names keep the narrower
 * jig_path_is_normal_relative. */
const char *jig_package_path_rule(const char *rel);

/* Opens rel beneath dirfd walking one component at a time with O_NOFOLLOW;
 * rel must pass jig_package_path_rule (EINVAL otherwise).
 * flags apply to the last component (O_CLOEXEC|O_NOFOLLOW are always added).
 * Returns an fd or -1 with errno set (ELOOP for a symlink anywhere). */
int jig_open_beneath(int dirfd, const char *rel, int flags);

/* A directory stream over a duplicate of dirfd (dirfd stays the
 * caller's, its offset shared), read from the start: a second walk of
 * dirfd starts over. NULL with errno set on failure, nothing left open
 * (EBADF for a dirfd < 0). closedir() ends it. */
DIR *jig_dir_open(int dirfd);

/* The next entry of d other than "." and "..", or NULL at the end. */
struct dirent *jig_dir_next(DIR *d);

/* Reads a whole regular file opened beneath dirfd; refuses more than cap
 * bytes. *out is NUL-terminated (not counted in *len). Errors name `what`. */
int jig_read_file_at(int dirfd, const char *rel, size_t cap, const char *what, char **out,
		     size_t *len, struct stat *st, struct jig_error *e);

/* The same for an open regular file, read from its current offset. */
int jig_read_fd(int fd, size_t cap, const char *what, char **out, size_t *len, struct stat *st, struct jig_error *e);

/* Writes data to a fresh file rel in dirfd (O_EXCL), fsyncs it. */
int jig_write_file_at(int dirfd, const char *rel, const void *data, size_t len, mode_t mode,
		      struct jig_error *e);
/* The same under a temporary name beside rel (this process's own), then
 * renamed over rel: a reader sees the whole file or none, a crash leaves
 * no partial rel, and two writers of one content-addressed name both
 * succeed (issue 36). */
int jig_write_file_replace_at(int dirfd, const char *rel, const void *data, size_t len, mode_t mode,
			      struct jig_error *e);

/* ${var:-$HOME/fallback}/jig: the operator's own directory for jig's
 * configuration (XDG_CONFIG_HOME, .config) or cache (XDG_CACHE_HOME,
 * .cache). -1 without an absolute var or HOME, or if it does not fit. */
int jig_user_dir(const char *var, const char *fallback, char *out, size_t cap);

/* The caller's home directory from the password database (never granted
 * to a scope), or NULL. */
const char *jig_caller_home(void);

/* Opens the absolute directory path from / one component at a time with
 * O_NOFOLLOW|O_DIRECTORY ("." and ".." refused): an fd, or -1 with errno
 * (ELOOP or ENOTDIR for a symlink anywhere). */
int jig_open_dir_nofollow(const char *path);

/* One directory entry's name. */
typedef char jig_name[256]; /* NAME_MAX + 1 */
/* The names in the directory dirfd that keep accepts (at most max), read
 * whole before the caller changes anything (removing entries while reading
 * a directory may skip some): malloc'd, *n of them; NULL with *n 0 when
 * none (or the directory cannot be read, or memory ran out). */
jig_name *jig_dir_names(int dirfd, bool (*keep)(const char *name), size_t max, size_t *n);

/* Removes name (beneath parent) and everything below it, never following a
 * symbolic link and never descending into a mount point (it stays, and so
 * does every directory above it); best effort. */
void jig_remove_tree(int parent, const char *name);

/* Makes a pipe readable (ends a Run or cancels a request in flight). */
void jig_poke(int fd);

#endif
