#include "loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/sandbox.h>
#include <jig/trace.h>

#include "../util/cleanup.h"
#include "verify.h"
#include "../util/note.h"
#include "../util/text.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* One pass over the module's bytes: each block is read into a private
 * buffer, hashed there and written from there into the memfd, so the bytes
 * hashed are exactly the bytes the memfd holds, whatever happens to the
 * source meanwhile. Fails on a short read; a source that has grown is read
 * only up to size (the digest decides). */
static int copy_hashing(int dst, int src, uint64_t size, unsigned char digest[JIG_SHA256_LEN])
{
	/* On the heap, not _Thread_local: a 64 KiB TLS block is allocated and
	 * zeroed for every thread jig starts (the stream relay of each scope). */
	enum { BUFSZ = 64 * 1024 };
	jig_autofree unsigned char *buf = malloc(BUFSZ);
	struct jig_sha256_ctx *h = buf ? jig_sha256_begin() : NULL;
	if (!h)
		return -1;
	uint64_t done = 0;
	int rc = 0;
	while (done < size && rc == 0) {
		size_t want = size - done < BUFSZ ? (size_t)(size - done) : BUFSZ;
		ssize_t n = read(src, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		jig_sha256_update(h, buf, (size_t)n);
		for (size_t w = 0; w < (size_t)n && rc == 0;) {
			ssize_t k = write(dst, buf + w, (size_t)n - w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				rc = -1;
			else
				w += (size_t)k;
		}
		done += (uint64_t)n;
	}
	jig_sha256_end(h, digest);
	return rc;
}

/* The file's bytes hashed from a read-only mapping (no copy). */
static int hash_in_place(int fd, uint64_t size, unsigned char digest[JIG_SHA256_LEN])
{
	if (size == 0)
		return jig_sha256("", 0, digest);
	void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	int r = jig_sha256(p, (size_t)size, digest);
	munmap(p, (size_t)size);
	return r;
}

static int mismatch(const struct jig_snapshot *s, const struct jig_manifest_module *mm, const unsigned char got[JIG_SHA256_LEN],
		    struct jig_error *e)
{
	char want[JIG_SHA256_HEX], have[JIG_SHA256_HEX];
	jig_hex(mm->file->sha256, JIG_SHA256_LEN, want);
	jig_hex(got, JIG_SHA256_LEN, have);
	return jig_err(e, JIG_E_INTEGRITY, "module %s (%s/%s): sha256 %s, expected %s from the signed manifest; refusing to load it",
		       mm->name, s->dirpath, mm->file->path, have, want);
}

int jig_module_verified_fd(const struct jig_snapshot *s, const struct jig_manifest_module *mm,
			   struct jig_error *e)
{
	const struct jig_manifest_file *f = mm->file;
	if (strcmp(mm->platform, jig_host_platform()) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: built for %s, this host is %s", mm->name,
			       mm->platform, jig_host_platform());
	/* Refuse an incompatible ABI before dlopen runs any of its code. */
	if (mm->abi_major != JIG_ABI_MAJOR || mm->abi_minor > JIG_ABI_MINOR)
		return jig_err(e, JIG_E_INTEGRITY,
			       "module %s: built for module ABI %u.%u, this jig speaks %u.%u; install a matching snapshot",
			       mm->name, mm->abi_major, mm->abi_minor, JIG_ABI_MAJOR, JIG_ABI_MINOR);
	if (f->size > JIG_MODULE_MAX_BYTES)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: %llu bytes, more than the %u allowed",
			       mm->name, (unsigned long long)f->size, JIG_MODULE_MAX_BYTES);
	jig_autoclose int fd = jig_snapshot_open_file(s, f, e);
	if (fd < 0)
		return fd;
	/* A file of root's that no one else may write cannot change under an
	 * unprivileged caller: its bytes are hashed where they are and loaded
	 * from the same inode, with no private copy (issue 14). Root's own
	 * commands, and snapshots an ordinary user installed (which that user
	 * could rewrite meanwhile), take the sealed copy below. */
	struct stat fst;
	if (geteuid() != 0 && fstat(fd, &fst) == 0 && fst.st_uid == 0 && !(fst.st_mode & 022) && S_ISREG(fst.st_mode) &&
	    (uint64_t)fst.st_size == f->size) {
		/* Such an inode, hashed before with this very fingerprint (its
		 * nanosecond mtime and ctime included), still holds those bytes:
		 * the command's verification cache may vouch for it (decision 85). */
		if (s->verifier && jig_verifier_known(s->verifier, s, f, &fst))
			return jig_steal_fd(&fd);
		unsigned char got[JIG_SHA256_LEN];
		if (hash_in_place(fd, f->size, got) < 0)
			return jig_err(e, JIG_E_INTEGRITY, "module %s: cannot read %llu bytes from %s/%s", mm->name,
				       (unsigned long long)f->size, s->dirpath, f->path);
		if (memcmp(got, f->sha256, JIG_SHA256_LEN) != 0)
			return mismatch(s, mm, got, e);
		if (s->verifier)
			jig_verifier_remember(s->verifier, s, f, &fst);
		return jig_steal_fd(&fd);
	}
	char label[96];
	snprintf(label, sizeof(label), "jig-module:%s", mm->name);
	jig_autoclose int mfd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (mfd < 0 && errno == EINVAL) /* kernels before 6.3 know no MFD_EXEC */
		mfd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return jig_err(e, JIG_E_HOST, "module %s: memfd_create: %s", mm->name, strerror(errno));
	unsigned char got[JIG_SHA256_LEN];
	if (copy_hashing(mfd, fd, f->size, got) < 0)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: cannot read %llu bytes from %s/%s",
			       mm->name, (unsigned long long)f->size, s->dirpath, f->path);
	/* Sealed before anything runs from it; only this process has written it. */
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return jig_err(e, JIG_E_HOST, "module %s: sealing the memfd: %s", mm->name, strerror(errno));
	struct stat st;
	if (fstat(mfd, &st) < 0 || (uint64_t)st.st_size != f->size)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: %s/%s changed size while being read",
			       mm->name, s->dirpath, f->path);
	if (memcmp(got, f->sha256, JIG_SHA256_LEN) != 0)
		return mismatch(s, mm, got, e);
	return jig_steal_fd(&mfd);
}

