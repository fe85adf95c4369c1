/* An installed snapshot: <libdir>/current -> snapshots/<id>/ with a signed
 * manifest. Opening one verifies the signature against the trust anchors
 * and the install record (rollback protection); files are verified when
 * they are used (or all at once by jig_snapshot_verify_all, snapshot/verify.h). */
#ifndef JIG_SNAPSHOT_SNAPSHOT_H
#define JIG_SNAPSHOT_SNAPSHOT_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "manifest.h"
#include "signature.h"
#include "trust.h"

#define JIG_STATE_FILE "state.json"
#define JIG_STATE_FORMAT "jig-snapshot-state/1"

struct jig_verifier;

struct jig_snapshot {
	int dirfd;	     /* the snapshot directory */
	char *dirpath;	     /* for messages only */
	uid_t installer_uid; /* files may be owned by root or this uid */
	struct jig_manifest m;
	char *manifest_bytes;
	size_t manifest_len;
	unsigned char manifest_sha256[JIG_SHA256_LEN];
	const struct jig_trust_anchor *anchor;
	char keyid[JIG_KEYID_HEX];
	/* The command's verifier, if it has one (set after the open): the
	 * loader may then skip re-hashing an unchanged root-owned module it
	 * loads in place (decision 85). NULL: always hashed. */
	struct jig_verifier *verifier;
};

/* The install record: the highest accepted sequence and its manifest. */
struct jig_snapshot_state {
	uint64_t sequence;
	unsigned char manifest_sha256[JIG_SHA256_LEN];
};

/* <prefix>/lib/jig for the running executable (<prefix>/bin/jig). */
int jig_snapshot_default_libdir(char *out, size_t cap, struct jig_error *e);
/* jig's own program NAME beside it, <prefix>/libexec/NAME (found from the
 * running executable, never from PATH or the environment), opened for
 * fexecve: a regular file owned by root or by the owner of the running
 * executable, writable by no one else. An fd or -code. */
int jig_program_open(const char *name, struct jig_error *e);

/* Opens <libdir>/current, verifies its signature and the install record. */
int jig_snapshot_open_installed(struct jig_snapshot *s, const char *libdir, struct jig_error *e);
/* Opens a snapshot directory by path (staging, verify); no install record. */
int jig_snapshot_open_dir(struct jig_snapshot *s, const char *dirpath, struct jig_error *e);
/* The same, with a memo of verified signatures (may be NULL; see
 * signature.h): every check is made, the Ed25519 arithmetic only when the
 * memo does not already hold these exact bytes. */
int jig_snapshot_open_installed_memo(struct jig_snapshot *s, const char *libdir, const struct jig_signature_memo *memo,
				     struct jig_error *e);
int jig_snapshot_open_dir_memo(struct jig_snapshot *s, const char *dirpath, const struct jig_signature_memo *memo,
			       struct jig_error *e);
void jig_snapshot_close(struct jig_snapshot *s);

/* Opens a listed file with the ownership, mode and size checks; no hashing. */
int jig_snapshot_open_file(const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   struct jig_error *e);
/* Stat before open: the listed file's metadata through its checked parent
 * directory (remembered in memo across consecutive calls; files are sorted),
 * with the same ownership, mode, type and size checks as opening it. */
struct jig_snapshot_dirmemo {
	int fd; /* -1 initially; the owner closes it */
	char dir[256];
};
int jig_snapshot_stat_file(const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   struct jig_snapshot_dirmemo *memo, struct stat *st, struct jig_error *e);
/* The listed file at path, opened as jig_snapshot_open_file does and, with
 * hash, checked against its SHA-256 in the manifest. An fd, or < 0. */
int jig_snapshot_open_listed(const struct jig_snapshot *s, const char *path, bool hash, struct jig_error *e);
/* The listed file f, opened and checked against its SHA-256 in the
 * manifest. An fd, or < 0. */
int jig_snapshot_open_hashed(const struct jig_snapshot *s, const struct jig_manifest_file *f, struct jig_error *e);
/* No unlisted entry anywhere under the snapshot (directories on listed
 * paths and the manifest files excepted). */
int jig_snapshot_check_unlisted(const struct jig_snapshot *s, struct jig_error *e);

int jig_snapshot_state_read(int libfd, struct jig_snapshot_state *st, bool *present,
			    struct jig_error *e);
/* Refuses rollback and same-sequence substitution against the record. */
int jig_snapshot_check_state(const struct jig_snapshot *s, const struct jig_snapshot_state *st,
			     struct jig_error *e);

#endif
