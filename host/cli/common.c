#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "../snapshot/trust.h"
#include "commands.h"

const char *jig_cli_key_summary(void)
{
	for (size_t i = 0; i < jig_trust_anchor_count; i++)
		if (jig_trust_anchors[i].development)
			return "trusts a DEVELOPMENT key: local build, not a distributor's";
	return "trusts distributor keys only";
}

void jig_cli_fail(int json, const struct jig_error *e)
{
	if (json) {
		json_t *doc = json_pack("{s:s,s:i,s:s}", "schema", "jig-error/1", "exit", e->code,
					"error", e->msg);
		jig_cli_print_json(doc);
		json_decref(doc);
	}
	fprintf(stderr, "jig: %s\n", e->msg);
}

int jig_cli_open_snapshot(struct jig_snapshot *s, int json)
{
	char libdir[PATH_MAX];
	struct jig_error e = {0};
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) < 0 ||
	    jig_snapshot_open_installed(s, libdir, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	return 0;
}

json_t *jig_cli_snapshot_json(const struct jig_snapshot *s)
{
	char sha[JIG_SHA256_HEX];
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, sha);
	return json_pack("{s:s,s:I,s:s,s:s,s:s,s:b,s:s}", "id", s->m.id, "sequence",
			 (json_int_t)s->m.sequence, "platform", s->m.platform, "manifest_sha256", sha,
			 "key_id", s->keyid, "development_key", s->anchor->development, "path",
			 s->dirpath);
}

void jig_cli_print_json(json_t *doc)
{
	char *out = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (out) {
		puts(out);
		free(out);
	}
}
