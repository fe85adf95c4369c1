/* Installation verification modes and the operator-private digest cache.
 *
 * The cache file is text: a format line, then one line per file,
 *   SHA256 <TAB> dev=… ino=… mode=… uid=… size=… mtime=S.NS ctime=S.NS <TAB> PATH
 * with every number in hex (JSON, or decimal, would cost more to make and
 * parse than the stats it saves), and a last line "mac HEX": the
 * HMAC-SHA256 of everything before it under the operator's secret
 * (state/state.h, decision 193). The directory, the file's rule, the MAC
 * and the write are the state store's. */
#include "snapshot/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "state/state.h"

#define CACHE_FILE JIG_STATE_VERIFICATION_CACHE
#define CACHE_FORMAT_FAMILY "jig-verification-cache/"
#define CACHE_FORMAT CACHE_FORMAT_FAMILY "3"
#define MAC_LINE_LEN (4 + 2 * JIG_STATE_MAC_LEN + 1) /* "mac " HEX "\n" */
#define CACHE_MAX_BYTES (64u << 20)
#define CACHE_MAX_ENTRIES 100000

static const char *const names[] = {"cached", "strict", "fast"};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int jig_verifier_init(struct jig_verifier *v, const char *arg, enum jig_verification dflt, struct jig_error *e)
{
	memset(v, 0, sizeof(*v));
	v->memo.fd = -1;
	v->mode = dflt;
	const char *m = arg ? arg : getenv("JIG_VERIFICATION");
	if (!m || (!arg && !m[0]))
		return 0;
	for (int i = 0; i < 3; i++)
		if (strcmp(m, names[i]) == 0) {
			v->mode = (enum jig_verification)i;
			return 0;
		}
	return jig_err(e, JIG_E_USAGE, "%s \"%.40s\" is not a verification mode; use cached, strict or fast",
		       arg ? "--verification" : "JIG_VERIFICATION", m);
}

static void ignore(struct jig_verifier *v, const char *why)
{
	snprintf(v->note, sizeof(v->note), "%.3800s/" CACHE_FILE " %.100s; ignored", v->dir, why);
	v->n = 0;
	json_object_clear(v->added);
	v->dirty = v->writable; /* replace the bad file with a fresh one */
}

/* One cache line: SHA256 \t META \t PATH, split in place. */
static int parse_line(struct jig_verifier_entry *out, char *line)
{
	char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (!t1 || !t2 || t1 - line != JIG_SHA256_HEX - 1 || strspn(line, "0123456789abcdef") != JIG_SHA256_HEX - 1 ||
	    t2 == t1 + 1 || t2[1] != '/' || strchr(t2 + 1, '\t'))
		return -1;
	*t2 = '\0';
	out->val = line;
	out->path = t2 + 1;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct jig_verifier_entry *)a)->path, ((const struct jig_verifier_entry *)b)->path);
}

/* The MAC of the cache's text (everything before its "mac" line). */
static void cache_mac(const struct jig_verifier *v, const char *text, size_t len, unsigned char out[JIG_STATE_MAC_LEN])
{
	const void *parts[] = {text};
	jig_state_mac(v->key, CACHE_FORMAT, parts, &len, 1, out);
}

/* The cache directory and file through the state store (the operator's,
 * 0700 and 0600, one link, no link followed), then the MAC, then every
 * line. */
