/* One child Flow of a binding (call.h): its private directory, its scope
 * launched with its own Run/0, the verdict, the collected output, the
 * import stage on the caller's output and the import, its node in the
 * record tree. */
#include "run/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "flow/tree.h"
#include "run/ledger.h"
#include "sandbox/scope.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/progress.h"

struct jig_child *jig_child_new(struct jig_call_caller *caller, struct jig_run0 *r0, const struct jig_binding *b,
				json_int_t id, json_t *inputs)
{
	struct jig_child *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = (struct jig_child){.caller = caller, .r0 = r0, .b = b, .id = id, .dirfd = -1, .devnull = -1, .sv = {-1, -1},
				.ab = {-1, -1}, .cancel = {-1, -1}, .relay_stop = {-1, -1}, .sr = {.held_fd = -1},
				.status = "failed", .outputs = json_array(), .staged = json_object(), .picked = inputs != NULL,
				.inputs = inputs};
	for (size_t i = 0; i < caller->root->p->n_flows; i++)
		if (strcmp(caller->root->p->flows[i].name, b->flow) == 0)
			c->f = &caller->root->p->flows[i];
	c->node = json_pack("{s:I,s:s,s:s,s:i}", "id", id, "binding", b->name, "flow", b->flow, "level", (int)caller->level + 1);
	return c;
}

static int failf(struct jig_child *c, const char *what, const char *detail)
{
	snprintf(c->why, sizeof(c->why), "%.160s: %.500s", what, detail);
	return -1;
}

/* Removes the caller's import stage (path below root) and confirms it is
 * gone. Unconfirmed (seed 000: "unconfirmed copy, commit or descriptor
 * cleanup ends the caller and never releases its destination for
 * retry"), the caller is ended by jig, never answered, so its program
 * does not resume, and the stage's slot is never released. The test
 * fault "stage cleanup" leaves the stage (binding.s05_stage_cleanup_ends_caller). */
static void remove_stage(struct jig_child *c, int root, const char *path)
{
	if (!JIG_FAULT_FAILS("stage cleanup"))
		jig_remove_tree(root, path);
	struct stat st;
	if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return;
	c->stage_left = true;
	char why[600];
	snprintf(why, sizeof(why),
		 "cleanup not confirmed: the import stage of child Flow %.64s (via %.64s) in the caller's output could not be removed; "
		 "jig ended the caller, which never resumes",
		 c->b->flow, c->b->name);
	snprintf(c->why, sizeof(c->why), "%s", why);
	jig_run0_end(c->r0, why);
}

/* One whole input of the caller, borrowed through the read map. */
static int borrow(struct jig_child *c, const struct jig_binding_map *m, int inputdir, struct jig_tree_stats *st)
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
	return fchmod(dst, 0555) < 0 ? failf(c, what, strerror(errno)) : 0;
}

/* A resource tree (R-S04): the retained bytes the Plan pins, revalidated
 * from Package/0 into the child's input (read-only), counted with the
 * borrowed inputs under one 64-file / 8 MiB cap. */
static int project_res(struct jig_child *c, const struct jig_binding_res *rs, int inputdir, struct jig_tree_stats *st)
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
	return fchmod(dst, 0555) < 0 ? failf(c, what, strerror(errno)) : 0;
}

/* The child's private directory: package (and its prepared dependencies),
 * the read map's inputs, an empty stage. */
static int prepare(struct jig_child *c)
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
		if (fchmod(nm, 0555) < 0)
			return failf(c, "the child's dependencies", strerror(errno));
	}
	struct jig_tree_stats st = {.list = NULL};
	for (size_t i = 0; i < c->b->n_read; i++)
		if ((!c->picked || c->pick[i]) && borrow(c, &c->b->read[i], in, &st) < 0)
			return -1;
	for (size_t i = 0; i < c->b->n_res; i++)
		if (project_res(c, &c->b->res[i], in, &st) < 0)
			return -1;
	if (fchmod(pk, 0555) < 0 || fchmod(in, 0555) < 0)
		return failf(c, "the child's run directory", strerror(errno));
	return 0;
}

