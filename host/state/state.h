/* The one trusted-state store (issue 44, decisions 190-194): every piece
 * of state jig keeps outside the package store's content goes through
 * here: the admission (.jig/admission.json, .jig/admitted/<sha>.json), the
 * last-Run entries (.jig/runs/), the verification cache and its signature
 * and catalog memos (the operator's cache directory), and the operator's
 * secret (~/.local/state/jig/operator.key, from the account), retained
 * Agent sessions (.jig/sessions/, effects/agent_sessions.c) and jig
 * session's leases ($XDG_RUNTIME_DIR/jig/sessions/<id>/lease,
 * session/runtime.c, session/sweep.c) (decisions 230-234).
 *
 * One rule for all of it: the caller's, files 0600 and directories 0700,
 * one link, opened descriptor-relative with O_NOFOLLOW (no symbolic link
 * is followed anywhere), read by one bounded strict reader, written by one
 * write-then-rename; an entry that influences what runs (the admission, the
 * verification cache) carries an HMAC-SHA256 under the operator's secret.
 * An entry that fails a check is ignored and re-derived (the admission:
 * "not admitted by you"), never trusted, and never deleted. */
#ifndef JIG_STATE_STATE_H
#define JIG_STATE_STATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_STATE_DIR ".jig"
#define JIG_OPERATOR_KEY_LEN 32
#define JIG_STATE_MAC_LEN 32
#define JIG_ADMISSION_FORMAT "jig-admission/2"
/* The verification cache's file in jig_state_cache_dir (its format:
 * snapshot/verify.c). */
#define JIG_STATE_VERIFICATION_CACHE "verification.cache"

/* <root>/.jig (rootfd: the project directory), created 0700 when create
 * and missing: an fd, or a negative code. One that is not the caller's,
 * not 0700 or not a real directory (a symbolic link) is refused with
 * -JIG_E_NOT_ADMITTED and a line naming it; never removed. */
int jig_state_project_dir(int rootfd, const char *root, bool create, struct jig_error *e);

/* A subdirectory of a state directory under the rule, created 0700 when
 * create: an fd, or -1 with errno (EPERM: not the caller's or not 0700). */
int jig_state_subdir(int dirfd, const char *name, bool create);

/* One state file rel (a normalised relative path) beneath dirfd, opened
 * read-only under the rule (the caller's, 0600, one link, regular, no link
 * followed): an fd, or -JIG_E_USAGE when absent, else -JIG_E_INTEGRITY,
 * e's line naming what. */
int jig_state_open(int dirfd, const char *rel, const char *what, struct jig_error *e);
/* The same, read whole: at most cap bytes; *out is NUL-terminated. */
int jig_state_read(int dirfd, const char *rel, size_t cap, const char *what, char **out, size_t *len,
		   struct jig_error *e);
/* Replaces rel beneath dirfd (its directory opened without following a
 * link) by write-then-rename, mode 0600. */
int jig_state_write(int dirfd, const char *rel, const void *data, size_t len, struct jig_error *e);

/* The operator's secret: 32 random bytes at
 * getpwuid(getuid())->pw_dir/.local/state/jig/operator.key, found from the
 * account and never from the environment (decision 191). With create, made
 * on first use (race-safe: a concurrent jig's key is read, not replaced).
 * Refused unless the caller's, 0600, one link, regular and 32 bytes, its
 * directory the caller's and 0700, and not at or under project_rootfd's
 * directory (-1: no project). -JIG_E_NOT_ADMITTED with a line naming the
 * key and the remedy. */
int jig_state_operator_key(bool create, int project_rootfd, unsigned char key[JIG_OPERATOR_KEY_LEN],
			   struct jig_error *e);

/* HMAC-SHA256 under key over domain and the n parts, each length-prefixed
 * (no two part lists share a message). */
void jig_state_mac(const unsigned char key[JIG_OPERATOR_KEY_LEN], const char *domain, const void *const *parts,
		   const size_t *lens, size_t n, unsigned char out[JIG_STATE_MAC_LEN]);
