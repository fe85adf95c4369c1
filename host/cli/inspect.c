/* jig inspect PACKET: show a published packet after checking its files
 * against its record (every listed file present with its size and SHA-256,
 * nothing unlisted, no links or special files). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "../run/record.h"
#include "commands.h"

int jig_cmd_inspect(int argc, char **argv)
{
	const char *packet = NULL, *verification = NULL;
	int json = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--verification") == 0 && i + 1 < argc)
			verification = argv[++i];
		else if (!packet && argv[i][0] != '-')
			packet = argv[i];
		else {
			return jig_cli_usage(argc, argv, "unknown argument \"%s\"; usage: jig inspect PACKET [--json] [--verification cached|strict|fast]", argv[i]);
		}
	}
	if (!packet) {
		return jig_cli_usage(argc, argv, "usage: jig inspect PACKET [--json] [--verification cached|strict|fast]");
	}
	struct jig_error e = {0};
	struct jig_verifier v;
	if (jig_verifier_init(&v, verification, JIG_VERIFY_CACHED, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	/* The installed tools first: an inspection also checks them. */
	struct jig_snapshot s;
	int sr = jig_cli_open_snapshot(&s, json);
	if (sr)
		return sr;
	sr = jig_cli_verify_installation(&s, &v, &e);
	jig_verifier_finish(&v);
	jig_snapshot_close(&s);
	if (sr < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	jig_autoclose int pfd = open(packet, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		jig_err(&e, JIG_E_USAGE, "%s: %s", packet, strerror(errno));
		jig_cli_fail(json, &e);
		return e.code;
	}
	json_t *rec = NULL;
	int r = jig_record_load(pfd, packet, &rec, &e);
	if (!r)
		r = jig_record_verify_files(pfd, rec, &e);
	if (r) {
		char msg[sizeof(e.msg)];
		snprintf(msg, sizeof(msg), "%s", e.msg);
		jig_err(&e, JIG_E_INTEGRITY, "%s: %s", packet, msg);
		jig_cli_fail(json, &e);
		json_decref(rec);
		return e.code;
	}
	if (json) {
		json_t *doc = json_pack("{s:s,s:b,s:O,s:o}", "schema", "jig-inspect/1", "verified", 1, "record", rec,
					"verification", jig_verifier_json(&v));
		jig_cli_print_json(doc);
		json_decref(doc);
	} else
		jig_record_print(stdout, packet, rec);
	json_decref(rec);
	return 0;
}