/* The caller's fencing reaches the child: its abort relayed to the
 * child's own abort pipe (which a Run/0 violation also writes). */
static void *relay(void *arg)
{
	struct jig_child *c = arg;
	struct pollfd p[2] = {{c->caller->abort_fd, POLLIN, 0}, {c->relay_stop[0], POLLIN, 0}};
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	if (p[0].revents)
		jig_poke(c->ab[1]);
	return NULL;
}

/* Just before the launch: the child's Run/0 reader, with its effects and
 * bindings. */
static int ready(void *arg, struct jig_error *e)
{
	struct jig_child *c = arg;
	c->callee = (struct jig_call_caller){.root = c->caller->root, .f = c->f, .level = c->caller->level + 1,
					     .rundir = c->dirfd, .outroot = -1, .abort_fd = c->cancel[0], .children = json_array()};
	if (jig_flow_effects_start(&c->fx, &c->cr0, c->sv[0], c->ab[1], c->f->n_bindings ? &c->callee : NULL,
				   c->r0->budget /* one record tree */) < 0) {
		failf(c, "Run/0", "cannot start its reader");
		return jig_err(e, JIG_E_INTERNAL, "%s", c->why);
	}
	c->have_cr0 = true;
	struct timespec ts; /* as the root's started_ms: the timeline's origin */
	clock_gettime(CLOCK_REALTIME, &ts);
	c->started_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return 0;
}

/* Launches the child's Flow scope with its Run/0 read alongside; returns
 * when it is fenced and its own children are joined. */
static int launch(struct jig_child *c)
{
	struct jig_call_root *root = c->caller->root;
	const struct jig_scope_template *t = jig_plan_scope(root->pl, c->f->name, NULL);
	if (!t)
		return failf(c, "the child", "has no composed scope");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sv) < 0 || pipe2(c->ab, O_CLOEXEC) < 0 ||
	    pipe2(c->cancel, O_CLOEXEC) < 0 || pipe2(c->relay_stop, O_CLOEXEC) < 0 ||
	    (c->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return failf(c, "Run/0", strerror(errno));
	struct jig_flow_site site = {.sb = root->sb, .pl = root->pl, .init_fd = root->init_fd, .companion_pid = root->outer_pid,
				     .statefd = root->p->statefd, .abort_fd = c->cancel[0], .run_dir = c->run_dir,
				     .rundir = c->dirfd};
	jig_flow_effects_init(&c->fx, c->f, &site);
	pthread_t rt;
	if (pthread_create(&rt, NULL, relay, c) != 0)
		return failf(c, "the child", "cannot start its abort relay");
	const struct jig_scope_slot slots[] = {{"null", c->devnull}, {"run0", c->sv[1]}};
	struct jig_launch s = {.sb = root->sb, .t = t,
			       .run = {.run_dir = c->run_dir, .slots = slots, .n_slots = 2, .wall_ms = c->wall_ms},
			       .l = {.init_fd = root->init_fd, .abort_fd = c->ab[0], .companion_pid = root->outer_pid,
				     /* a caller: its stages hidden on its own output */
				     .output_ready = c->f->n_bindings ? jig_call_output_ready : NULL, .output_ctx = &c->callee},
			       .stop = JIG_LAUNCH_STOP_NONE, .ready = ready, .ctx = c};
	struct jig_error e = {0};
	int rc = jig_launch(&s, &c->sr, &e);
	c->launched = s.launched;
	if (s.launched) {
		close(c->sv[1]);
		c->sv[1] = -1;
		jig_poke(c->cancel[1]); /* the child is fenced: its effects and children are */
		jig_run0_join(&c->cr0);
		jig_call_join(&c->callee);
		if (c->callee.root)
			jig_call_output_close(&c->callee);
	}
	if (rc && !c->why[0])
		failf(c, "the child's scope was refused", e.msg);
	jig_poke(c->relay_stop[1]);
	pthread_join(rt, NULL);
	return rc ? -1 : 0;
}