/* Constant-time comparison of two MACs. */
bool jig_state_mac_equal(const unsigned char a[JIG_STATE_MAC_LEN], const unsigned char b[JIG_STATE_MAC_LEN]);

/* What binds an entry of a project's .jig to its operator and place: the
 * operator's secret and the project's identity (the canonical path,
 * st_dev and st_ino of the directory holding .jig, and the uid), as the
 * admission is bound. */
struct jig_state_binding {
	unsigned char key[JIG_OPERATOR_KEY_LEN];
	char path[4096], dev[24], ino[24], uid[16];
};
/* The binding of the project whose .jig is statefd (its parent directory);
 * the key made on first use when create. 0, or -JIG_E_NOT_ADMITTED (no
 * key, a refused key) with a line saying why. Cleared by
 * jig_state_binding_clear. */
int jig_state_binding(int statefd, bool create, struct jig_state_binding *b, struct jig_error *e);
void jig_state_binding_clear(struct jig_state_binding *b);
/* jig_state_mac under b's key over domain, the n parts, then b's project
 * identity and uid: an entry copied to another project, another user or
 * made without the key does not verify. */
void jig_state_bound_mac(const struct jig_state_binding *b, const char *domain, const void *const *parts,
			 const size_t *lens, size_t n, unsigned char out[JIG_STATE_MAC_LEN]);

/* A lease (jig session's, decision 232): rel beneath dirfd made by
 * write-then-rename as a new file of the caller's, 0600, locked (flock
 * LOCK_EX) before it has its name, so the name never shows an unlocked or
 * partial lease while its holder lives: the locked fd, or a negative code.
 * jig_state_lease_rewrite replaces its whole content in place, the one
 * entry written so: its lock belongs to its inode, and a reader reads it
 * only once it holds that lock. */
int jig_state_lease_create(int dirfd, const char *rel, const void *data, size_t len, struct jig_error *e);
int jig_state_lease_rewrite(int fd, const void *data, size_t len);
/* Takes a free lease rel beneath dirfd under the rule (the caller's, 0600,
 * one link, regular, no link followed) and reads it (at most cap bytes):
 * 1 with *fd holding its lock and *out its bytes; 0 when it is held (its
 * holder lives) or was removed meanwhile; -JIG_E_USAGE when absent; else
 * -JIG_E_INTEGRITY with e's line naming what is wrong (not acted on). */
int jig_state_lease_take(int dirfd, const char *rel, size_t cap, const char *what, int *fd, char **out, size_t *len,
			 struct jig_error *e);

/* Admits plan_text (its SHA-256 is sha) for the project (rootfd, root;
 * statefd its .jig): admitted/<sha>.json, then admission.json
 * (jig-admission/2) with its MAC over the format, sha, the project's
 * identity (canonical path, st_dev, st_ino) and the uid, under the
 * operator's secret (made on first use). */
int jig_state_admit(int statefd, int rootfd, const char *root, const char *sha, const char *plan_text,
		    struct jig_error *e);
/* The Plan admitted for this project by this operator into sha: 0;
 * -JIG_E_USAGE when nothing was admitted; -JIG_E_NOT_ADMITTED when an
 * admission is there but fails any check (format, MAC, another project,
 * uid or key, a missing key), e's line saying so and to review again. */
int jig_state_admitted(int statefd, int rootfd, const char *root, char sha[JIG_SHA256_HEX], struct jig_error *e);
/* admitted/<sha>.json parsed, only when its bytes hash to sha; else NULL. */
json_t *jig_state_admitted_plan(int statefd, const char *sha);
/* The Plan admission.json names, unverified: for retention only (jig gc
 * keeps what it names; keeping more is never unsafe). 0, 1 when there is
 * no admission, or a negative code. */
int jig_state_admission_named(int statefd, char sha[JIG_SHA256_HEX], struct jig_error *e);

/* The operator's cache directory for the verification cache
 * (${XDG_CACHE_HOME:-~/.cache}/jig, created 0700; its entries are MACed,
 * so a planted one vouches for nothing): an fd with its path in dir, or -1
 * with why. */
int jig_state_cache_dir(char *dir, size_t cap, char *why, size_t why_cap);

#endif
