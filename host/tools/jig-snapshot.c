/* jig-snapshot: the distributor's tool. Creates, signs, verifies and
 * installs snapshots. Trust anchors are this build's, as in jig itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jig/module.h>

#include "../snapshot/install.h"
#include "../snapshot/manifest.h"
#include "../snapshot/snapshot.h"
#include "../snapshot/verify.h"
#include "../util/crypto.h"
#include "../util/note.h"
#include "../util/fileio.h"

static const char usage[] =
	"usage: jig-snapshot <command> [options]\n"
	"  keygen --out KEY             new Ed25519 key: KEY (private, 0600) and KEY.pub (hex)\n"
	"  pubkey --key KEY             print KEY's public key (hex) and key id\n"
	"  create --dir DIR --id ID --sequence N [--platform P]\n"
	"         --module NAME:KIND:PATH[:MAJOR.MINOR]...\n"
	"                               write DIR/manifest.json listing every file in DIR\n"
	"  sign --dir DIR --key KEY     write DIR/manifest.sig\n"
	"  verify --dir DIR             check DIR's signature (against this build's keys) and files\n"
	"  install --dir DIR --prefix PREFIX\n"
	"                               verify, stage, verify the copy, record, switch current\n"
	"exit status: 0 ok, 1 internal error, 2 usage, 4 refused\n";

static const char *opt(int argc, char **argv, const char *name)
{
	for (int i = 2; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

static int need(const char *v, const char *name)
{
	if (!v) {
		fprintf(stderr, "jig-snapshot: missing %s; see 'jig-snapshot help'\n", name);
		return 0;
	}
	return 1;
}

static int fail(const struct jig_error *e)
{
	fprintf(stderr, "jig-snapshot: %s\n", e->msg);
	return e->code;
}

static int cmd_create(int argc, char **argv)
{
	const char *dir = opt(argc, argv, "--dir"), *id = opt(argc, argv, "--id");
	const char *seq = opt(argc, argv, "--sequence"), *plat = opt(argc, argv, "--platform");
	if (!need(dir, "--dir") || !need(id, "--id") || !need(seq, "--sequence"))
		return 2;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(seq, &end, 10);
	if (errno || *end || n == 0 || n > JIG_SEQUENCE_MAX || seq[0] == '-') {
		fprintf(stderr, "jig-snapshot: --sequence \"%s\" must be an integer from 1 to %llu\n", seq,
			(unsigned long long)JIG_SEQUENCE_MAX);
		return 2;
	}
	struct jig_create_module mods[JIG_MANIFEST_MAX_MODULES];
	char *specs[JIG_MANIFEST_MAX_MODULES];
	size_t nm = 0;
	int r = 2;
	for (int i = 2; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--module") != 0)
			continue;
		if (nm == JIG_MANIFEST_MAX_MODULES) {
			fprintf(stderr, "jig-snapshot: too many --module\n");
			goto out;
		}
		char *s = specs[nm] = strdup(argv[i + 1]);
		char *name = strtok(s, ":"), *kind = strtok(NULL, ":"), *path = strtok(NULL, ":");
		char *abi = strtok(NULL, ":");
		unsigned maj = JIG_ABI_MAJOR, min = JIG_ABI_MINOR;
		nm++;
		if (!name || !kind || !path || (abi && sscanf(abi, "%u.%u", &maj, &min) != 2)) {
			fprintf(stderr, "jig-snapshot: --module \"%s\" is not NAME:KIND:PATH[:MAJOR.MINOR]\n", argv[i + 1]);
			goto out;
		}
		mods[nm - 1] = (struct jig_create_module){name, kind, path, maj, min};
	}
	struct jig_error e = {0};
	r = jig_snapshot_create(dir, id, n, plat ? plat : jig_host_platform(), mods, nm, &e) < 0
		    ? fail(&e) : 0;
out:
	for (size_t i = 0; i < nm; i++)
		free(specs[i]);
	return r;
}

static int cmd_verify(const char *dir)
{
	struct jig_snapshot s;
	struct jig_error e = {0};
	if (jig_snapshot_open_dir(&s, dir, &e) < 0)
		return fail(&e);
	int r = jig_snapshot_verify_all(&s, NULL, &e);
	if (r == 0)
		printf("%s: snapshot %s sequence %llu, %zu files, %zu modules, signed by key %s%s\n", dir,
		       s.m.id, (unsigned long long)s.m.sequence, s.m.nfiles, s.m.nmodules, s.keyid,
		       s.anchor->development ? " (DEVELOPMENT key)" : "");
	jig_snapshot_close(&s);
	return r < 0 ? fail(&e) : 0;
}

int main(int argc, char **argv)
{
	jig_note_to(stderr); /* the rooms' notes (util/note.h), as jig's own command line sends them */
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	struct jig_error e = {0};
	if (!strcmp(cmd, "keygen")) {
		const char *out = opt(argc, argv, "--out");
		if (!need(out, "--out"))
			return 2;
		unsigned char pub[JIG_ED25519_PUB_LEN];
		char hex[65], id[JIG_KEYID_HEX], pubpath[4096];
		if (jig_ed25519_keygen(out, pub, &e) < 0)
			return fail(&e);
		jig_hex(pub, sizeof(pub), hex);
		jig_keyid(pub, id);
		snprintf(pubpath, sizeof(pubpath), "%s.pub", out);
		FILE *f = fopen(pubpath, "wx");
		if (!f || fprintf(f, "%s\n", hex) < 0 || fclose(f) != 0) {
			fprintf(stderr, "jig-snapshot: %s: cannot write: %s\n", pubpath, strerror(errno));
			return 1;
		}
		printf("key id %s\n", id);
		return 0;
	}
	if (!strcmp(cmd, "pubkey")) {
		const char *key = opt(argc, argv, "--key");
		if (!need(key, "--key"))
			return 2;
		unsigned char sig[JIG_ED25519_SIG_LEN], pub[JIG_ED25519_PUB_LEN];
		char hex[65], id[JIG_KEYID_HEX];
		if (jig_ed25519_sign_with_file(key, "", 0, sig, pub, &e) < 0)
			return fail(&e);
		jig_hex(pub, sizeof(pub), hex);
		jig_keyid(pub, id);
		printf("%s %s\n", hex, id);
		return 0;
	}
	if (!strcmp(cmd, "create"))
		return cmd_create(argc, argv);
	if (!strcmp(cmd, "sign")) {
		const char *dir = opt(argc, argv, "--dir"), *key = opt(argc, argv, "--key");
		char id[JIG_KEYID_HEX];
		if (!need(dir, "--dir") || !need(key, "--key"))
			return 2;
		if (jig_snapshot_sign(dir, key, id, &e) < 0)
			return fail(&e);
		printf("signed %s/manifest.json with key %s\n", dir, id);
		return 0;
	}
	if (!strcmp(cmd, "verify")) {
		const char *dir = opt(argc, argv, "--dir");
		return need(dir, "--dir") ? cmd_verify(dir) : 2;
	}
	if (!strcmp(cmd, "install")) {
		const char *dir = opt(argc, argv, "--dir"), *prefix = opt(argc, argv, "--prefix");
		if (!need(dir, "--dir") || !need(prefix, "--prefix"))
			return 2;
		if (jig_snapshot_install(dir, prefix, &e) < 0)
			return fail(&e);
		printf("installed %s into %s/lib/jig\n", dir, prefix);
		return 0;
	}
	fprintf(stderr, "jig-snapshot: unknown command \"%s\"; see 'jig-snapshot help'\n", cmd);
	return 2;
}
