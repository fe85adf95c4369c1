/* The one reader of the operator's configuration (issue 32): a file under
 * ${XDG_CONFIG_HOME:-~/.config}/jig/ (http.json, npm.json, agents.json).
 * Each caller checks its file's owner and mode (credentials: 0600) and
 * parses its format. */
#ifndef JIG_CONFIG_CONFIG_H
#define JIG_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "util/error.h"

/* jig_config_read's "no configuration": HOME is not set, or (unless
 * required) there is no configuration directory or no such file. */
#define JIG_CONFIG_ABSENT 1

/* Reads name (at most max bytes, not a link) into *buf (the caller frees),
 * *len and *st; what gets "<dir>/<name>" for messages. Returns 0,
 * JIG_CONFIG_ABSENT, or < 0 with e set (required: a directory that cannot
 * be opened or a missing file is an error). */
int jig_config_read(const char *name, size_t max, bool required, char *what, size_t what_cap, char **buf, size_t *len,
		    struct stat *st, struct jig_error *e);

#endif
