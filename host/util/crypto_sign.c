/* Ed25519 signing and key generation for the distributor tool
 * (jig-snapshot), with OpenSSL so keys are ordinary PEM PKCS#8 files. jig
 * itself never links this. */
#include "crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "cleanup.h"

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
