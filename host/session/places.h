/* Where jig session finds its own inputs (decision 215): fixed places of the
 * operator's account, never chosen by an environment variable. */
#ifndef JIG_SESSION_PLACES_H
#define JIG_SESSION_PLACES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The repository map: HOME/.config/jig/sessions.json; the state roots:
 * HOME/.local/state/jig-sessions/<context>/<client>/<repository> (HOME: the
 * password database's, made physical). */
#define JIG_SESSION_MAP_DIR ".config/jig"
#define JIG_SESSION_STATE_DIR ".local/state/jig-sessions"

/* getpwuid(getuid())->pw_dir, physical (realpath), into out. */
int jig_session_home(char *out, size_t cap, struct jig_error *e);
/* Every directory of the physical path real, from /: root's or the
 * caller's, not writable by others unless sticky; real itself not writable
 * by others at all. One line naming the directory and the remedy. */
int jig_session_trusted_dirs(const char *real, const char *what, struct jig_error *e);
/* path (physical) is not inside any repository root or worktree of the
 * map's "repositories" nor inside one of more (NULL-terminated; "" skipped). */
int jig_session_outside_repositories(json_t *repos, const char *const *more, const char *path, const char *what,
				     struct jig_error *e);
/* An operator's file the map names for a host (a known_hosts, a CA or
 * credential file): their own regular file (a link is never followed),
 * not writable by others (secret: not readable by them either), at its
 * physical path, in trusted directories, outside every repository. One
 * line: "session: the WHAT of KIND host ALIAS, PATH: why; refused". */
int jig_session_operator_file(const char *kind, const char *alias, const char *what, const char *path, bool secret, json_t *repos,
			      struct jig_error *e);
/* home (checked with jig_session_trusted_dirs) / rel, each component
 * reached with O_NOFOLLOW: the first two (.local, state) the caller's,
 * created 0700, not writable by others; the rest jig's own, created 0700,
 * the caller's, and put back to mode 0700 (said on stderr) when anything
 * changed it. Returns the last one's descriptor or -code. */
int jig_session_state_dir(const char *home, const char *rel, struct jig_error *e);

#endif
