/* The one reader of the operator's configuration (issue 32): a file under
 * ${XDG_CONFIG_HOME:-~/.config}/jig/ (http.json, npm.json, agents.json,
 * sessions.json). It fails closed (issue 44): only ENOENT, for the
 * directory or the file, is "no configuration"; any other failure to open
 * or read either is a refusal naming the file and the error. It applies the
 * one owner and mode rule, by what the file holds; each caller parses its
 * format. */
#ifndef JIG_CONFIG_CONFIG_H
#define JIG_CONFIG_CONFIG_H

#include <stddef.h>
#include <sys/stat.h>

#include "util/error.h"

/* jig_config_read's "no configuration": HOME is not set, or there is no
 * configuration directory (ENOENT) or no such file in it (ENOENT). A caller
 * that needs the file refuses with its own words. */
#define JIG_CONFIG_ABSENT 1

/* What a file holds decides who may have written it: the one owner and
 * mode rule for the operator's files (decision 341), chosen by its
 * reader. */
enum jig_config_secrecy {
	/* It only names things (npm.json's registry, an SSH known_hosts, a
	 * CA file): yours and not writable by group or others. */
	JIG_CONFIG_NAMES,
	/* A credential file a repository map names (an HTTPS credential
	 * file): yours, no group or other permission bits (0600 or
	 * stricter). */
	JIG_CONFIG_PRIVATE,
	/* It holds or names credentials (http.json, agents.json) or decides
	 * what a session may reach (sessions.json): PRIVATE and one link. */
	JIG_CONFIG_SECRET,
};

/* st breaks secrecy's rule: NULL when it does not, else the first rule it
 * breaks in a few words ("not yours", "writable by others (chmod go-w)",
 * "readable or writable by others (chmod 600)", "more than one link"),
 * for the caller's one line. */
const char *jig_config_refusal(const struct stat *st, enum jig_config_secrecy secrecy);

/* Reads name (at most max bytes, a regular file, not a link) into *buf (the
 * caller frees; a SECRET file's bytes are the caller's to wipe) and *len;
 * what gets "<dir>/<name>" for messages. Returns 0, JIG_CONFIG_ABSENT, or
 * < 0 with e set to one line naming the file (JIG_E_USAGE): a directory or
 * file that cannot be opened or read for any reason but ENOENT (EACCES,
 * EMFILE, ELOOP, ENOTDIR, EIO...), a directory that is a link to nothing,
 * or a file that breaks secrecy's rule (checked before it is read). */
int jig_config_read(const char *name, size_t max, enum jig_config_secrecy secrecy, char *what, size_t what_cap, char **buf,
		    size_t *len, struct jig_error *e);

#endif