static void host_log(void *host, enum jig_log_level level, const char *message)
{
	(void)host;
	if (level <= JIG_LOG_WARN)
	{
		/* A module's words, not jig's: shown inert. */
		char *inert = jig_text_inert_dup(message ? message : "");
		jig_note("module: %s", inert ? inert : "(out of memory)");
		free(inert);
	}
}

static size_t kind_ops_min(uint32_t kind)
{
	switch (kind) {
	case JIG_KIND_SANDBOX:
		return offsetof(struct jig_sandbox_ops, reserved);
	default:
		return sizeof(uint32_t);
	}
}

static int check_descriptor(const struct jig_manifest_module *mm, uint32_t kind,
			    const struct jig_module *d, struct jig_error *e)
{
	if (d->magic != JIG_MODULE_MAGIC)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: descriptor magic is wrong (not a jig module)", mm->name);
	if (d->abi_major != JIG_ABI_MAJOR || d->abi_minor > JIG_ABI_MINOR)
		return jig_err(e, JIG_E_INTEGRITY,
			       "module %s: descriptor says module ABI %u.%u, this jig speaks %u.%u",
			       mm->name, d->abi_major, d->abi_minor, JIG_ABI_MAJOR, JIG_ABI_MINOR);
	if (d->abi_major != mm->abi_major || d->abi_minor != mm->abi_minor)
		return jig_err(e, JIG_E_INTEGRITY,
			       "module %s: descriptor says ABI %u.%u, manifest says %u.%u", mm->name,
			       d->abi_major, d->abi_minor, mm->abi_major, mm->abi_minor);
	if (d->struct_size < offsetof(struct jig_module, reserved))
		return jig_err(e, JIG_E_INTEGRITY, "module %s: descriptor struct_size %u is too small",
			       mm->name, d->struct_size);
	if (!d->name || strcmp(d->name, mm->name) != 0)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: descriptor name is \"%s\", manifest says \"%s\"",
			       mm->name, d->name ? d->name : "(none)", mm->name);
	if (d->kind != mm->kind)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: descriptor kind is %s, manifest says %s",
			       mm->name, jig_kind_name(d->kind), jig_kind_name(mm->kind));
	if (kind && d->kind != kind)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: is a %s module, a %s module is needed",
			       mm->name, jig_kind_name(d->kind), jig_kind_name(kind));
	if (!d->ops || d->ops_size < kind_ops_min(d->kind) ||
	    *(const uint32_t *)d->ops < kind_ops_min(d->kind))
		return jig_err(e, JIG_E_INTEGRITY, "module %s: its %s ops table is missing or too small",
			       mm->name, jig_kind_name(d->kind));
	return 0;
}

