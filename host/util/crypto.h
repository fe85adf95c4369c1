/* SHA-256 and Ed25519 verification (Nettle), signing (OpenSSL, distributor
 * tool only: crypto_sign.c), plus hex. */
#ifndef JIG_UTIL_CRYPTO_H
#define JIG_UTIL_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JIG_SHA256_LEN 32
#define JIG_SHA256_HEX 65 /* 64 hex digits + NUL */
#define JIG_ED25519_PUB_LEN 32
#define JIG_ED25519_SIG_LEN 64
#define JIG_KEYID_HEX 17 /* 16 hex digits + NUL: first 8 bytes of SHA-256(pub) */

struct jig_sha256_ctx;

int jig_sha256(const void *data, size_t len, unsigned char out[JIG_SHA256_LEN]);
struct jig_sha256_ctx *jig_sha256_begin(void);
int jig_sha256_update(struct jig_sha256_ctx *c, const void *data, size_t len);
/* Finishes and frees c (also on failure). */
int jig_sha256_end(struct jig_sha256_ctx *c, unsigned char out[JIG_SHA256_LEN]);
/* Hashes everything readable from fd from offset 0 (pread: offset unchanged). */
int jig_sha256_fd(int fd, uint64_t *size_out, unsigned char out[JIG_SHA256_LEN]);

void jig_hex(const unsigned char *in, size_t len, char *out /* 2*len+1 */);
/* The SHA-256 of data as lowercase hex (64 digits and a NUL). */
void jig_sha256_hex(const void *data, size_t len, char out[JIG_SHA256_HEX]);
/* Strict lowercase hex of exactly len bytes. Returns 0 or -1. */
int jig_unhex(const char *in, unsigned char *out, size_t len);

void jig_keyid(const unsigned char pub[JIG_ED25519_PUB_LEN], char out[JIG_KEYID_HEX]);

/* true iff sig is a valid Ed25519 signature by pub over msg. */
bool jig_ed25519_verify(const unsigned char pub[JIG_ED25519_PUB_LEN], const void *msg, size_t len,
			const unsigned char sig[JIG_ED25519_SIG_LEN]);

/* Private key file (PEM PKCS#8, as written by jig-snapshot keygen or
 * `openssl genpkey -algorithm ed25519`). */
int jig_ed25519_sign_with_file(const char *key_path, const void *msg, size_t len,
			       unsigned char sig[JIG_ED25519_SIG_LEN],
			       unsigned char pub[JIG_ED25519_PUB_LEN], struct jig_error *e);
int jig_ed25519_keygen(const char *key_path, unsigned char pub[JIG_ED25519_PUB_LEN],
		       struct jig_error *e);

#endif
