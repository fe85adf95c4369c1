#include "crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "cleanup.h"

struct jig_sha256_ctx {
	EVP_MD_CTX *md;
};

int jig_sha256(const void *data, size_t len, unsigned char out[JIG_SHA256_LEN])
{
	unsigned int n = 0;
	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != JIG_SHA256_LEN)
		return -1;
	return 0;
}

struct jig_sha256_ctx *jig_sha256_begin(void)
{
	struct jig_sha256_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->md = EVP_MD_CTX_new();
	if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c->md);
		free(c);
		return NULL;
	}
	return c;
}

int jig_sha256_update(struct jig_sha256_ctx *c, const void *data, size_t len)
{
	return EVP_DigestUpdate(c->md, data, len) == 1 ? 0 : -1;
}

int jig_sha256_end(struct jig_sha256_ctx *c, unsigned char out[JIG_SHA256_LEN])
{
	unsigned int n = 0;
	int ok = EVP_DigestFinal_ex(c->md, out, &n) == 1 && n == JIG_SHA256_LEN;
	EVP_MD_CTX_free(c->md);
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
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, JIG_ED25519_PUB_LEN);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = pk && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pk) == 1 &&
		  EVP_DigestVerify(md, sig, JIG_ED25519_SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	return ok;
}

static EVP_PKEY *load_private(const char *path, struct jig_error *e)
{
	jig_autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		jig_err(e, JIG_E_USAGE, "signing key %s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		jig_err(e, JIG_E_INTERNAL, "signing key %s: %s", path, strerror(errno));
		return NULL;
	}
	fd = -1;
	EVP_PKEY *pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pk || EVP_PKEY_id(pk) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pk);
		jig_err(e, JIG_E_USAGE, "signing key %s: not an Ed25519 private key in PEM; create one with 'jig-snapshot keygen'", path);
		return NULL;
	}
	return pk;
}

static int raw_public(EVP_PKEY *pk, unsigned char pub[JIG_ED25519_PUB_LEN])
{
	size_t n = JIG_ED25519_PUB_LEN;
	return EVP_PKEY_get_raw_public_key(pk, pub, &n) == 1 && n == JIG_ED25519_PUB_LEN ? 0 : -1;
}

int jig_ed25519_sign_with_file(const char *key_path, const void *msg, size_t len,
			       unsigned char sig[JIG_ED25519_SIG_LEN],
			       unsigned char pub[JIG_ED25519_PUB_LEN], struct jig_error *e)
{
	EVP_PKEY *pk = load_private(key_path, e);
	if (!pk)
		return -e->code;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t siglen = JIG_ED25519_SIG_LEN;
	int ok = md && EVP_DigestSignInit(md, NULL, NULL, NULL, pk) == 1 &&
		 EVP_DigestSign(md, sig, &siglen, msg, len) == 1 && siglen == JIG_ED25519_SIG_LEN &&
		 raw_public(pk, pub) == 0;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	if (!ok)
		return jig_err(e, JIG_E_INTERNAL, "signing with %s failed", key_path);
	return 0;
}

int jig_ed25519_keygen(const char *key_path, unsigned char pub[JIG_ED25519_PUB_LEN],
		       struct jig_error *e)
{
	EVP_PKEY *pk = NULL;
	EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	if (!kc || EVP_PKEY_keygen_init(kc) != 1 || EVP_PKEY_keygen(kc, &pk) != 1 ||
	    raw_public(pk, pub) < 0) {
		EVP_PKEY_CTX_free(kc);
		EVP_PKEY_free(pk);
		return jig_err(e, JIG_E_INTERNAL, "key generation failed");
	}
	EVP_PKEY_CTX_free(kc);
	/* O_EXCL: never overwrite an existing key. 0600: it is a secret. */
	int fd = open(key_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		EVP_PKEY_free(pk);
		return jig_err(e, JIG_E_USAGE, "key %s: cannot create: %s (it must not exist yet)",
			       key_path, strerror(errno));
	}
	FILE *f = fdopen(fd, "w");
	int ok = f && PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL) == 1;
	if (f)
		ok = (fclose(f) == 0) && ok;
	else
		close(fd);
	EVP_PKEY_free(pk);
	if (!ok) {
		unlink(key_path);
		return jig_err(e, JIG_E_INTERNAL, "key %s: cannot write", key_path);
	}
	return 0;
}