int jig_module_load_fd(const struct jig_snapshot *s, const struct jig_manifest_module *mm,
		       int memfd, struct jig_module_handle *h, struct jig_error *e)
{
	(void)s;
	jig_autoclose int fd = memfd;
	memset(h, 0, sizeof(*h));
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	h->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h->dl)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: dlopen failed: %s", mm->name, dlerror());
	const struct jig_module *d = dlsym(h->dl, JIG_MODULE_ENTRY_SYMBOL);
	int r;
	if (!d) {
		r = jig_err(e, JIG_E_INTEGRITY, "module %s: exports no %s descriptor", mm->name,
			    JIG_MODULE_ENTRY_SYMBOL);
		goto fail;
	}
	if ((r = check_descriptor(mm, mm->kind, d, e)) < 0)
		goto fail;
	h->desc = d;
	h->entry = mm;
	memcpy(h->sha256, mm->file->sha256, JIG_SHA256_LEN);
	h->api = (struct jig_host_api){
		.struct_size = sizeof(struct jig_host_api),
		.abi_major = JIG_ABI_MAJOR,
		.abi_minor = JIG_ABI_MINOR,
		.host = h,
		.log = host_log,
	};
	if (d->init && d->init(&h->api, &h->state) != JIG_MOD_OK) {
		r = jig_err(e, JIG_E_INTERNAL, "module %s: init failed", mm->name);
		goto fail;
	}
	return 0;
fail:
	dlclose(h->dl);
	memset(h, 0, sizeof(*h));
	return r;
}

int jig_module_load(const struct jig_snapshot *s, const char *name, uint32_t kind,
		    struct jig_module_handle *h, struct jig_error *e)
{
	JIG_TRACE_POINT("module: load called");
	const struct jig_manifest_module *mm = jig_manifest_find_module(&s->m, name);
	if (!mm)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: not in snapshot %s; install a snapshot that has it",
			       name, s->m.id);
	if (kind && mm->kind != kind)
		return jig_err(e, JIG_E_INTEGRITY, "module %s: manifest kind is %s, a %s module is needed",
			       name, jig_kind_name(mm->kind), jig_kind_name(kind));
	int fd = jig_module_verified_fd(s, mm, e);
	if (fd < 0)
		return fd;
	JIG_TRACE_POINT("module: verified");
	return jig_module_load_fd(s, mm, fd, h, e);
}

void jig_module_unload(struct jig_module_handle *h)
{
	if (!h->dl)
		return;
	if (h->desc && h->desc->fini)
		h->desc->fini(h->state);
	dlclose(h->dl);
	memset(h, 0, sizeof(*h));
}
