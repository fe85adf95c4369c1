#include "identity.h"

#include <stdlib.h>
#include <string.h>

#include "../util/json.h"

int jig_launch_identity(const struct jig_snapshot *s, const char *const *paths, size_t npaths,
			char out_hex[JIG_SHA256_HEX], struct jig_error *e)
{
	char hex[JIG_SHA256_HEX];
	json_t *files = json_object();
	json_t *doc = json_object();
	int r = 0;
	if (!files || !doc) {
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < npaths; i++) {
		const struct jig_manifest_file *f = jig_manifest_find_file(&s->m, paths[i]);
		if (!f) {
			r = jig_err(e, JIG_E_INTEGRITY,
				    "launch identity: \"%s\" is not a file of snapshot %s", paths[i], s->m.id);
			goto out;
		}
		jig_hex(f->sha256, JIG_SHA256_LEN, hex);
		json_object_set_new(files, f->path, json_string(hex));
	}
	jig_hex(s->manifest_sha256, JIG_SHA256_LEN, hex);
	json_object_set_new(doc, "format", json_string(JIG_IDENTITY_FORMAT));
	json_object_set_new(doc, "snapshot", json_string(s->m.id));
	json_object_set_new(doc, "sequence", json_integer((json_int_t)s->m.sequence));
	json_object_set_new(doc, "manifest_sha256", json_string(hex));
	json_object_set(doc, "files", files);
	char *canon = jig_json_canonical(doc);
	unsigned char id[JIG_SHA256_LEN];
	if (!canon || jig_sha256(canon, strlen(canon), id) < 0) {
		free(canon);
		r = jig_err(e, JIG_E_INTERNAL, "launch identity: serialisation failed");
		goto out;
	}
	free(canon);
	jig_hex(id, JIG_SHA256_LEN, out_hex);
out:
	json_decref(files);
	json_decref(doc);
	return r;
}
