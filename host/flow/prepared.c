/* Prepared records in the project's store (moved from prepare/prepare.c:
 * the Plan reads them, the preparation writes them). */
#include "flow/prepared.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/limits.h"

void jig_prepared_record_name(char *out, size_t cap, const char *kind, const char *sha)
{
	snprintf(out, cap, "store/prepared/%s-%s.json", kind, sha);
}

json_t *jig_prepared_record_read(const struct jig_project *p, const char *rel)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct jig_error e = {0};
	if (jig_read_file_at(p->statefd, rel, JIG_PREPARED_RECORD_MAX, "prepared record", &buf, &len, NULL, &e) < 0)
		return NULL;
	json_t *doc = NULL;
	if (jig_json_parse_object(buf, len, "prepared record", &doc, &e) < 0)
		return NULL;
	const char *format = json_string_value(json_object_get(doc, "format"));
	const char *tree = json_string_value(json_object_get(doc, "tree"));
	char mrel[128];
	snprintf(mrel, sizeof(mrel), "store/packages/%s.json", tree ? tree : "");
	struct stat st;
	if (!format || strcmp(format, JIG_PREPARED_FORMAT) != 0 || !tree || strlen(tree) != JIG_SHA256_HEX - 1 ||
	    fstatat(p->statefd, mrel, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

json_t *jig_prepared_record(const struct jig_project *p, const struct jig_flow *f)
{
	char rel[160];
	jig_prepared_record_name(rel, sizeof(rel), "package", f->package_sha256);
	return jig_prepared_record_read(p, rel);
}
