/* The trusted repository map (jig-sessions/1, docs/session.md): the
 * operator's ~/.config/jig/sessions.json (the password database's home,
 * never an environment variable: decision 215), strictly parsed; a session's repository, worktree and provider come only from it.
 * Repository files may suggest nothing: the map and the catalog grant. */
#ifndef JIG_SESSION_MAP_H
#define JIG_SESSION_MAP_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_SESSIONS_FORMAT "jig-sessions/1"
#define JIG_SESSIONS_FILE "sessions.json"
#define JIG_SESSIONS_MAX_BYTES (256u << 10)

struct jig_session_map {
	json_t *doc;
	char sha256[JIG_SHA256_HEX]; /* of the file's bytes: pinned in the policy */
	char what[PATH_MAX + 32];    /* the file, for messages */
	char dir[PATH_MAX];	     /* its directory, physical */
};

/* Strict parse of the map's bytes (pure: tests/unit/session). */
int jig_session_map_parse(const char *buf, size_t len, const char *what, struct jig_session_map *m, struct jig_error *e);
/* The operator's file, HOME/.config/jig/sessions.json (HOME from the
 * password database): every directory to it root's or the caller's and not
 * writable by others (places.h), the file regular, not a link, the
 * caller's, mode 0600, at most JIG_SESSIONS_MAX_BYTES; then parsed; its
 * directory outside every repository it maps. */
int jig_session_map_load(struct jig_session_map *m, struct jig_error *e);
void jig_session_map_free(struct jig_session_map *m);

/* A mapped repository's paths, a new array: its root, then its
 * worktrees (json_decref it). */
json_t *jig_session_repo_paths(json_t *repo);

/* Where a session runs, resolved from its working directory. */
struct jig_session_where {
	char cwd[PATH_MAX];	   /* physical */
	char worktree[PATH_MAX];   /* the innermost worktree root holding cwd */
	char common_dir[PATH_MAX]; /* its Git common directory */
	char root[PATH_MAX];	   /* the repository's root (main worktree) */
	const char *repo_id;	   /* the map's entry (points into the map) */
	json_t *repo;
	bool rw;
	const char *context; /* "personal" | "work" */
	const char *provider_id;
	json_t *provider, *client;
	const char *client_id;
};

/* The repository of cwd (physical; the innermost .git, read as files, no
 * git run) and its map entry: an unknown repository, an unregistered
 * worktree, a .git that is a link or unreadable are refused. */
/* A small regular file's first line into out (no link followed at its
 * last component): 0, or a refusal naming path (where.c; git.c too). */
int jig_session_read_line(const char *path, char *out, size_t cap, struct jig_error *e);
int jig_session_map_resolve(const struct jig_session_map *m, const char *cwd, struct jig_session_where *w,
			    struct jig_error *e);
/* The provider: requested (NULL: the entry's one default) among the
 * entry's approved providers. */
int jig_session_map_provider(const struct jig_session_map *m, const char *requested, struct jig_session_where *w,
			     struct jig_error *e);

/* endpoint "127.0.0.1:PORT" (loopback) or "HOST:PORT"; *loopback says
 * which. HOST is a DNS name (lower case, no trailing dot, its last label
 * not all digits, not localhost) or an IP literal exactly as inet_ntop
 * writes it ("[v6]" for IPv6); any other address of this host or a
 * link-local one is refused, as is a non-canonical spelling (0177.0.0.1,
 * 2130706433, 127.1, localhost., [::ffff:127.0.0.1]): decision 218. NULL,
 * or why not (one phrase). */
const char *jig_session_endpoint_check(const char *ep, bool *loopback);
bool jig_session_endpoint_valid(const char *ep, bool *loopback);

#endif
