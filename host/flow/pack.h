/* Packs of the Package/0 store (issue 50; docs/store.md): a review's new
 * blobs in one append-only file, store/packs/<sha256 of the pack>.pack,
 * made visible by its index, store/packs/<sha256 of the index>.idx
 * (format JIG_PACK_INDEX_FORMAT: the pack's digest and size, then one line
 * a blob, sorted by digest: "<sha256> <offset> <length>"). Written under
 * temporary names: the pack synced and renamed, then the index synced and
 * renamed last, then one fsync of store/packs. A reader sees a pack only
 * through an index whose content is its name and whose pack is there at
 * the size it names; every blob read from a pack is checked against its
 * digest. */
#ifndef JIG_FLOW_PACK_H
#define JIG_FLOW_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/crypto.h"
#include "util/error.h"

#define JIG_PACK_INDEX_FORMAT "jig-pack-index/1"
#define JIG_PACKS_DIR "store/packs"
/* An index's size cap: about 330,000 blobs, more than a 1 GiB store of
 * 4 KiB files holds. */
#define JIG_PACK_INDEX_MAX (32u << 20)

struct jig_pack_entry {
	char sha[JIG_SHA256_HEX];
	uint64_t off, len;
	size_t pack; /* into jig_packs.pack */
};

struct jig_pack_file {
	char sha[JIG_SHA256_HEX]; /* the pack's name and digest */
	char idx[JIG_SHA256_HEX]; /* its index's */
	uint64_t size, idx_size;
	int checked; /* 0: not yet; 1: its digest is its name; -1: it is not */
};

/* Every visible pack of a store and its entries, sorted by digest (one
 * digest may be in several packs). */
struct jig_packs {
	struct jig_pack_file *pack;
	size_t n_pack;
	struct jig_pack_entry *v;
	size_t n;
};

/* Reads every index of statefd's store/packs that is visible (its content
 * is its name, its pack is there at the size it names, its entries in
 * order and inside the pack); any other is left out (a crash's leftover:
 * jig gc removes it). 0, or a negative code (out of memory) with *e. */
int jig_packs_load(int statefd, struct jig_packs *ps, struct jig_error *e);
void jig_packs_free(struct jig_packs *ps);
/* The first entry for sha, or NULL; the others follow it. */
const struct jig_pack_entry *jig_packs_find(const struct jig_packs *ps, const char *sha);
/* Whether pack k's bytes are its name (read and hashed once a process):
 * 1 yes, 0 no (or unreadable). */
int jig_pack_check(int statefd, struct jig_packs *ps, size_t k);
/* Reads entry x's bytes into buf (x->len bytes) and checks them against
 * x->sha: 0; 1 when they are not its bytes; -1 with errno. */
int jig_pack_read(int statefd, const struct jig_packs *ps, const struct jig_pack_entry *x, unsigned char *buf);

/* A pack being written. */
struct jig_pack_writer {
	int statefd, fd;
	char tmp[96];
	struct jig_sha256_ctx *c;
	struct jig_pack_entry *v;
	size_t n, cap;
	uint64_t off;
	char pack_sha[JIG_SHA256_HEX], idx_sha[JIG_SHA256_HEX]; /* set by commit */
};

int jig_pack_begin(struct jig_pack_writer *w, int statefd, struct jig_error *e);
/* Appends len bytes whose digest is sha. */
int jig_pack_add(struct jig_pack_writer *w, const char *sha, const void *buf, size_t len, struct jig_error *e);
/* Appends what remains to be read from in, which must be the blob sha:
 * otherwise 1 (nothing appended; "changed while it was captured"). */
int jig_pack_add_fd(struct jig_pack_writer *w, const char *sha, int in, const char *what, struct jig_error *e);
/* Syncs and names the pack, writes, syncs and names its index, syncs the
 * directory. With nothing added, nothing is written. */
int jig_pack_commit(struct jig_pack_writer *w, struct jig_error *e);
/* Removes what an uncommitted writer wrote and frees it (after commit:
 * frees only). */
void jig_pack_end(struct jig_pack_writer *w);

#endif
