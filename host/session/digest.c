/* The canonical per-launch policy and its digest (docs/session.md,
 * "Digest"). The same inputs give the same
 * bytes; the per-launch id (and so the TMPDIR path) is not an input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/internal.h"
#include "util/json.h"

static json_t *high_risk_json(unsigned bits)
{
	json_t *a = json_array();
	for (unsigned b = 1; b & JIG_SESSION_HR_ALL; b <<= 1)
		if (bits & b)
			json_array_append_new(a, json_string(jig_session_high_risk_name(b)));
	return a;
}

static json_t *policy_doc(const struct jig_session *s)
{
	json_t *extra = json_array();
	for (size_t i = 0; i < s->facts.n_extra; i++)
		json_array_append_new(extra, json_pack("{s:s,s:s}", "source", s->facts.extra[i].source, "target", s->facts.extra[i].target));
	json_t *argv = json_array();
	for (size_t i = 0; s->t.argv && s->t.argv[i]; i++)
		json_array_append_new(argv, json_string(s->t.argv[i]));
	json_array_extend(argv, s->argv);
	return json_pack("{s:s,s:O,s:o,s:{s:s,s:O,s:s,s:s,s:s,s:s,s:s},s:{s:s,s:O},s:{s:s,s:O,s:s},s:s,s:s,"
			 "s:{s:s,s:s,s:s},s:o,s:o,s:s}",
			 "format", JIG_SESSION_POLICY_FORMAT, "scope_policy", s->t.policy.doc, "argv", argv,
			 "repository", "id", s->w.repo_id, "entry", s->w.repo, "root", s->w.root, "worktree", s->w.worktree,
			 "common_dir", s->w.common_dir, "cwd", s->w.cwd, "context", s->w.context,
			 "client", "id", s->w.client_id, "entry", s->w.client,
			 "provider", "id", s->w.provider_id, "entry", s->w.provider, "endpoint",
			 json_string_value(json_object_get(s->w.provider, "endpoint")),
			 "map_sha256", s->map.sha256, "state_root", s->state_root,
			 "snapshot", "manifest_sha256", s->manifest_sha256, "launch_identity", s->identity, "catalog_sha256",
			 s->catalog_sha256, "high_risk", high_risk_json(s->high_risk), "extra_binds", extra, "mode",
			 s->w.rw ? "rw" : "ro");
}

int jig_session_build(struct jig_session *s, struct jig_error *e)
{
	jig_scope_template_free(&s->t);
	json_decref(s->doc);
	free(s->canonical);
	s->doc = NULL;
	s->canonical = NULL;
	int r = jig_session_compose(&s->cat, &s->facts, &s->t, e);
	if (r)
		return r;
	if (!(s->doc = policy_doc(s)) || !(s->canonical = jig_json_canonical(s->doc)))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	jig_sha256_hex(s->canonical, strlen(s->canonical), s->sha256);
	return 0;
}
