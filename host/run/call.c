/* Bindings at run time: the ledger, dispatch, the child's run, import
 * stages, the record tree (call.h). */
#include "run/call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "effects/agents.h"
#include "effects/command.h"
#include "effects/http.h"
#include "effects/worker.h"
#include "flow/tree.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

#define LEDGER "reservations.json"

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- the root's durable ledger ------------------------------------------ */

static json_t *budget_json(void)
{
	struct jig_reservation b = {JIG_ROOT_MEMORY_BYTES, JIG_ROOT_TASKS, JIG_ROOT_CPU_QUOTA_US};
	return jig_reservation_json(&b);
}

/* reservations.json, replaced atomically and synced before a dispatch goes
 * on (under root->lock). */
static int ledger_write(struct jig_call_root *root)
{
	json_t *doc = json_pack("{s:s,s:o,s:o,s:O,s:b}", "format", "jig-reservations/1", "budget", budget_json(), "reserved",
				jig_reservation_json(&root->reserved), "live", root->live, "held", root->held);
	char *txt = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	int rc = -1;
	int fd = txt ? openat(root->rundir, LEDGER ".new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		size_t len = strlen(txt), off = 0;
		while (off < len) {
			ssize_t n = write(fd, txt + off, len - off);
			if (n <= 0 && errno != EINTR)
				break;
			off += n > 0 ? (size_t)n : 0;
		}
		rc = off == len && fsync(fd) == 0 && renameat(root->rundir, LEDGER ".new", root->rundir, LEDGER) == 0 &&
			     fsync(root->rundir) == 0
			     ? 0
			     : -1;
		close(fd);
	}
	free(txt);
	return rc;
}

int jig_call_root_init(struct jig_call_root *root, const struct jig_scope_template *own, struct jig_error *e)
{
	pthread_mutex_init(&root->lock, NULL);
	const struct jig_scope_limits *l = &own->policy.limits;
	root->reserved = root->peak = (struct jig_reservation){l->memory_bytes, l->tasks, l->cpu_quota_us};
	root->live = json_pack("[{s:s,s:o}]", "id", "root", "reservation", jig_reservation_json(&root->reserved));
	if (!root->live || ledger_write(root) < 0)
		return jig_err(e, JIG_E_INTERNAL, "the root's reservation could not be recorded in the run directory: %s", strerror(errno));
	return 0;
}

void jig_call_root_free(struct jig_call_root *root)
{
	json_decref(root->live);
	root->live = NULL;
	pthread_mutex_destroy(&root->lock);
}

json_t *jig_call_root_json(struct jig_call_root *root)
{
	pthread_mutex_lock(&root->lock);
	json_t *v = json_pack("{s:s,s:o,s:o,s:o,s:b}", "policy", JIG_ROOT_BUDGET_FORMAT, "budget", budget_json(),
			      "peak_reserved", jig_reservation_json(&root->peak), "reserved_at_end",
			      jig_reservation_json(&root->reserved), "held_after_unconfirmed_cleanup", root->held);
	pthread_mutex_unlock(&root->lock);
	return v;
}

/* Adds r for child id, if the sum stays within the budget: 0, or -1 with
 * why (nothing reserved). */
static int reserve(struct jig_call_root *root, const char *id, const struct jig_binding *b, const struct jig_reservation *r,
		   char *why, size_t cap)
{
	struct jig_reservation sum = root->reserved;
	jig_reservation_add(&sum, r);
	if (!jig_reservation_fits(&sum))
		return snprintf(why, cap,
				"binding %s: its branch would bring the reserved sum to %llu MiB, %llu tasks, %.1f CPU; reservations over the root budget (1792 MiB, 576 tasks, 3.5 CPU) are refused before dispatch",
				b->name, (unsigned long long)(sum.memory_bytes >> 20), (unsigned long long)sum.tasks,
				(double)sum.cpu_quota_us / 100000.0),
		       -1;
	json_t *entry = json_pack("{s:s,s:s,s:s,s:o}", "id", id, "binding", b->name, "flow", b->flow, "reservation", jig_reservation_json(r));
	json_array_append_new(root->live, entry);
	struct jig_reservation was = root->reserved;
	root->reserved = sum;
	if (ledger_write(root) < 0) {
		json_array_remove(root->live, json_array_size(root->live) - 1);
		root->reserved = was;
		return snprintf(why, cap, "binding %s: the reservation could not be recorded; not dispatched", b->name), -1;
	}
	root->peak.memory_bytes = sum.memory_bytes > root->peak.memory_bytes ? sum.memory_bytes : root->peak.memory_bytes;
	root->peak.tasks = sum.tasks > root->peak.tasks ? sum.tasks : root->peak.tasks;
	root->peak.cpu_quota_us = sum.cpu_quota_us > root->peak.cpu_quota_us ? sum.cpu_quota_us : root->peak.cpu_quota_us;
	return 0;
}

