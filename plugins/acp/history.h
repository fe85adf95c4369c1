/* A client's retained session history (<jig/acp.h>, "history" and
 * "restore"): one rollout file per session below a directory of the
 * client's private HOME, named "rollout-…-SESSIONID.jsonl". */
#ifndef JIG_ACP_HISTORY_H
#define JIG_ACP_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A session id usable in a file name: 1-128 of [A-Za-z0-9._-], no
 * leading dot. */
bool jig_acp_history_id_ok(const char *id);
/* A relative path of 1-4 such names (no "." or ".."). */
bool jig_acp_history_path_ok(const char *p);

/* Writes bytes to HOME/dir/path (directories created 0700, the file 0600,
 * nothing followed or replaced). 0, or -1 with a one-line reason. */
int jig_acp_history_restore(const char *home, const char *dir, const char *path, const char *bytes, size_t len,
			    char *why, size_t cap);

/* Finds the one regular file for session id below HOME/dir (at most four
 * levels, no link followed) and reads it: at most max bytes of complete
 * lines without control bytes. 0 with *bytes (malloc'd, NUL-terminated)
 * and path (below dir), or -1 with a one-line reason. */
int jig_acp_history_collect(const char *home, const char *dir, const char *id, int64_t max, char **bytes, size_t *len,
			    char path[520], char *why, size_t cap);

#endif
