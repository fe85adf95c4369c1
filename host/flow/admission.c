/* Admission: the operator's decision on a Plan, stored and read back, and
 * the installation a Run is admitted against, verified. */
#include "flow/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jig/acp.h>
#include <jig/http.h>
#include <jig/module.h>
#include <jig/trace.h>

#include "config/agent_config.h"
#include "policy/grant_url.h"
#include "flow/recipe.h"
#include "flow/timeout.h"
#include "flow/binding.h"
#include "policy/catalog.h"
#include "policy/scope_policy.h"
#include "snapshot/identity.h"
#include "snapshot/loader.h"
#include "util/cleanup.h"
#include "flow/prepared.h"
#include "util/limits.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

int jig_plan_admit(const struct jig_project *p, const struct jig_plan *pl, struct jig_error *e)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "admitted/%s.json", pl->sha256);
	struct stat st;
	int r = 0;
	if (fstatat(p->statefd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = jig_write_file_replace_at(p->statefd, rel, pl->canonical, strlen(pl->canonical), 0600, e); /* two reviews at once */
	if (r)
		return r;
	/* The current admission, replaced atomically. */
	json_t *a = json_pack("{s:s,s:s}", "format", "jig-admission/1", "plan_sha256", pl->sha256);
	char *txt = a ? jig_json_canonical(a) : NULL;
	json_decref(a);
	if (!txt)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	struct jig_error w = {0};
	if (jig_write_file_replace_at(p->statefd, "admission.json", txt, strlen(txt), 0600, &w) < 0)
		r = jig_err(e, JIG_E_INTERNAL, "%s/.jig/%s", p->root, w.msg);
	free(txt);
	return r;
}

int jig_plan_admitted(const struct jig_project *p, char out[JIG_SHA256_HEX], struct jig_error *e)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	if (jig_read_file_at(p->statefd, "admission.json", 4096, "admission", &buf, &len, &st, &ignored) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: no admitted Plan; run 'jig review' first", p->root);
	json_t *a = NULL;
	const char *sha;
	int r = jig_json_parse_object(buf, len, "admission", &a, e);
	if (!r && (r = jig_json_get_string(a, "plan_sha256", "admission", &sha, e)) == 0) {
		if (strlen(sha) != JIG_SHA256_HEX - 1)
			r = jig_err(e, JIG_E_INTEGRITY, "%s/.jig/admission.json: malformed; review again", p->root);
		else
			memcpy(out, sha, JIG_SHA256_HEX);
	}
	json_decref(a);
	return r;
}

int jig_plan_verify_installation(const struct jig_snapshot *s, struct jig_verifier *v, int *launcher_fd,
				 struct jig_error *e)
{
	const char *files[JIG_PLAN_MAX_INSTALLED];
	size_t n = jig_plan_installed_files(s, files);
	int r = 0;
	for (size_t i = 0; !r && i < n; i++) {
		if (launcher_fd && strcmp(files[i], JIG_SCOPE_INIT_FILE) == 0) {
			*launcher_fd = jig_verifier_open(v, s, files[i], e);
			r = *launcher_fd < 0 ? *launcher_fd : 0;
		} else
			r = jig_verifier_check(v, s, &files[i], 1, e);
	}
	JIG_TRACE_POINT("installation: verified");
	return r;
}
