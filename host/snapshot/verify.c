/* Installation verification modes and the operator-private digest cache. */
#include "snapshot/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/crypto.h"

#define CACHE_FILE "verification.json"
#define CACHE_FORMAT "jig-verification-cache/1"
#define CACHE_MAX_BYTES (64u << 20)
#define CACHE_MAX_ENTRIES 100000

static const char *const names[] = {"cached", "strict", "fast"};

const char *jig_verification_name(enum jig_verification m)
{
	return names[m];
}

int jig_verification_select(const char *arg, enum jig_verification *out, struct jig_error *e)
{
	const char *v = arg ? arg : getenv("JIG_VERIFICATION");
	*out = JIG_VERIFY_CACHED;
	if (!v || (!arg && !v[0]))
		return 0;
	for (int i = 0; i < 3; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = (enum jig_verification)i;
			return 0;
		}
	return jig_err(e, JIG_E_USAGE, "%s \"%.40s\" is not a verification mode; use cached, strict or fast",
		       arg ? "--verification" : "JIG_VERIFICATION", v);
}

void jig_verifier_init(struct jig_verifier *v, enum jig_verification mode)
{
	memset(v, 0, sizeof(*v));
	v->mode = mode;
}

static void ignore(struct jig_verifier *v, const char *fmt, const char *detail)
{
	snprintf(v->note, sizeof(v->note), fmt, v->dir, detail);
	json_decref(v->entries);
	v->entries = json_object();
	v->dirty = v->writable; /* replace the bad file with a fresh one */
}

/* The cache directory must be the operator's and 0700; then the file, which
 * must be the operator's, 0600 at most, regular, not a link, and valid. */