/* Only after confirmed cleanup (under root->lock). */
static void release(struct jig_call_root *root, const char *id, const struct jig_reservation *r)
{
	size_t i;
	json_t *v;
	json_array_foreach(root->live, i, v) {
		if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0) {
			json_array_remove(root->live, i);
			root->reserved.memory_bytes -= r->memory_bytes;
			root->reserved.tasks -= r->tasks;
			root->reserved.cpu_quota_us -= r->cpu_quota_us;
			ledger_write(root);
			return;
		}
	}
}

/* --- one child ----------------------------------------------------------- */

struct child {
	struct jig_call_caller *caller;
	struct jig_run0 *r0; /* the caller's: the reply goes there */
	const struct jig_binding *b;
	const struct jig_flow *f;
	json_int_t id;
	unsigned seq;
	bool launched; /* a scope was asked for: its cleanup must be confirmed */
	char key[48]; /* the ledger's id */
	char dir[32]; /* child-<seq> beside the root's package */
	char run_dir[PATH_MAX];
	struct jig_reservation res;
	bool picked; /* per-call inputs: only the read map's entries in pick */
	bool pick[JIG_MAX_DECLARED];
	json_t *inputs; /* borrowed from the op, during admit */
	bool stage_slot;
	uint64_t wall_ms;
	int dirfd, devnull, sv[2], ab[2], cancel[2], relay_stop[2];
	struct jig_run0 cr0;
	bool have_cr0;
	struct jig_call_caller callee;
	struct jig_http_effect_env http;
	struct jig_agent_effect_env agent;
	struct jig_command_effect_env command;
	struct jig_scope_result sr;
	json_t *node, *outputs, *staged;
	char why[700];
	const char *status;
};

static void http_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	struct child *c = ctx;
	jig_http_effect(&c->http, c->f, op, reply, evidence, interrupted);
}

static void agent_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	struct child *c = ctx;
	jig_agent_effect(&c->agent, c->f, op, reply, evidence, interrupted);
}

static void command_effect(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted)
{
	struct child *c = ctx;
	jig_command_effect(&c->command, c->f, op, reply, evidence, interrupted);
}

static int failf(struct child *c, const char *what, const char *detail)
{
	snprintf(c->why, sizeof(c->why), "%.160s: %.500s", what, detail);
	return -1;
}

