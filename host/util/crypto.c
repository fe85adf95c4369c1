#include "crypto.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/eddsa.h>
#include <nettle/sha2.h>

#include "cleanup.h"

/* Nettle (GnuTLS's crypto library): no configuration, no provider fetch, no
 * dynamic engines and no initialisation; SHA-256 uses the CPU's SHA
 * instructions where present. (Signing is in crypto_sign.c, with OpenSSL's
 * PEM keys, for the distributor tool only.) */
struct jig_sha256_ctx {
	struct sha256_ctx st;
};

int jig_sha256(const void *data, size_t len, unsigned char out[JIG_SHA256_LEN])
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, JIG_SHA256_LEN, out);
	return 0;
}

void jig_sha256_hex(const void *data, size_t len, char out[JIG_SHA256_HEX])
{
	unsigned char d[JIG_SHA256_LEN];
	jig_sha256(data, len, d);
	jig_hex(d, JIG_SHA256_LEN, out);
}

struct jig_sha256_ctx *jig_sha256_begin(void)
{
	struct jig_sha256_ctx *c = calloc(1, sizeof(*c));
	if (c)
		sha256_init(&c->st);
	return c;
}

int jig_sha256_update(struct jig_sha256_ctx *c, const void *data, size_t len)
{
	sha256_update(&c->st, len, data);
	return 0;
}

int jig_sha256_end(struct jig_sha256_ctx *c, unsigned char out[JIG_SHA256_LEN])
{
	sha256_digest(&c->st, JIG_SHA256_LEN, out);
	free(c);
	return 0;
}

/* Big files (Bun, a strict verification): OpenSSL's SHA-256 is ~25% faster
 * per byte on these CPUs (1.8 vs 1.4 GB/s), but loading libcrypto costs
 * every command ~2 ms, so it is loaded only when a file of 8 MiB or more is
 * hashed, through its low-level SHA256_* functions (no provider set-up).
 * Without it, Nettle hashes (docs/decisions.md 54). */
#define BIG_FILE (8u << 20)
static struct {
	int tried;
	int (*init)(void *);
	int (*update)(void *, const void *, size_t);
	int (*final)(unsigned char *, void *);
} ossl;

static bool ossl_sha256(void)
{
	if (!ossl.tried) {
		ossl.tried = 1;
		void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*(void **)&ossl.init = dlsym(h, "SHA256_Init");
			*(void **)&ossl.update = dlsym(h, "SHA256_Update");
			*(void **)&ossl.final = dlsym(h, "SHA256_Final");
			if (!ossl.init || !ossl.update || !ossl.final)
				ossl.init = NULL;
		}
	}
	return ossl.init != NULL;
}

/* Files (installed tools, verification), streamed with a 1 MiB buffer; the
 * kernel is told to read ahead. */
int jig_sha256_fd(int fd, uint64_t *size_out, unsigned char out[JIG_SHA256_LEN])
{
	static const size_t bufsz = 1 << 20;
	jig_autofree unsigned char *buf = malloc(bufsz);
	if (!buf)
		return -1;
	struct stat st;
	/* OpenSSL's SHA256_CTX is 112 bytes; room to spare, aligned. */
	_Alignas(16) unsigned char octx[256];
	bool big = fstat(fd, &st) == 0 && (uint64_t)st.st_size >= BIG_FILE && ossl_sha256() && ossl.init(octx) == 1;
	struct sha256_ctx c;
	sha256_init(&c);
	uint64_t off = 0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		ssize_t n = pread(fd, buf, bufsz, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		if (big)
			ossl.update(octx, buf, (size_t)n);
		else
			sha256_update(&c, (size_t)n, buf);
		off += (uint64_t)n;
	}
	if (big)
		ossl.final(out, octx);
	else
		sha256_digest(&c, JIG_SHA256_LEN, out);
	if (size_out)
		*size_out = off;
	return 0;
}

void jig_hex(const unsigned char *in, size_t len, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * len] = '\0';
}

/* Lowercase hex digits only: the digit's value + 1; 0 for any other byte. */
static const unsigned char hexval1[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,	['6'] = 7,  ['7'] = 8,
	['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

int jig_unhex(const char *in, unsigned char *out, size_t len)
{
	if (strnlen(in, 2 * len + 1) != 2 * len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned hi = hexval1[(unsigned char)in[2 * i]], lo = hexval1[(unsigned char)in[2 * i + 1]];
		if (!hi || !lo)
			return -1;
		out[i] = (unsigned char)((hi - 1) << 4 | (lo - 1));
	}
	return 0;
}

void jig_keyid(const unsigned char pub[JIG_ED25519_PUB_LEN], char out[JIG_KEYID_HEX])
{
	unsigned char h[JIG_SHA256_LEN];
	jig_sha256(pub, JIG_ED25519_PUB_LEN, h);
	jig_hex(h, 8, out);
}

bool jig_ed25519_verify(const unsigned char pub[JIG_ED25519_PUB_LEN], const void *msg, size_t len,
			const unsigned char sig[JIG_ED25519_SIG_LEN])
{
	return ed25519_sha512_verify(pub, len, msg, sig) == 1;
}
