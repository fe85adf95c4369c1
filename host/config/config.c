/* The operator's configuration directory: one reader for every file in it. */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"

int jig_config_read(const char *name, size_t max, bool required, char *what, size_t what_cap, char **buf, size_t *len,
		    struct stat *st, struct jig_error *e)
{
	char dir[PATH_MAX];
	if (jig_user_dir("XDG_CONFIG_HOME", ".config", dir, sizeof(dir)) < 0)
		return JIG_CONFIG_ABSENT; /* no HOME: no operator configuration */
	snprintf(what, what_cap, "%s/%s", dir, name);
	jig_autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return required ? jig_err(e, JIG_E_USAGE, "%s: %s", dir, strerror(errno)) : JIG_CONFIG_ABSENT;
	if (!required && fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return JIG_CONFIG_ABSENT;
	return jig_read_file_at(dfd, name, max, what, buf, len, st, e);
}