static void load(struct jig_verifier *v)
{
	v->loaded = true;
	v->added = json_object();
	jig_autoclose int dfd = jig_state_cache_dir(v->dir, sizeof(v->dir), v->note, sizeof(v->note));
	if (dfd < 0)
		return;
	struct jig_error ke;
	if (jig_state_operator_key(true, -1, v->key, &ke) < 0) {
		snprintf(v->note, sizeof(v->note), "no verification cache: %.300s", ke.msg);
		return;
	}
	v->writable = true;
	size_t len;
	struct jig_error re;
	int r = jig_state_read(dfd, CACHE_FILE, CACHE_MAX_BYTES, CACHE_FILE, &v->buf, &len, &re);
	if (r == -JIG_E_USAGE) { /* none yet */
		v->dirty = true;
		return;
	}
	if (r) /* the store's reason, without its name again */
		return ignore(v, strncmp(re.msg, CACHE_FILE ": ", strlen(CACHE_FILE) + 2) == 0 ? re.msg + strlen(CACHE_FILE) + 2 : re.msg);
	char *buf = v->buf;
	/* Every line complete (a truncated file ends mid-line) and well formed;
	 * the MAC first: nothing in a forged cache is looked at. */
	size_t hl = strlen(CACHE_FORMAT);
	static const char older[] = CACHE_FORMAT_FAMILY;
	if (len > sizeof(older) && memcmp(buf, older, sizeof(older) - 1) == 0 && buf[sizeof(older) - 1] >= '1' &&
	    buf[sizeof(older) - 1] <= '2' && buf[sizeof(older)] == '\n') {
		v->dirty = true; /* an older jig's cache (before its MAC): replaced, said nowhere */
		return;
	}
	if (len < hl + 1 + MAC_LINE_LEN || memcmp(buf, CACHE_FORMAT "\n", hl + 1) != 0 || buf[len - 1] != '\n' ||
	    strlen(buf) != len || memcmp(buf + len - MAC_LINE_LEN, "mac ", 4) != 0)
		return ignore(v, "is truncated, corrupted or of another version");
	unsigned char have[JIG_STATE_MAC_LEN], want[JIG_STATE_MAC_LEN];
	buf[len - 1] = '\0';
	if (jig_unhex(buf + len - MAC_LINE_LEN + 4, have, sizeof(have)) < 0)
		return ignore(v, "is truncated, corrupted or of another version");
	len -= MAC_LINE_LEN;
	cache_mac(v, buf, len, want);
	if (!jig_state_mac_equal(have, want)) {
		/* Said in --json's cache_ignored, not on stderr: a cache written
		 * under an earlier key (a new key, a copied home) is expected and
		 * needs nothing from the operator; forged or not, it is ignored
		 * and rewritten (decision 193). */
		ignore(v, "was not written with your operator key (forged, or another key's)");
		v->note_quiet = true;
		return;
	}
	buf[len] = '\0';
	size_t lines = 0;
	for (const char *c = buf + hl + 1, *end = buf + len; (c = memchr(c, '\n', (size_t)(end - c))); c++)
		lines++;
	if (lines > CACHE_MAX_ENTRIES || !(v->arr = calloc(lines + 1, sizeof(*v->arr))))
		return ignore(v, "is too large");
	bool sorted = true;
	for (char *line = buf + hl + 1, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		if (parse_line(&v->arr[v->n], line) < 0)
			return ignore(v, "is truncated, corrupted or of another version");
		sorted &= v->n == 0 || strcmp(v->arr[v->n - 1].path, v->arr[v->n].path) < 0;
		v->n++;
	}
	if (!sorted)
		qsort(v->arr, v->n, sizeof(*v->arr), cmp_entry);
}

/* Files are verified in the manifest's (sorted) order, which is the
 * cache's order under one root: the entry after the last hit is tried
 * first, so a whole installation costs one comparison a file, not a
 * binary search. */
static const char *lookup(struct jig_verifier *v, const char *canon)
{
	if (json_object_size(v->added)) {
		const char *a = json_string_value(json_object_get(v->added, canon));
		if (a)
			return a;
	}
	if (v->next < v->n && strcmp(v->arr[v->next].path, canon) == 0)
		return v->arr[v->next++].val;
	struct jig_verifier_entry key = {.path = canon};
	const struct jig_verifier_entry *hit = v->n ? bsearch(&key, v->arr, v->n, sizeof(key), cmp_entry) : NULL;
	if (!hit)
		return NULL;
	v->next = (size_t)(hit - v->arr) + 1;
	return hit->val;
}

