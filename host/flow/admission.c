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
#include "state/state.h"
#include "util/cleanup.h"
#include "flow/prepared.h"
#include "util/limits.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

/* The operator's decision, bound to the operator and this project
 * directory (state/state.h, decision 190). */
int jig_plan_admit(const struct jig_project *p, const struct jig_plan *pl, struct jig_error *e)
{
	int r = jig_state_admit(p->statefd, p->rootfd, p->root, pl->sha256, pl->canonical, e);
	return r;
}

int jig_plan_admitted(const struct jig_project *p, char out[JIG_SHA256_HEX], struct jig_error *e)
{
	return jig_state_admitted(p->statefd, p->rootfd, p->root, out, e);
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