static void load(struct jig_verifier *v)
{
	v->loaded = true;
	v->entries = json_object();
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char parent[PATH_MAX];
	if (x && x[0] == '/')
		snprintf(parent, sizeof(parent), "%s", x);
	else if (home && home[0] == '/')
		snprintf(parent, sizeof(parent), "%s/.cache", home);
	else {
		snprintf(v->note, sizeof(v->note), "no HOME: no verification cache");
		return;
	}
	if (snprintf(v->dir, sizeof(v->dir), "%s/jig", parent) >= (int)sizeof(v->dir))
		return;
	mkdir(parent, 0700);
	mkdir(v->dir, 0700);
	jig_autoclose int dfd = open(v->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(v->note, sizeof(v->note), "cache directory %s is not yours, not 0700 or a symbolic link; not used", v->dir);
		return;
	}
	v->writable = true;
	jig_autoclose int fd = openat(dfd, CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			v->dirty = true;
		else
			ignore(v, "%s/" CACHE_FILE " %s; ignored",
			       errno == ELOOP ? "is a symbolic link" : errno == EACCES ? "is not yours (unreadable)" : strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ignore(v, "%s/" CACHE_FILE " %s; ignored", "is not a regular file");
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return ignore(v, "%s/" CACHE_FILE " %s; ignored", "is not yours or is readable or writable by others");
	if (st.st_size > CACHE_MAX_BYTES)
		return ignore(v, "%s/" CACHE_FILE " %s; ignored", "is too large");
	json_error_t je;
	json_t *doc = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
	json_t *entries = json_object_get(doc, "entries");
	const char *format = json_string_value(json_object_get(doc, "format"));
	bool ok = json_is_object(doc) && json_object_size(doc) == 2 && format && strcmp(format, CACHE_FORMAT) == 0 &&
		  json_is_object(entries) && json_object_size(entries) <= CACHE_MAX_ENTRIES;
	const char *k;
	json_t *ent;
	json_object_foreach(ok ? entries : NULL, k, ent) {
		const char *meta = json_string_value(json_object_get(ent, "meta"));
		const char *sha = json_string_value(json_object_get(ent, "sha256"));
		ok &= k[0] == '/' && json_object_size(ent) == 2 && meta && sha && strlen(sha) == JIG_SHA256_HEX - 1 &&
		      strspn(sha, "0123456789abcdef") == JIG_SHA256_HEX - 1;
	}
	if (!ok) {
		json_decref(doc);
		return ignore(v, "%s/" CACHE_FILE " %s; ignored", "is truncated, corrupted or of another version");
	}
	json_decref(v->entries);
	v->entries = json_incref(entries);
	json_decref(doc);
}

/* The file's identity and metadata, as one comparable string. */
static void fingerprint(const struct stat *st, char *out, size_t cap)
{
	snprintf(out, cap, "dev=%llu ino=%llu mode=%o uid=%u size=%lld mtime=%lld.%09ld ctime=%lld.%09ld",
		 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino, (unsigned)st->st_mode,
		 (unsigned)st->st_uid, (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		 (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

int jig_verifier_open(struct jig_verifier *v, const struct jig_snapshot *s, const char *path, struct jig_error *e)
{
	for (size_t i = 0; i < s->m.nfiles; i++)
		if (strcmp(s->m.files[i].path, path) == 0)
			return jig_verifier_open_file(v, s, &s->m.files[i], e);
	return jig_err(e, JIG_E_INTEGRITY, "snapshot %s has no %s; reinstall jig", s->m.id, path);
}

int jig_verifier_open_file(struct jig_verifier *v, const struct jig_snapshot *s, const struct jig_manifest_file *f,
			   struct jig_error *e)
{
	int fd = jig_snapshot_open_file(s, f, e); /* stat before anything is read */
	if (fd < 0)
		return fd;
	char want[JIG_SHA256_HEX], have[JIG_SHA256_HEX] = "", canon[PATH_MAX + 300], meta[256];
	jig_hex(f->sha256, JIG_SHA256_LEN, want);
	struct stat st;
	if (!v->root[0] && !realpath(s->dirpath, v->root))
		snprintf(v->root, sizeof(v->root), "%s", s->dirpath);
	snprintf(canon, sizeof(canon), "%s/%s", v->root, f->path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return jig_err(e, JIG_E_INTERNAL, "%s: fstat: %s", canon, strerror(errno));
	}
	fingerprint(&st, meta, sizeof(meta));
	if (v->mode != JIG_VERIFY_STRICT) {
		if (!v->loaded)
			load(v);
		json_t *ent = json_object_get(v->entries, canon);
		const char *m = json_string_value(json_object_get(ent, "meta"));
		if (ent && (v->mode == JIG_VERIFY_FAST || (m && strcmp(m, meta) == 0))) {
			snprintf(have, sizeof(have), "%s", json_string_value(json_object_get(ent, "sha256")));
			v->reused++;
		}
	}
	if (!have[0]) {
		unsigned char got[JIG_SHA256_LEN];
		uint64_t size;
		if (jig_sha256_fd(fd, &size, got) < 0) {
			close(fd);
			return jig_err(e, JIG_E_INTERNAL, "%s: read: %s", canon, strerror(errno));
		}
		jig_hex(got, JIG_SHA256_LEN, have);
		v->hashed++;
		v->hashed_bytes += size;
		if (v->mode != JIG_VERIFY_STRICT && v->entries &&
		    (json_object_get(v->entries, canon) || json_object_size(v->entries) < CACHE_MAX_ENTRIES)) {
			json_object_set_new(v->entries, canon, json_pack("{s:s,s:s}", "meta", meta, "sha256", have));
			v->dirty = v->writable;
		}
	}
	if (strcmp(have, want) != 0) {
		close(fd);
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s: sha256 %s, manifest lists %s; the installed file was altered (verification %s), reinstall the snapshot",
			       canon, have, want, names[v->mode]);
	}
	return fd;
}

int jig_verifier_check(struct jig_verifier *v, const struct jig_snapshot *s, const char *const *paths, size_t n,
		       struct jig_error *e)
{
	for (size_t i = 0; i < n; i++) {
		int fd = jig_verifier_open(v, s, paths[i], e);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}

void jig_verifier_finish(struct jig_verifier *v)
{
	if (v->dirty && v->writable && v->entries) {
		json_t *doc = json_pack("{s:s,s:O}", "format", CACHE_FORMAT, "entries", v->entries);
		char *txt = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		char tmp[PATH_MAX + 64], dst[PATH_MAX + 32];
		snprintf(tmp, sizeof(tmp), "%s/." CACHE_FILE ".%d.tmp", v->dir, (int)getpid());
		snprintf(dst, sizeof(dst), "%s/" CACHE_FILE, v->dir);
		int fd = txt ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
		if (fd >= 0) {
			size_t len = strlen(txt);
			bool ok = write(fd, txt, len) == (ssize_t)len;
			ok &= close(fd) == 0;
			if (!ok || rename(tmp, dst) < 0)
				unlink(tmp); /* a cache that cannot be written is only slower */
		}
		free(txt);
		json_decref(doc);
	}
	json_decref(v->entries);
	v->entries = NULL;
}

json_t *jig_verifier_json(const struct jig_verifier *v)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I}", "mode", names[v->mode], "hashed", (json_int_t)v->hashed,
			      "hashed_bytes", (json_int_t)v->hashed_bytes, "reused", (json_int_t)v->reused);
	if (o && v->note[0])
		json_object_set_new(o, "cache_ignored", json_string(v->note));
	return o;
}