/* Lowercase hex digits of x at p (no leading zeros); the end. */
static inline char *put_hex(char *p, unsigned long long x)
{
	static const char d[] = "0123456789abcdef";
	int n = x ? (67 - __builtin_clzll(x)) / 4 : 1;
	for (int i = n - 1; i >= 0; i--, x >>= 4)
		p[i] = d[x & 15];
	return p + n;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_time(char *p, const struct timespec *t)
{
	if (t->tv_sec < 0)
		*p++ = '-';
	p = put_hex(p, t->tv_sec < 0 ? (unsigned long long)-(long long)t->tv_sec : (unsigned long long)t->tv_sec);
	*p++ = '.';
	return put_hex(p, (unsigned long long)t->tv_nsec);
}

/* The file's identity and metadata, as one comparable string, every number
 * in hex: "dev=X ino=X mode=X uid=X size=X mtime=S.NS ctime=S.NS", written
 * without printf or division (it runs once per file: decimal conversion was
 * a third of a cached 10,000-file verification's own work). out has at
 * least 256 bytes. */
static void fingerprint(const struct stat *st, char *out)
{
	char *p = out;
	p = put_hex(put_str(p, "dev="), (unsigned long long)st->st_dev);
	p = put_hex(put_str(p, " ino="), (unsigned long long)st->st_ino);
	p = put_hex(put_str(p, " mode="), (unsigned)st->st_mode);
	p = put_hex(put_str(p, " uid="), (unsigned)st->st_uid);
	p = put_hex(put_str(p, " size="), (unsigned long long)(st->st_size < 0 ? 0 : st->st_size));
	p = put_time(put_str(p, " mtime="), &st->st_mtim);
	p = put_time(put_str(p, " ctime="), &st->st_ctim);
	*p = '\0';
}

/* The kernel stamps mtime and ctime from its coarse clock, which moves in
 * whole ticks (10 ms at HZ=100, the coarsest Linux has). A file changed
 * within the last tick may change again with the same stamps (git's "racy"
 * entries), so its digest is used but not stored; from two ticks on, any
 * later change gets a later stamp. */
#define SETTLED_NS 20000000LL
static bool settled(const struct stat *st)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	const struct timespec *c = &st->st_ctim, *m = &st->st_mtim;
	const struct timespec *t = c->tv_sec > m->tv_sec || (c->tv_sec == m->tv_sec && c->tv_nsec > m->tv_nsec) ? c : m;
	long long age = (long long)(now.tv_sec - t->tv_sec) * 1000000000LL + (now.tv_nsec - t->tv_nsec);
	return age >= SETTLED_NS;
}

/* A stored digest for canon usable under the mode, or NULL. */
static const char *stored(struct jig_verifier *v, const char *canon, const char *meta)
{
	if (v->mode == JIG_VERIFY_STRICT)
		return NULL;
	if (!v->loaded)
		load(v);
	const char *ent = lookup(v, canon);
	if (!ent || (v->mode == JIG_VERIFY_CACHED && strcmp(ent + JIG_SHA256_HEX, meta) != 0))
		return NULL;
	return ent; /* the first 64 characters are the digest */
}

static void store(struct jig_verifier *v, const char *canon, const char *meta, const char *hex)
{
	if (v->mode == JIG_VERIFY_STRICT || !v->added || strchr(canon, '\n') || strchr(canon, '\t') ||
	    v->n + json_object_size(v->added) >= CACHE_MAX_ENTRIES)
		return;
	char val[JIG_SHA256_HEX + 256];
	snprintf(val, sizeof(val), "%s\t%s", hex, meta);
	json_object_set_new(v->added, canon, json_string(val));
	v->dirty = v->writable;
}

static void canonical(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
		      char *out, size_t cap)
{
	if (!v->root[0] && !realpath(s->dirpath, v->root))
		snprintf(v->root, sizeof(v->root), "%s", s->dirpath);
	size_t a = strlen(v->root), b = strlen(f->path);
	if (a + 1 + b + 1 > cap) { /* not in practice: root < PATH_MAX, a path < 256 */
		snprintf(out, cap, "%s/%s", v->root, f->path);
		return;
	}
	memcpy(out, v->root, a);
	out[a] = '/';
	memcpy(out + a + 1, f->path, b + 1);
}

static int compare(struct jig_verifier *v, const char *canon, const char *have, const struct jig_manifest_file *f,
		   struct jig_error *e)
{
	char want[JIG_SHA256_HEX];
	jig_hex(f->sha256, JIG_SHA256_LEN, want);
	if (strncmp(have, want, JIG_SHA256_HEX - 1) == 0)
		return 0;
	return jig_err(e, JIG_E_INTEGRITY,
		       "%s: sha256 %.64s, manifest lists %s; the installed file was altered (verification %s), reinstall the snapshot",
		       canon, have, want, names[v->mode]);
}

