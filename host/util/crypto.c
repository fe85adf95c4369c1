#include "crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"

/* libsodium: no configuration, no provider fetch, no dynamic engines;
 * verification and hashing cost what the arithmetic costs. (Signing is in
 * crypto_sign.c, with OpenSSL's PEM keys, for the distributor tool only.) */
static int ready(void)
{
	static int ok;
	if (!ok)
		ok = sodium_init() >= 0 ? 1 : -1;
	return ok;
}

struct jig_sha256_ctx {
	crypto_hash_sha256_state st;
};

int jig_sha256(const void *data, size_t len, unsigned char out[JIG_SHA256_LEN])
{
	if (ready() < 0)
		return -1;
	return crypto_hash_sha256(out, data, len) == 0 ? 0 : -1;
}

struct jig_sha256_ctx *jig_sha256_begin(void)
{
	struct jig_sha256_ctx *c = ready() > 0 ? calloc(1, sizeof(*c)) : NULL;
	if (c && crypto_hash_sha256_init(&c->st) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

int jig_sha256_update(struct jig_sha256_ctx *c, const void *data, size_t len)
{
	return crypto_hash_sha256_update(&c->st, data, len) == 0 ? 0 : -1;
}

int jig_sha256_end(struct jig_sha256_ctx *c, unsigned char out[JIG_SHA256_LEN])
{
	int ok = crypto_hash_sha256_final(&c->st, out) == 0;
	sodium_memzero(c, sizeof(*c));
	free(c);
	return ok ? 0 : -1;
}

int jig_sha256_fd(int fd, uint64_t *size_out, unsigned char out[JIG_SHA256_LEN])
{
	static const size_t bufsz = 1 << 16;
	jig_autofree unsigned char *buf = malloc(bufsz);
	struct jig_sha256_ctx *c = jig_sha256_begin();
	uint64_t off = 0;
	if (!buf || !c)
		goto fail;
	for (;;) {
		ssize_t n = pread(fd, buf, bufsz, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		if (jig_sha256_update(c, buf, (size_t)n) < 0)
			goto fail;
		off += (uint64_t)n;
	}
	if (size_out)
		*size_out = off;
	return jig_sha256_end(c, out);
fail:
	if (c) {
		unsigned char sink[JIG_SHA256_LEN];
		jig_sha256_end(c, sink);
	}
	return -1;
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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int jig_unhex(const char *in, unsigned char *out, size_t len)
{
	if (strlen(in) != 2 * len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
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
	return ready() > 0 && crypto_sign_verify_detached(sig, msg, len, pub) == 0;
}