static const char *verdict(struct jig_child *c)
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

/* path below dir, opened read-only (with flags) without following any
 * link or leaving the file system (the caller's output is the payload's
 * to change). */
static int open_beneath_as(int dir, const char *path, int flags)
{
	struct open_how how = {.flags = (unsigned)(O_RDONLY | O_NOFOLLOW | O_CLOEXEC | flags),
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	return (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
}

/* A directory below dir, so opened. */
static int open_beneath(int dir, const char *path)
{
	return open_beneath_as(dir, path, O_DIRECTORY);
}

/* The parent directory of the caller's output path to (below pub),
 * made as needed; *base its last name. */
static int import_parent(int root, const char *to, const char **base)
{
	char rel[PATH_MAX];
	int dir = open_beneath(root, "pub");
	snprintf(rel, sizeof(rel), "%s", to);
	char *s = rel, *slash;
	while (dir >= 0 && (slash = strchr(s, '/'))) {
		*slash = '\0';
		if (mkdirat(dir, s, 0755) < 0 && errno != EEXIST) {
			close(dir);
			return -1;
		}
		int next = open_beneath(dir, s);
		close(dir);
		dir = next;
		s = slash + 1;
	}
	*base = to + (s - rel);
	return dir;
}

/* Puts the files an import renamed so far back into its stage (never
 * replacing anything), so that a failed import leaves nothing imported.
 * false: one could not be moved back; it stays in the caller's /output
 * and the record says which. */
static bool unimport(struct jig_child *c, int root, int stage, json_t *staged, size_t done)
{
	bool all = true;
	const char *to;
	json_t *k;
	size_t i = 0;
	json_object_foreach(staged, to, k) {
		if (i++ == done)
			break;
		const char *base;
		jig_autoclose int dir = import_parent(root, to, &base);
		if (dir < 0 || renameat2(dir, base, stage, json_string_value(k), RENAME_NOREPLACE) < 0)
			all = false;
		else
			json_object_del(c->staged, to);
	}
	return all;
}

/* The native caller owner's import (decision 115): unless the caller is
 * fenced, each staged file is renamed into the caller's /output, never
 * replacing anything there; one that cannot be renamed undoes the ones
 * before it (all or nothing, issue 47); then the stage goes. */
static int import_stage(struct jig_child *c, int root, const char *stage_path, int stage, json_t *staged)
{
	struct pollfd p = {c->caller->abort_fd, POLLIN, 0};
	int r = poll(&p, 1, 0) != 0 ? failf(c, "import", "the caller ended before the import; nothing was imported") : 0;
	const char *to, *base;
	json_t *k;
	size_t done = 0;
	JIG_FAULT_POINT("import stage"); /* staged, hidden, not yet renamed */
	json_object_foreach(staged, to, k) {
		if (r)
			break;
		jig_autoclose int dir = import_parent(root, to, &base);
		/* The test fault "third import rename": the third rename fails
		 * (binding.s05_import_all_or_nothing). */
		bool fault = done == 2 && JIG_FAULT_FAILS("third import rename");
		if (dir < 0 || fault || renameat2(stage, json_string_value(k), dir, base, RENAME_NOREPLACE) < 0) {
			int err = fault ? EIO : errno;
			char what[300];
			snprintf(what, sizeof(what), "import into /output/%s", to);
			char detail[300];
			bool back = unimport(c, root, stage, staged, done);
			snprintf(detail, sizeof(detail), "%s%s", strerror(err),
				 !done ? ""
				 : back ? "; the files imported before it were taken back: nothing was imported"
					: "; a file imported before it could not be taken back and stays in the caller's /output");
			r = failf(c, what, detail);
			break;
		}
		char at[PATH_MAX];
		snprintf(at, sizeof(at), "/output/%s", to);
		json_object_set_new(c->staged, to, json_string(at));
		done++;
	}
	remove_stage(c, root, stage_path);
	return c->stage_left ? -1 : r;
}

/* The write map's files of the fenced, validated child output out (its
 * held tmpfs: no writer is left) into the caller's hidden stage <id> on
 * its own output tmpfs (bounded, 64 KiB at a time, charged to its 16 MiB
 * volume), then imported. */
static int stage_and_import(struct jig_child *c, int out, struct jig_tree_limits *l)
{
	pthread_mutex_lock(&c->caller->root->lock);
	int root = c->caller->outroot >= 0 ? dup(c->caller->outroot) : -1;
	pthread_mutex_unlock(&c->caller->root->lock);
	if (root < 0)
		return failf(c, "the caller's import stage", "its output has no hidden stage area");
	char path[64];
	snprintf(path, sizeof(path), "stage/%lld", (long long)c->id);
	jig_autoclose int stage = mkdirat(root, path, 0700) == 0 ? open_beneath(root, path) : -1;
	if (stage < 0) {
		failf(c, "the caller's import stage", strerror(errno));
		close(root);
		return -1;
	}
	struct jig_tree_stats sst = {.list = NULL};
	struct jig_error e = {0};
	json_t *staged = json_object();
	int r = 0;
	l->what = "the caller's import stage";
	l->allowed = NULL;
	for (size_t i = 0; r == 0 && i < c->b->n_write; i++) {
		jig_autoclose int fd = open_beneath_as(out, c->b->write[i].child, O_NONBLOCK);
		if (fd < 0 && errno == ENOENT)
			continue; /* the child did not write it */
		if (fd < 0) {
			r = failf(c, "import", strerror(errno));
			break;
		}
		char k[24];
		snprintf(k, sizeof(k), "%zu", i);
		if (jig_tree_copy_file(fd, k, stage, l, &sst, &e) < 0)
			r = failf(c, "import", e.msg);
		else
			json_object_set_new(staged, c->b->write[i].caller, json_string(k));
	}
	if (r == 0)
		r = import_stage(c, root, path, stage, staged);
	else
		remove_stage(c, root, path);
	json_decref(staged);
	close(root);
	return r;
}

/* Final validation of the fenced child's output where it is (its held
 * tmpfs: the child and its own children are fenced and joined, so nothing
 * writes there; no copy in its run directory, which would sit outside the
 * six output backings' 96 MiB, R-S08 #180), then the write map's files
 * staged and imported into the caller's output. */
static int collect(struct jig_child *c)
{
	struct jig_tree_limits l = {.what = "child output", .max_files = JIG_OUTPUT_MAX_FILES, .max_entries = JIG_OUTPUT_MAX_ENTRIES,
				    .max_bytes = JIG_OUTPUT_MAX_BYTES, .reject_sparse = true, .allowed = c->f->outputs,
				    .n_allowed = c->f->n_outputs, .reject_xattr = true}; /* R-S06, decision 122 */
	struct jig_tree_stats st = {.list = c->outputs};
	struct jig_error e = {0};
	if (c->sr.held_fd < 0)
		return failf(c, "child output", "was not held");
	if (jig_tree_copy(c->sr.held_fd, "", -1, &l, &st, &e) < 0)
		return failf(c, "child output refused", e.msg);
	return c->b->n_write ? stage_and_import(c, c->sr.held_fd, &l) : 0;
}

/* The record's node: binding, scope, reservation, outcome, termination,
 * cleanup, and what the child did. */
static void node(struct jig_child *c, bool launched, bool cleaned, bool released)
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
				    json_pack("{s:s,s:i,s:i,s:b,s:b,s:I,s:I,s:I,s:I,s:s}", "outcome", jig_scope_outcome_name(c->sr.outcome), "exit_status",
					      c->sr.exit_status, "signal", c->sr.signal, "fenced", c->sr.fenced, "aborted", c->sr.aborted,
					      "wall_ms", (json_int_t)c->sr.wall_ms, "memory_peak_bytes", (json_int_t)c->sr.memory_peak_bytes,
					      "oom_kills", (json_int_t)c->sr.oom_kills, "pids_max_hits", (json_int_t)c->sr.pids_max_hits,
					      "cgroup", c->sr.cgroup));
	if (launched) { /* ABI 1.4: whether the child's Flow started at all */
		json_object_set_new(json_object_get(n, "termination"), "payload_started", jig_scope_payload_started_json(&c->sr));
		/* Issue 35: the timeline's facts (when, CPU, the scope's limits) */
		json_object_set_new(json_object_get(n, "termination"), "cpu_usec", json_integer((json_int_t)c->sr.cpu_usec));
		if (c->started_ms)
			json_object_set_new(n, "started_ms", json_integer((json_int_t)c->started_ms));
		if (t)
			json_object_set_new(n, "limits", json_pack("{s:I,s:I,s:I,s:I}", "memory_bytes", (json_int_t)t->policy.limits.memory_bytes,
								  "tasks", (json_int_t)t->policy.limits.tasks, "cpu_quota_us",
								  (json_int_t)t->policy.limits.cpu_quota_us, "wall_ms", (json_int_t)c->wall_ms));
	}
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
		if (jig_flow_effects_any(c->f))
			json_object_set(n, "effects", c->cr0.effects);
		jig_run0_note_cuts(&c->cr0, n);
	}
	if (c->callee.children)
		json_object_set(n, "children", c->callee.children);
}