static int hash_fd(struct jig_verifier *v, int fd, const char *canon, char have[JIG_SHA256_HEX], struct jig_error *e)
{
	unsigned char got[JIG_SHA256_LEN];
	uint64_t size;
	if (jig_sha256_fd(fd, &size, got) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: read: %s", canon, strerror(errno));
	jig_hex(got, JIG_SHA256_LEN, have);
	v->hashed++;
	v->hashed_bytes += size;
	return 0;
}

/* One listed file, stat before open: with a usable stored digest it is
 * opened only when the caller wants its descriptor (returned; else 0). */
static int verify(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f, bool want_fd,
		  struct jig_error *e)
{
	struct stat st;
	int r = jig_snapshot_stat_file(s, f, &v->memo, &st, e);
	if (r)
		return r;
	char canon[PATH_MAX + 300], meta[256], have[JIG_SHA256_HEX];
	canonical(v, s, f, canon, sizeof(canon));
	fingerprint(&st, meta);
	const char *ent = stored(v, canon, meta);
	int fd = -1;
	if (!ent || want_fd) {
		/* Exactly the inode just examined. */
		const char *base = strrchr(f->path, '/');
		struct stat now;
		fd = openat(v->memo.fd, base ? base + 1 : f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &now) < 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
			if (fd >= 0)
				close(fd);
			return jig_err(e, JIG_E_INTEGRITY, "%s: replaced while being verified; try again", canon);
		}
	}
	if (ent) {
		v->reused++;
		r = compare(v, canon, ent, f, e);
	} else if (!(r = hash_fd(v, fd, canon, have, e)) && !(r = compare(v, canon, have, f, e)) && settled(&st))
		store(v, canon, meta, have);
	if (r || !want_fd) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

int jig_verifier_check_file(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			    struct jig_error *e)
{
	uint64_t t = now_ns();
	int r = verify(v, s, f, false, e);
	v->elapsed_ns += now_ns() - t;
	return r;
}

int jig_verifier_open(struct jig_verifier *v, const struct jig_snapshot *s, const char *path, struct jig_error *e)
{
	const struct jig_manifest_file *f = jig_manifest_find_file(&s->m, path);
	if (!f)
		return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; reinstall jig", s->m.id, path);
	uint64_t t = now_ns();
	int r = verify(v, s, f, true, e);
	v->elapsed_ns += now_ns() - t;
	return r;
}

int jig_verifier_check(struct jig_verifier *v, const struct jig_snapshot *s, const char *const *paths, size_t n,
		       struct jig_error *e)
{
	for (size_t i = 0; i < n; i++) {
		const struct jig_manifest_file *f = jig_manifest_find_file(&s->m, paths[i]);
		int r = f ? jig_verifier_check_file(v, s, f, e)
			  : jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; reinstall jig", s->m.id, paths[i]);
		if (r)
			return r;
	}
	return 0;
}

/* A manifest file's cache key, its inode's fingerprint and its manifest
 * digest in hex: what a launch-path memo is looked up or stored under. */
static void entry_of(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
		     const struct stat *st, char canon[PATH_MAX + 300], char meta[256], char hex[JIG_SHA256_HEX])
{
	canonical(v, s, f, canon, PATH_MAX + 300);
	fingerprint(st, meta);
	jig_hex(f->sha256, JIG_SHA256_LEN, hex);
}

bool jig_verifier_known(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			const struct stat *st)
{
	if (v->mode == JIG_VERIFY_STRICT)
		return false;
	uint64_t t = now_ns();
	char canon[PATH_MAX + 300], meta[256], want[JIG_SHA256_HEX];
	entry_of(v, s, f, st, canon, meta, want);
	/* The very fingerprint, in fast mode too (stored() skips it there). */
	const char *ent = stored(v, canon, meta);
	bool hit = ent && strcmp(ent + JIG_SHA256_HEX, meta) == 0 && strncmp(ent, want, JIG_SHA256_HEX - 1) == 0;
	v->reused += hit;
	v->elapsed_ns += now_ns() - t;
	return hit;
}

void jig_verifier_remember(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   const struct stat *st)
{
	v->hashed++;
	v->hashed_bytes += f->size;
	if (v->mode == JIG_VERIFY_STRICT || !settled(st))
		return;
	if (!v->loaded)
		load(v);
	char canon[PATH_MAX + 300], meta[256], hex[JIG_SHA256_HEX];
	entry_of(v, s, f, st, canon, meta, hex);
	store(v, canon, meta, hex);
}

#define SIG_MEMO_DIR "/.jig-ed25519-verified/"

bool jig_verifier_memo_known(struct jig_verifier *v, const char *ns, const unsigned char digest[JIG_SHA256_LEN])
{
	size_t nl = strlen(ns);
	if (v->mode == JIG_VERIFY_STRICT || nl > 64)
		return false;
	uint64_t t = now_ns();
	if (!v->loaded)
		load(v);
	char key[64 + JIG_SHA256_HEX];
	memcpy(key, ns, nl);
	jig_hex(digest, JIG_SHA256_LEN, key + nl);
	const char *ent = lookup(v, key);
	bool hit = ent && strncmp(ent, key + nl, JIG_SHA256_HEX - 1) == 0;
	v->elapsed_ns += now_ns() - t;
	return hit;
}

void jig_verifier_memo_remember(struct jig_verifier *v, const char *ns, const unsigned char digest[JIG_SHA256_LEN])
{
	size_t nl = strlen(ns);
	if (v->mode == JIG_VERIFY_STRICT || nl > 64)
		return;
	if (!v->loaded)
		load(v);
	char key[64 + JIG_SHA256_HEX];
	memcpy(key, ns, nl);
	jig_hex(digest, JIG_SHA256_LEN, key + nl);
	store(v, key, "checked", key + nl);
}

static int sig_known(void *ctx, const unsigned char digest[JIG_SHA256_LEN])
{
	return jig_verifier_memo_known(ctx, SIG_MEMO_DIR, digest);
}

static void sig_remember(void *ctx, const unsigned char digest[JIG_SHA256_LEN])
{
	jig_verifier_memo_remember(ctx, SIG_MEMO_DIR, digest);
}

struct jig_signature_memo jig_verifier_signature_memo(struct jig_verifier *v)
{
	return (struct jig_signature_memo){.ctx = v, .known = sig_known, .remember = sig_remember};
}

void jig_verifier_finish(struct jig_verifier *v)
{
	uint64_t t = now_ns();
	if (v->dirty && v->writable && v->added) {
		char *text = NULL;
		size_t tlen = 0;
		FILE *f = open_memstream(&text, &tlen);
		if (f) {
			/* Sorted by path, this run's entries replacing stored ones. */
			size_t na = json_object_size(v->added), n = 0;
			struct jig_verifier_entry *all = calloc(v->n + na + 1, sizeof(*all));
			const char *k;
			json_t *val;
			json_object_foreach(all ? v->added : NULL, k, val) {
				all[n++] = (struct jig_verifier_entry){k, json_string_value(val)};
			}
			for (size_t i = 0; all && i < v->n; i++)
				if (!json_object_get(v->added, v->arr[i].path))
					all[n++] = v->arr[i];
			if (all)
				qsort(all, n, sizeof(*all), cmp_entry);
			fputs(CACHE_FORMAT "\n", f);
			for (size_t i = 0; all && i < n; i++)
				fprintf(f, "%.64s\t%s\t%s\n", all[i].val, all[i].val + JIG_SHA256_HEX, all[i].path);
			bool ok = all != NULL; /* out of memory: nothing written */
			free(all);
			if (fclose(f) == 0 && ok && text) {
				unsigned char mac[JIG_STATE_MAC_LEN];
				char line[MAC_LINE_LEN + 1];
				cache_mac(v, text, tlen, mac);
				memcpy(line, "mac ", 4);
				jig_hex(mac, JIG_STATE_MAC_LEN, line + 4);
				line[MAC_LINE_LEN - 1] = '\n';
				char *whole = realloc(text, tlen + MAC_LINE_LEN);
				if (whole) {
					text = whole;
					memcpy(text + tlen, line, MAC_LINE_LEN);
					/* A cache that cannot be written is only slower. */
					char dir[PATH_MAX], why[64];
					jig_autoclose int dfd = jig_state_cache_dir(dir, sizeof(dir), why, sizeof(why));
					struct jig_error ignored;
					if (dfd >= 0)
						jig_state_write(dfd, CACHE_FILE, text, tlen + MAC_LINE_LEN, &ignored);
				}
			}
			free(text);
		}
	}
	explicit_bzero(v->key, sizeof(v->key));
	json_decref(v->added);
	v->added = NULL;
	free(v->arr);
	v->arr = NULL;
	v->n = 0;
	free(v->buf);
	v->buf = NULL;
	if (v->memo.fd >= 0)
		close(v->memo.fd);
	v->memo.fd = -1;
	v->elapsed_ns += now_ns() - t;
}

json_t *jig_verifier_json(const struct jig_verifier *v)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:f}", "mode", names[v->mode], "files",
			      (json_int_t)(v->hashed + v->reused), "hashed", (json_int_t)v->hashed, "hashed_bytes",
			      (json_int_t)v->hashed_bytes, "reused", (json_int_t)v->reused, "elapsed_ms",
			      (double)(v->elapsed_ns / 1000) / 1000.0);
	if (o && v->note[0])
		json_object_set_new(o, "cache_ignored", json_string(v->note));
	return o;
}

int jig_snapshot_verify_all(const struct jig_snapshot *s, struct jig_verifier *v, struct jig_error *e)
{
	for (size_t i = 0; i < s->m.nfiles; i++) {
		if (v) {
			int r = jig_verifier_check_file(v, s, &s->m.files[i], e);
			if (r)
				return r;
			continue;
		}
		int fd = jig_snapshot_open_hashed(s, &s->m.files[i], e);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return jig_snapshot_check_unlisted(s, e);
}