/* One whole input of the caller, borrowed through the read map. */
static int borrow(struct child *c, const struct jig_binding_map *m, int inputdir, struct jig_tree_stats *st)
{
	char what[160], src[300];
	snprintf(what, sizeof(what), "read map %s <- %s", m->child, m->caller);
	snprintf(src, sizeof(src), "input/%s", m->caller);
	struct jig_tree_limits l = {.what = what, .max_files = JIG_INPUT_MAX_FILES, .max_entries = JIG_INPUT_MAX_FILES * 4,
				    .max_bytes = JIG_INPUT_MAX_BYTES, .reject_sparse = true, .deny_name = ".jig"};
	jig_autoclose int fd = openat(c->caller->rundir, src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat sb;
	struct jig_error e = {0};
	if (fd < 0 || fstat(fd, &sb) < 0)
		return failf(c, what, strerror(errno));
	if (S_ISREG(sb.st_mode))
		return jig_tree_copy_file(fd, m->child, inputdir, &l, st, &e) < 0 ? failf(c, what, e.msg) : 0;
	if (mkdirat(inputdir, m->child, 0700) < 0)
		return failf(c, what, strerror(errno));
	jig_autoclose int dst = openat(inputdir, m->child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0 || jig_tree_copy(fd, m->child, dst, &l, st, &e) < 0)
		return failf(c, what, dst < 0 ? strerror(errno) : e.msg);
	fchmod(dst, 0555);
	return 0;
}

/* A resource tree (R-S04): the retained bytes the Plan pins, revalidated
 * from Package/0 into the child's input (read-only), counted with the
 * borrowed inputs under one 64-file / 8 MiB cap. */
static int project_res(struct child *c, const struct jig_binding_res *rs, int inputdir, struct jig_tree_stats *st)
{
	char what[160];
	snprintf(what, sizeof(what), "resource tree %s (%s)", rs->child, rs->path);
	struct jig_error e = {0};
	if (mkdirat(inputdir, rs->child, 0700) < 0)
		return failf(c, what, strerror(errno));
	jig_autoclose int dst = openat(inputdir, rs->child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0 || jig_store_materialise(c->caller->root->p, rs->sha256, dst, &e) < 0)
		return failf(c, what, dst < 0 ? strerror(errno) : e.msg);
	st->files += rs->files;
	st->bytes += rs->bytes;
	if (st->files > JIG_INPUT_MAX_FILES || st->bytes > JIG_INPUT_MAX_BYTES)
		return failf(c, what, "with the borrowed inputs, more than 64 files or 8 MiB; refused");
	fchmod(dst, 0555);
	return 0;
}

/* The child's private directory: package (and its prepared dependencies),
 * the read map's inputs, an empty stage. */
static int prepare(struct child *c)
{
	struct jig_call_root *root = c->caller->root;
	if (mkdirat(root->rundir, c->dir, 0700) < 0 || (c->dirfd = openat(root->rundir, c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(c->dirfd, "package", 0700) < 0 || mkdirat(c->dirfd, "input", 0700) < 0 || mkdirat(c->dirfd, "stage", 0700) < 0)
		return failf(c, "the child's run directory", strerror(errno));
	jig_autoclose int pk = openat(c->dirfd, "package", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_autoclose int in = openat(c->dirfd, "input", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jig_error e = {0};
	if (pk < 0 || in < 0 || jig_store_materialise(root->p, c->f->package_sha256, pk, &e) < 0)
		return failf(c, "the child's package", pk < 0 || in < 0 ? strerror(errno) : e.msg);
	const char *deps = json_string_value(json_object_get(json_object_get(jig_plan_flow(root->pl, c->f->name), "dependencies"), "tree"));
	if (deps) {
		jig_autoclose int nm = mkdirat(pk, "node_modules", 0755) == 0 ? openat(pk, "node_modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (nm < 0 || jig_store_materialise(root->p, deps, nm, &e) < 0)
			return failf(c, "the child's dependencies", nm < 0 ? "its package has its own node_modules" : e.msg);
		fchmod(nm, 0555);
	}
	struct jig_tree_stats st = {.list = NULL};
	for (size_t i = 0; i < c->b->n_read; i++)
		if ((!c->picked || c->pick[i]) && borrow(c, &c->b->read[i], in, &st) < 0)
			return -1;
	for (size_t i = 0; i < c->b->n_res; i++)
		if (project_res(c, &c->b->res[i], in, &st) < 0)
			return -1;
	fchmod(pk, 0555);
	fchmod(in, 0555);
	return 0;
}

/* The caller's fencing reaches the child: its abort relayed to the
 * child's own abort pipe (which a Run/0 violation also writes). */
static void *relay(void *arg)
{
	struct child *c = arg;
	struct pollfd p[2] = {{c->caller->abort_fd, POLLIN, 0}, {c->relay_stop[0], POLLIN, 0}};
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	if (p[0].revents)
		jig_poke(c->ab[1]);
	return NULL;
}

/* Launches the child's Flow scope with its Run/0 read alongside; returns
 * when it is fenced and its own children are joined. */
static int launch(struct child *c)
{
	struct jig_call_root *root = c->caller->root;
	const struct jig_scope_template *t = jig_plan_scope(root->pl, c->f->name, NULL);
	if (!t)
		return failf(c, "the child", "has no composed scope");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sv) < 0 || pipe2(c->ab, O_CLOEXEC) < 0 ||
	    pipe2(c->cancel, O_CLOEXEC) < 0 || pipe2(c->relay_stop, O_CLOEXEC) < 0 ||
	    (c->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return failf(c, "Run/0", strerror(errno));
	const struct jig_scope_slot slots[] = {{"null", c->devnull}, {"run0", c->sv[1]}};
	struct jig_scope_run values = {.run_dir = c->run_dir, .slots = slots, .n_slots = 2, .wall_ms = c->wall_ms};
	struct jig_scope_policy policy;
	struct jig_scope sc;
	struct jig_error e = {0};
	struct jig_scope_launch l = {.policy_sha256 = t->policy.sha256, .init_fd = root->init_fd, .argv = (const char *const *)t->argv,
				     .hold_path = t->hold, .abort_fd = c->ab[0], .interrupt_fd = -1, .companion_pid = root->outer_pid};
	if (jig_scope_policy_resolve(&t->policy, &values, jig_caller_home(), &policy, &e) < 0)
		return failf(c, "the child's scope was refused", e.msg);
	if (jig_scope_describe(&policy, &l, &sc, &e) < 0) {
		jig_scope_policy_free(&policy);
		return failf(c, "the child's scope was refused", e.msg);
	}
	c->http = (struct jig_http_effect_env){.sandbox = root->sb, .plan = root->pl, .init_fd = root->init_fd, .flow = c->f->name,
					       .abort_fd = c->cancel[0], .companion_pid = root->outer_pid};
	c->agent = (struct jig_agent_effect_env){.http = &c->http, .sandbox = root->sb, .plan = root->pl, .init_fd = root->init_fd,
						 .abort_fd = c->cancel[0], .companion_pid = root->outer_pid, .statefd = root->p->statefd};
	c->command = (struct jig_command_effect_env){.sandbox = root->sb, .plan = root->pl, .init_fd = root->init_fd,
						     .abort_fd = c->cancel[0], .companion_pid = root->outer_pid,
						     .run_dir = c->run_dir, .rundir = c->dirfd};
	c->callee = (struct jig_call_caller){.root = root, .f = c->f, .level = c->caller->level + 1, .rundir = c->dirfd,
					     .abort_fd = c->cancel[0], .children = json_array()};
	pthread_t rt;
	bool relaying = pthread_create(&rt, NULL, relay, c) == 0;
	int rc = -1;
	if (!relaying)
		failf(c, "the child", "cannot start its abort relay");
	else if (jig_run0_start_calls(&c->cr0, c->sv[0], c->ab[1], c->f->n_http ? http_effect : NULL,
				      c->f->n_agents ? agent_effect : NULL, c->f->n_commands ? command_effect : NULL,
				      NULL /* checkpoints are root-only: review refuses them in a child */, c,
				      c->f->n_bindings ? jig_call_op : NULL, &c->callee, c->r0->budget /* one record tree */) < 0)
		failf(c, "Run/0", "cannot start its reader");
	else {
		c->have_cr0 = true;
		c->launched = true;
		int lr = jig_sandbox_launch(root->sb, &sc, &c->sr);
		close(c->sv[1]);
		c->sv[1] = -1;
		jig_poke(c->cancel[1]); /* the child is fenced: its effects and children are */
		jig_run0_join(&c->cr0);
		jig_call_join(&c->callee);
		rc = lr == JIG_MOD_OK ? 0 : failf(c, "the child's scope was refused", c->sr.error[0] ? c->sr.error : "launch failed");
	}
	if (relaying) {
		jig_poke(c->relay_stop[1]);
		pthread_join(rt, NULL);
	}
	jig_scope_policy_free(&policy);
	return rc;
}

static const char *verdict(struct child *c)
{
	const struct jig_scope_result *res = &c->sr;
	if (res->aborted && !c->cr0.violation)
		return snprintf(c->why, sizeof(c->why), "cancelled: its caller ended; the scope was fenced"), "cancelled";
	if (c->cr0.violation)
		return snprintf(c->why, sizeof(c->why), "%s", c->cr0.error), "failed";
	if (res->outcome == JIG_SCOPE_TIMEOUT)
		return snprintf(c->why, sizeof(c->why), "the child ran past its %llu ms deadline and was fenced", (unsigned long long)c->wall_ms),
		       "timeout";
	if (res->outcome == JIG_SCOPE_OOM)
		return snprintf(c->why, sizeof(c->why), "the child hit its memory limit and was fenced"), "failed";
	if (res->signal && (res->outcome == JIG_SCOPE_CRASHED || res->outcome == JIG_SCOPE_SIGNALED))
		return jig_scope_signal_text(c->why, sizeof(c->why), "the child", res->signal, res->core_dumped, c->cr0.error), "failed";
	if (jig_scope_killed_while_running(res)) /* it ran, and was killed from outside: not "never started" */
		return snprintf(c->why, sizeof(c->why), "the child's scope was killed while its Flow ran: %s", res->error), "killed";
	if (res->outcome != JIG_SCOPE_EXITED || res->exit_status != 0 || !c->cr0.done)
		return snprintf(c->why, sizeof(c->why), "%s", c->cr0.error[0] ? c->cr0.error : res->error[0] ? res->error : "the child did not complete"),
		       "failed";
	if (!res->cleanup_confirmed)
		return snprintf(c->why, sizeof(c->why), "cleanup not confirmed: %s", res->error), "failed";
	return "succeeded";
}

/* Final validation of the fenced child's output into its directory, then
 * the write map's files into the caller's stage <id> (read-only there). */
static int collect(struct child *c)
{
	struct jig_tree_limits l = {.what = "child output", .max_files = JIG_OUTPUT_MAX_FILES, .max_entries = JIG_OUTPUT_MAX_ENTRIES,
				    .max_bytes = JIG_OUTPUT_MAX_BYTES, .reject_sparse = true, .allowed = c->f->outputs,
				    .n_allowed = c->f->n_outputs};
	struct jig_tree_stats st = {.list = c->outputs};
	struct jig_error e = {0};
	if (c->sr.held_fd < 0)
		return failf(c, "child output", "was not held");
	if (mkdirat(c->dirfd, "out", 0700) < 0)
		return failf(c, "child output", strerror(errno));
	jig_autoclose int out = openat(c->dirfd, "out", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out < 0 || jig_tree_copy(c->sr.held_fd, "", out, &l, &st, &e) < 0)
		return failf(c, "child output refused", out < 0 ? strerror(errno) : e.msg);
	if (!c->b->n_write)
		return 0;
	char name[32], path[64];
	snprintf(name, sizeof(name), "%lld", (long long)c->id);
	snprintf(path, sizeof(path), "stage/%s", name);
	jig_autoclose int stage = mkdirat(c->caller->rundir, path, 0700) == 0 ? openat(c->caller->rundir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (stage < 0)
		return failf(c, "the caller's import stage", strerror(errno));
	struct jig_tree_stats sst = {.list = NULL};
	l.what = "import stage";
	l.allowed = NULL;
	for (size_t i = 0; i < c->b->n_write; i++) {
		jig_autoclose int fd = openat(out, c->b->write[i].child, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue; /* the child did not write it */
		char k[24], at[96];
		snprintf(k, sizeof(k), "%zu", i);
		if (jig_tree_copy_file(fd, k, stage, &l, &sst, &e) < 0)
			return failf(c, "import stage", e.msg);
		snprintf(at, sizeof(at), "/stage/%s/%s", name, k);
		json_object_set_new(c->staged, c->b->write[i].caller, json_string(at));
	}
	fchmod(stage, 0555);
	return 0;
}

static const char *scope_outcome(const struct jig_scope_result *r)
{
	static const char *const names[] = {"exited", "signaled", "crashed", "timeout", "oom", "failed"};
	return r->outcome < sizeof(names) / sizeof(names[0]) ? names[r->outcome] : "failed";
}

/* The record's node: binding, scope, reservation, outcome, termination,
 * cleanup, and what the child did. */
static void node(struct child *c, bool launched, bool cleaned, bool released)
{
	const struct jig_scope_template *t = jig_plan_scope(c->caller->root->pl, c->f->name, NULL);
	json_t *n = c->node;
	json_object_set_new(n, "scope_policy_sha256", json_string(t ? t->policy.sha256 : ""));
	json_object_set_new(n, "deadline_ms", json_integer((json_int_t)c->wall_ms));
	json_object_set_new(n, "status", json_string(c->status));
	if (c->why[0])
		json_object_set_new(n, "why", json_string(c->why));
	if (launched)
		json_object_set_new(n, "termination",
				    json_pack("{s:s,s:i,s:i,s:b,s:b,s:I,s:I,s:I,s:I,s:s}", "outcome", scope_outcome(&c->sr), "exit_status",
					      c->sr.exit_status, "signal", c->sr.signal, "fenced", c->sr.fenced, "aborted", c->sr.aborted,
					      "wall_ms", (json_int_t)c->sr.wall_ms, "memory_peak_bytes", (json_int_t)c->sr.memory_peak_bytes,
					      "oom_kills", (json_int_t)c->sr.oom_kills, "pids_max_hits", (json_int_t)c->sr.pids_max_hits,
					      "cgroup", c->sr.cgroup));
	if (launched) /* ABI 1.4: whether the child's Flow started at all */
		json_object_set_new(json_object_get(n, "termination"), "payload_started", jig_scope_payload_started_json(&c->sr));
	json_object_set_new(n, "cleanup_confirmed", json_boolean(cleaned));
	json_object_set_new(n, "reservation_released", json_boolean(released));
	if (c->caller->level > 0) /* held by the branch's entry until its first child is cleaned up */
		json_object_set_new(n, "reservation_within_branch", json_true());
	json_t *in = json_array(); /* what the child was given: borrowed inputs, resource trees */
	for (size_t i = 0; i < c->b->n_read; i++)
		if (!c->picked || c->pick[i])
			json_array_append_new(in, json_pack("{s:s,s:s}", "input", c->b->read[i].child, "from", c->b->read[i].caller));
	for (size_t i = 0; i < c->b->n_res; i++)
		json_array_append_new(in, json_pack("{s:s,s:s,s:s}", "input", c->b->res[i].child, "resource", c->b->res[i].path, "sha256",
						    c->b->res[i].sha256));
	json_object_set_new(n, "inputs", in);
	json_object_set(n, "outputs", c->outputs);
	json_object_set(n, "staged", c->staged);
	if (c->have_cr0) {
		json_object_set(n, "logs", c->cr0.logs);
		if (c->f->n_http || c->f->n_agents || c->f->n_commands)
			json_object_set(n, "effects", c->cr0.effects);
		jig_run0_note_cuts(&c->cr0, n);
	}
	if (c->callee.children)
		json_object_set(n, "children", c->callee.children);
}

static void finish(struct child *c)
{
	int fds[] = {c->dirfd, c->devnull, c->sv[0], c->sv[1], c->ab[0], c->ab[1], c->cancel[0], c->cancel[1],
		     c->relay_stop[0], c->relay_stop[1], c->sr.held_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (c->have_cr0)
		jig_run0_free(&c->cr0);
	json_decref(c->callee.children);
	json_decref(c->outputs);
	json_decref(c->staged);
	json_decref(c->node);
	free(c);
}

static void reply_refused(struct jig_run0 *r0, json_int_t id, const char *why)
{
	json_t *m = json_pack("{s:s,s:I,s:b,s:s,s:s}", "op", "call", "id", id, "ok", 0, "outcome", "refused", "error", why);
	jig_run0_send(r0, m);
	json_decref(m);
}

/* The child's thread: run, collect, clean up, release, answer. */
static void *child_main(void *arg)
{
	struct child *c = arg;
	struct jig_call_root *root = c->caller->root;
	if (prepare(c) == 0) {
		if (launch(c) == 0)
			c->status = verdict(c);
		if (strcmp(c->status, "succeeded") == 0 && collect(c) < 0)
			c->status = "failed";
	}
	if (c->sr.held_fd >= 0)
		close(c->sr.held_fd);
	c->sr.held_fd = -1;
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
	jig_remove_tree(root->rundir, c->dir);
	struct stat st;
	bool removed = fstatat(root->rundir, c->dir, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	bool cleaned = removed && (!c->launched || c->sr.cleanup_confirmed);
	pthread_mutex_lock(&root->lock);
	if (cleaned && c->caller->level == 0)
		release(root, c->key, &c->res);
	else if (!cleaned) {
		root->held = true; /* never released: the rest of the Run runs under it */
		ledger_write(root);
	}
	if (c->stage_slot && !json_object_size(c->staged))
		c->caller->stages--;
	c->caller->in_flight--;
	node(c, c->launched, cleaned, cleaned);
	json_array_append(c->caller->children, c->node);
	pthread_mutex_unlock(&root->lock);
	json_t *m = json_pack("{s:s,s:I,s:b,s:s,s:O}", "op", "call", "id", c->id, "ok", strcmp(c->status, "succeeded") == 0, "outcome",
			      c->status, "outputs", c->staged);
	if (c->why[0])
		json_object_set_new(m, "error", json_string(c->why));
	/* Whether the child's Flow started: "never ran" apart from "ran and
	 * failed or was killed" (null: the sandbox module does not say). */
	json_object_set_new(m, "started", c->launched ? jig_scope_payload_started_json(&c->sr) : json_false());
	jig_run0_send(c->r0, m);
	json_decref(m);
	finish(c);
	return NULL;
}

/* "imported": the caller copied stage <id>; it goes. */
static void imported(struct jig_call_caller *caller, json_int_t id)
{
	char path[64];
	snprintf(path, sizeof(path), "stage/%lld", (long long)id);
	struct stat st;
	pthread_mutex_lock(&caller->root->lock);
	if (fstatat(caller->rundir, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		jig_remove_tree(caller->rundir, path);
		caller->stages--;
	}
	pthread_mutex_unlock(&caller->root->lock);
}

/* Per-call inputs {child input: caller input}: each pair one of the
 * binding's reviewed read map (a whole input of this caller); the child
 * gets exactly these. 0, or -1 with why. */
static int pick_inputs(const struct jig_binding *b, json_t *inputs, bool *pick, char *why, size_t cap)
{
	if (!json_is_object(inputs) || json_object_size(inputs) > JIG_MAX_DECLARED)
		return snprintf(why, cap, "binding %s: inputs must be an object {child input: this Flow's input name}", b->name), -1;
	const char *k;
	json_t *v;
	json_object_foreach(inputs, k, v) {
		const char *s = json_string_value(v);
		size_t i = 0;
		while (i < b->n_read && strcmp(b->read[i].child, k) != 0)
			i++;
		if (!s)
			return snprintf(why, cap, "binding %s: inputs: \"%.64s\" must name one of this Flow's inputs (a string)", b->name, k), -1;
		if (strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
			return snprintf(why, cap,
					"binding %s: inputs: \"%.64s\" <- \"%.64s\" is a path; a child borrows only whole inputs of its caller, by name; refused before dispatch",
					b->name, k, s),
			       -1;
		if (i == b->n_read || strcmp(b->read[i].caller, s) != 0)
			return snprintf(why, cap,
					"binding %s: inputs: \"%.64s\" <- \"%.64s\" is not in its reviewed read map; a child gets only what review allowed; refused before dispatch",
					b->name, k, s),
			       -1;
		pick[i] = true;
	}
	return 0;
}

/* The checks before dispatch (under root->lock): 0, or -1 with why. */
static int admit(struct jig_call_caller *caller, struct child *c, char *why, size_t cap)
{
	struct jig_call_root *root = caller->root;
	unsigned most = caller->level == 0 ? JIG_ROOT_SIBLINGS : JIG_CHILD_FLOWS;
	if (c->picked && pick_inputs(c->b, c->inputs, c->pick, why, cap) < 0)
		return -1;
	if (caller->in_flight >= most)
		return snprintf(why, cap, "binding %s: %s already has %u child Flow%s in flight; %s (shape rule); refused before dispatch", c->b->name,
				caller->f->name, caller->in_flight, caller->in_flight == 1 ? "" : "s",
				caller->level == 0 ? "the root permits two sibling Flows" : "each child permits one Flow or effect"),
		       -1;
	if (caller->level + 1 > JIG_CHILD_LEVELS)
		return snprintf(why, cap, "binding %s: a sixth child level; the longest branch is at most %d child levels (shape rule)", c->b->name,
				JIG_CHILD_LEVELS),
		       -1;
	if (c->b->n_write && caller->stages >= JIG_CALL_MAX_STAGES)
		return snprintf(why, cap, "binding %s: %s has %d import stages not yet imported; at most %d belong to one caller; refused before dispatch",
				c->b->name, caller->f->name, JIG_CALL_MAX_STAGES, JIG_CALL_MAX_STAGES),
		       -1;
	long long left = root->deadline_ms - mono_ms();
	if (left < 1000)
		return snprintf(why, cap, "binding %s: less than a second of the root's deadline is left; not dispatched", c->b->name), -1;
	c->wall_ms = c->b->timeout_ms < (uint64_t)left ? c->b->timeout_ms : (uint64_t)left;
	json_t *pb = NULL, *v;
	size_t i;
	json_array_foreach(json_object_get(jig_plan_flow(root->pl, caller->f->name), "bindings"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "name")), c->b->name) == 0)
			pb = v;
	if (!pb || jig_reservation_from_json(json_object_get(pb, "reserves"), &c->res) < 0)
		return snprintf(why, cap, "binding %s: the Plan pins no reservation for it; review again", c->b->name), -1;
	c->seq = ++root->seq;
	snprintf(c->key, sizeof(c->key), "child-%u", c->seq);
	snprintf(c->dir, sizeof(c->dir), "child-%u", c->seq);
	/* The root's dispatch reserves the whole branch (its longest admitted
	 * path with its largest effect); a deeper call is inside it. */
	return caller->level == 0 ? reserve(root, c->key, c->b, &c->res, why, cap) : 0;
}

void jig_call_op(void *caller_v, struct jig_run0 *r0, json_t *op)
{
	struct jig_call_caller *caller = caller_v;
	const char *kind = json_string_value(json_object_get(op, "op"));
	json_t *idv = json_object_get(op, "id");
	json_int_t id = json_is_integer(idv) ? json_integer_value(idv) : -1;
	if (id < 0 || id > INT32_MAX)
		return jig_run0_violation(r0, "Run/0: a call needs an \"id\" (an integer)");
	if (strcmp(kind, "imported") == 0)
		return json_object_size(op) == 2 ? imported(caller, id) : jig_run0_violation(r0, "Run/0: malformed \"imported\"");
	if (!jig_run0_take_node(r0)) { /* the record tree's cap (util/limits.h) */
		char cap[96];
		snprintf(cap, sizeof(cap), "more than %d child Flows in one Run's record", JIG_CALL_MAX_NODES);
		return jig_run0_violation(r0, cap);
	}
	const char *name = json_string_value(json_object_get(op, "binding"));
	const struct jig_binding *b = name ? jig_flow_binding(caller->f, name) : NULL;
	static const char *const keys[] = {"op", "id", "binding", "inputs", NULL};
	json_t *inputs = json_object_get(op, "inputs");
	char why[700] = "";
	for (const char *k; !why[0] && (k = jig_effect_unknown_key(op, keys));)
		snprintf(why, sizeof(why), "jig.call: unknown field \"%.40s\"", k);
	if (!why[0] && !b)
		snprintf(why, sizeof(why), "flow %s has no reviewed binding \"%.64s\"", caller->f->name, name ? name : "");
	struct child *c = why[0] ? NULL : calloc(1, sizeof(*c));
	if (!why[0] && !c)
		snprintf(why, sizeof(why), "out of memory");
	if (why[0])
		return reply_refused(r0, id, why);
	*c = (struct child){.caller = caller, .r0 = r0, .b = b, .id = id, .dirfd = -1, .devnull = -1, .sv = {-1, -1}, .ab = {-1, -1},
			    .cancel = {-1, -1}, .relay_stop = {-1, -1}, .sr = {.held_fd = -1}, .status = "failed",
			    .outputs = json_array(), .staged = json_object(), .picked = inputs != NULL, .inputs = inputs};
	for (size_t i = 0; i < caller->root->p->n_flows; i++)
		if (strcmp(caller->root->p->flows[i].name, b->flow) == 0)
			c->f = &caller->root->p->flows[i];
	c->node = json_pack("{s:I,s:s,s:s,s:i}", "id", id, "binding", b->name, "flow", b->flow, "level", (int)caller->level + 1);
	pthread_mutex_lock(&caller->root->lock);
	int ok = c->f && caller->n_threads < JIG_CALL_MAX_CALLS ? admit(caller, c, why, sizeof(why)) : (snprintf(why, sizeof(why), "binding %s: not dispatched", b->name), -1);
	c->inputs = NULL;
	if (!ok) {
		caller->in_flight++;
		if ((c->stage_slot = b->n_write > 0))
			caller->stages++;
		json_object_set_new(c->node, "reservation", jig_reservation_json(&c->res));
		snprintf(c->run_dir, sizeof(c->run_dir), "%s/%s", caller->root->run_dir, c->dir);
		if (pthread_create(&caller->threads[caller->n_threads], NULL, child_main, c) == 0)
			caller->n_threads++;
		else
			ok = -1, snprintf(why, sizeof(why), "binding %s: cannot start its thread", b->name), release(caller->root, c->key, &c->res),
			caller->in_flight--, caller->stages -= c->stage_slot;
	}
	if (ok) {
		json_object_set_new(c->node, "status", json_string("refused"));
		json_object_set_new(c->node, "why", json_string(why));
		json_array_append(caller->children, c->node);
	}
	pthread_mutex_unlock(&caller->root->lock);
	if (ok) {
		reply_refused(r0, id, why);
		finish(c);
	}
}

void jig_call_join(struct jig_call_caller *c)
{
	for (size_t i = 0; i < c->n_threads; i++)
		pthread_join(c->threads[i], NULL);
	c->n_threads = 0;
}

int jig_call_prepare_stage(int rundir, struct jig_error *e)
{
	if (mkdirat(rundir, "stage", 0755) < 0)
		return jig_err(e, JIG_E_INTERNAL, "the run directory's stage: %s", strerror(errno));
	return 0;
}

/* --- jig inspect --------------------------------------------------------- */

static void put(FILE *out, json_t *obj, const char *key)
{
	jig_text_put(out, json_string_value(json_object_get(obj, key)));
}

void jig_call_print_tree(FILE *out, json_t *children, int depth)
{
	size_t i;
	json_t *n;
	json_array_foreach(children, i, n) {
		json_t *t = json_object_get(n, "termination"), *rs = json_object_get(n, "reservation");
		fprintf(out, "%*schild ", 2 * depth, "");
		put(out, n, "binding");
		fputs(" -> flow ", out);
		put(out, n, "flow");
		fputs(": ", out);
		put(out, n, "status");
		if (json_string_length(json_object_get(n, "why"))) {
			fputs(": ", out);
			put(out, n, "why");
		}
		fputc('\n', out);
		if (rs)
			fprintf(out, "%*sreserved %lld MiB, %lld tasks, %.1f CPU; %s\n", 2 * depth + 2, "",
				(long long)json_integer_value(json_object_get(rs, "memory_bytes")) >> 20,
				(long long)json_integer_value(json_object_get(rs, "tasks")),
				(double)json_integer_value(json_object_get(rs, "cpu_quota_us")) / 100000.0,
				json_is_true(json_object_get(n, "reservation_released")) ? "released after confirmed cleanup"
											   : "HELD: cleanup not confirmed");
		json_t *in = json_object_get(n, "inputs"), *iv;
		size_t k;
		json_array_foreach(in, k, iv) {
			if (k)
				fputs(", ", out);
			else
				fprintf(out, "%*sgiven ", 2 * depth + 2, "");
			put(out, iv, "input");
			fputs(json_object_get(iv, "resource") ? " <- resource tree " : " <- ", out);
			put(out, iv, json_object_get(iv, "resource") ? "resource" : "from");
			if (k + 1 == json_array_size(in))
				fputc('\n', out);
		}
		if (t) {
			fprintf(out, "%*stermination ", 2 * depth + 2, "");
			put(out, t, "outcome");
			fprintf(out, ", exit %lld, signal %lld, wall %lld ms, peak memory %lld bytes; scope ",
				(long long)json_integer_value(json_object_get(t, "exit_status")),
				(long long)json_integer_value(json_object_get(t, "signal")),
				(long long)json_integer_value(json_object_get(t, "wall_ms")),
				(long long)json_integer_value(json_object_get(t, "memory_peak_bytes")));
			put(out, n, "scope_policy_sha256");
			fputc('\n', out);
		}
		json_t *ev;
		json_array_foreach(json_object_get(n, "effects"), k, ev) {
			fprintf(out, "%*s", 2 * depth + 2, "");
			put(out, ev, "effect");
			fputc(' ', out);
			put(out, ev, "route");
			fputc(' ', out);
			put(out, ev, "outcome");
			fputc('\n', out);
		}
		jig_call_print_tree(out, json_object_get(n, "children"), depth + 1);
	}
}