void jig_child_free(struct jig_child *c)
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

void *jig_child_main(void *arg)
{
	struct jig_child *c = arg;
	struct jig_call_root *root = c->caller->root;
	long long t0 = jig_progress_now_ms();
	jig_progress_status("flow %s: child %s (binding %s) starting", c->caller->f->name, c->b->flow, c->b->name);
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
	bool cleaned = removed && !c->stage_left && (!c->launched || c->sr.cleanup_confirmed);
	pthread_mutex_lock(&root->lock);
	if (cleaned && c->caller->level == 0)
		jig_ledger_release(root, c->key, &c->res);
	else if (!cleaned) {
		root->held = true; /* never released: the rest of the Run runs under it */
		jig_ledger_write(root);
	}
	/* Imported or removed by now; an unconfirmed cleanup never releases
	 * its destination (the caller's stage slot) for retry, as it keeps its
	 * reservation (R-L02). */
	if (c->stage_slot && cleaned)
		c->caller->stages--;
	if (!c->stage_slot || cleaned) /* a stage kept stays a live edge */
		root->edges--;
	c->caller->in_flight--;
	node(c, c->launched, cleaned, cleaned);
	json_array_append(c->caller->children, c->node);
	pthread_mutex_unlock(&root->lock);
	long long ms = jig_progress_now_ms() - t0; /* outside the lock: a terminal may block a write */
	jig_progress_line("flow %s: child %s (binding %s): %s (%lld.%llds)%s", c->caller->f->name, c->b->flow, c->b->name, c->status,
			  ms / 1000, (ms % 1000) / 100, cleaned ? "" : "; cleanup NOT confirmed");
	json_t *m = json_pack("{s:s,s:I,s:b,s:s,s:O}", "op", "call", "id", c->id, "ok", strcmp(c->status, "succeeded") == 0, "outcome",
			      c->status, "outputs", c->staged);
	if (c->why[0])
		json_object_set_new(m, "error", json_string(c->why));
	/* Whether the child's Flow started: "never ran" apart from "ran and
	 * failed or was killed" (null: the sandbox module does not say). */
	json_object_set_new(m, "started", c->launched ? jig_scope_payload_started_json(&c->sr) : json_false());
	if (!c->stage_left) /* an ended caller is never answered: its program does not resume */
		jig_run0_send(c->r0, m);
	json_decref(m);
	jig_child_free(c);
	return NULL;
}
