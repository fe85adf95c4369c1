/* Scope policy at launch: the run's slots filled (resolve) and the only
 * place a struct jig_scope is assembled (jig_scope_describe). */
#include "policy/scope_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

static const struct jig_scope_slot *find_slot(const struct jig_scope_run *run, const char *name)
{
	for (size_t i = 0; i < run->n_slots; i++)
		if (strcmp(run->slots[i].name, name) == 0)
			return &run->slots[i];
	return NULL;
}

/* Fills a template's slots with one run's values (the excluded runtime
 * metadata), then parses the result as any policy and checks it against
 * the live host: every strict rule applies to what actually runs. */
int jig_scope_policy_resolve(const struct jig_scope_policy *tmpl, const struct jig_scope_run *run, const char *home,
			     struct jig_scope_policy *out, struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	json_t *doc = json_deep_copy(tmpl->doc);
	if (!doc)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	int r = 0;
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(doc, "binds"), i, b) {
		const char *src = json_string_value(json_object_get(b, "source"));
		if (r || src[0] != '@')
			continue;
		char path[PATH_MAX];
		if (!run->run_dir || snprintf(path, sizeof(path), "%s/%s", run->run_dir, src + 5) >= (int)sizeof(path))
			r = jig_err(e, JIG_E_INTERNAL, "scope %s: no run directory for %s", tmpl->name, src);
		else
			json_object_set_new(b, "source", json_string(path));
	}
	json_array_foreach(json_object_get(doc, "descriptors"), i, b) {
		const char *slot = json_string_value(json_object_get(b, "source"));
		const struct jig_scope_slot *v = slot ? find_slot(run, slot + 1) : NULL;
		if (!r && slot && (!v || v->fd < 0))
			r = jig_err(e, JIG_E_INTERNAL, "scope %s: descriptor slot %s has no value", tmpl->name, slot);
		else if (!r && v)
			json_object_set_new(b, "source", json_integer(v->fd));
	}
	if (!r && run->wall_ms) {
		if (run->wall_ms > tmpl->limits.wall_ms)
			r = jig_err(e, JIG_E_USAGE, "scope %s: a deadline of %llu ms is past its ceiling of %llu ms", tmpl->name,
				    (unsigned long long)run->wall_ms, (unsigned long long)tmpl->limits.wall_ms);
		else
			json_object_set_new(json_object_get(doc, "limits"), "wall_ms", json_integer((json_int_t)run->wall_ms));
	}
	char *txt = r ? NULL : json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!r && !txt)
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (!r && ((r = jig_scope_policy_parse(txt, strlen(txt), home, 0, out, e)) ||
		   (r = jig_scope_policy_check_host(out, e))))
		jig_scope_policy_free(out);
	free(txt);
	return r;
}

/* The one place a struct jig_scope is assembled: from a policy that can
 * run (no slots), the verified launcher and the program. */
int jig_scope_describe(const struct jig_scope_policy *p, const struct jig_scope_launch *l, struct jig_scope *sc,
		       struct jig_error *e)
{
	if (p->has_slots)
		return jig_err(e, JIG_E_INTERNAL, "scope %s: its runtime slots are not filled", p->name);
	*sc = (struct jig_scope){
		.struct_size = sizeof(*sc),
		.name = p->name,
		.policy_sha256 = l->policy_sha256 ? l->policy_sha256 : p->sha256,
		.init_fd = l->init_fd,
		.binds = p->binds,
		.n_binds = (uint32_t)p->n_binds,
		.tmpfs = p->tmpfs,
		.n_tmpfs = (uint32_t)p->n_tmpfs,
		.symlinks = p->symlinks,
		.n_symlinks = (uint32_t)p->n_symlinks,
		.env = (const char *const *)p->env,
		.n_env = (uint32_t)p->n_env,
		.fds = l->fds ? l->fds : p->fds,
		.n_fds = (uint32_t)p->n_fds,
		.cwd = p->cwd,
		.network = p->network,
		.limits = p->limits,
		.argv = l->argv,
		.abort_fd = l->abort_fd,
		.hold_path = l->hold_path,
		.interrupt_fd = l->interrupt_fd,
		.companion_pid = l->companion_pid,
		.rw_binds = p->n_rw_binds ? p->rw_binds : NULL,
		.n_rw_binds = (uint32_t)p->n_rw_binds,
		.controlling_tty = l->controlling_tty ? 1 : 0,
		.listeners = p->n_listeners ? p->listeners : NULL,
		.n_listeners = (uint32_t)p->n_listeners,
		.listen_ready = p->n_listeners ? l->listen_ready : NULL,
		.listen_ctx = p->n_listeners ? l->listen_ctx : NULL,
	};
	if (l->controlling_tty) {
		/* Only jig's own pty slave at descriptor 0 becomes a controlling
		 * terminal; never the operator's (scope run relays it). */
		bool tty0 = false;
		for (size_t i = 0; i < p->n_fds; i++)
			tty0 |= sc->fds[i].target == 0 && isatty(sc->fds[i].source);
		if (!tty0)
			return jig_err(e, JIG_E_INTERNAL, "scope %s: a controlling terminal needs the terminal at descriptor 0", p->name);
	}
	if (p->n_listeners && !l->listen_ready)
		return jig_err(e, JIG_E_INTERNAL, "scope %s: its network endpoints have no relay", p->name);
	if (l->output_ready && l->hold_path) {
		/* The hidden-stage output has the size of the policy's tmpfs
		 * there (which it covers). */
		for (size_t i = 0; i < p->n_tmpfs; i++)
			if (strcmp(p->tmpfs[i].target, l->hold_path) == 0)
				sc->output_bytes = p->tmpfs[i].size_bytes;
		if (!sc->output_bytes)
			return jig_err(e, JIG_E_INTERNAL, "scope %s: no tmpfs at %s for its output", p->name, l->hold_path);
		sc->output_path = l->hold_path;
		sc->hold_path = NULL;
		sc->output_ready = l->output_ready;
		sc->output_ctx = l->output_ctx;
	}
	return 0;
}
