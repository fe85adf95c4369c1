/* The operator's configuration directory: one reader for every file in it,
 * failing closed (issue 44) with one owner and mode rule. */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"

/* Any failure to reach or read the file but its absence: one line naming
 * it and the error. A private registry in npm.json that cannot be read
 * must never become the public one (dependency confusion), nor an
 * unreadable agents.json or http.json "nothing configured". */
static int unreadable(const char *what, int err, struct jig_error *e)
{
	return jig_err(e, JIG_E_USAGE, "%s: %s: cannot read the operator configuration; fix its permissions or remove it", what,
		       strerror(err));
}

const char *jig_config_refusal(const struct stat *st, enum jig_config_secrecy secrecy)
{
	if (st->st_uid != geteuid())
		return "not yours";
	if (secrecy == JIG_CONFIG_NAMES)
		return st->st_mode & 022 ? "writable by others (chmod go-w)" : NULL;
	if (st->st_mode & 077)
		return "readable or writable by others (chmod 600)";
	return secrecy == JIG_CONFIG_SECRET && st->st_nlink != 1 ? "more than one link" : NULL;
}

static int check_owner_mode(const struct stat *st, enum jig_config_secrecy secrecy, const char *what, struct jig_error *e)
{
	if (!jig_config_refusal(st, secrecy))
		return 0;
	if (secrecy == JIG_CONFIG_NAMES)
		return jig_err(e, JIG_E_USAGE, "operator configuration %s must be yours and not writable by others; refused", what);
	return jig_err(e, JIG_E_USAGE,
		       "operator configuration %s must be yours and mode 0600 with one link (it holds or names credentials); refused", what);
}

int jig_config_read(const char *name, size_t max, enum jig_config_secrecy secrecy, char *what, size_t what_cap, char **buf,
		    size_t *len, struct jig_error *e)
{
	*buf = NULL;
	*len = 0;
	char dir[PATH_MAX];
	if (jig_user_dir("XDG_CONFIG_HOME", ".config", dir, sizeof(dir)) < 0) {
		snprintf(what, what_cap, "%s (no configuration directory: HOME is not set)", name);
		return JIG_CONFIG_ABSENT;
	}
	snprintf(what, what_cap, "%s/%s", dir, name);
	jig_autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int err = errno;
		struct stat lst;
		/* A link to nothing (a dotfiles mount not mounted) is not "no
		 * configuration": the operator has one, somewhere else. */
		if (err == ENOENT && lstat(dir, &lst) == 0)
			return jig_err(e, JIG_E_USAGE,
				       "%s: %s is a symbolic link to nothing: cannot read the operator configuration; fix the link or remove it",
				       what, dir);
		return err == ENOENT ? JIG_CONFIG_ABSENT : unreadable(what, err, e);
	}
	jig_autoclose int fd = jig_open_beneath(dfd, name, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return JIG_CONFIG_ABSENT;
		if (errno == ELOOP)
			return jig_err(e, JIG_E_USAGE, "%s: is a symbolic link; the operator configuration is read only from a regular file", what);
		return unreadable(what, errno, e);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return unreadable(what, errno, e);
	if (!S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: not a regular file; the operator configuration is read only from one", what);
	int r = check_owner_mode(&st, secrecy, what, e);
	if (!r && jig_read_fd(fd, max, what, buf, len, NULL, e) < 0)
		r = jig_err(e, JIG_E_USAGE, "%s", e->msg); /* the operator's own file, whatever the reader's code */
	return r;
}
