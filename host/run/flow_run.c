/* One Flow run: the spine of flow_run.h, one function per step. */
#include <jig/trace.h>

#include "run/flow_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "display/display.h"
#include "effects/checkpoint.h"
#include "flow/plan.h"
#include "flow/plan_diff.h"
#include "flow/tree.h"
#include "run/call.h"
#include "run/flow_effects.h"
#include "packet/history.h"
#include "run/outer.h"
#include "publish/publish.h"
#include "run/recovery.h"
#include "packet/record.h"
#include "run/run0.h"
#include "packet/why.h"
#include "sandbox/scope.h"
#include "snapshot/verify.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/progress.h"
#include "util/text.h"

struct run {
	const struct jig_run_request *req;
	struct jig_project p;
	struct jig_snapshot s;
	struct jig_verifier v;
	struct jig_plan pl;
	struct jig_sandbox sb;
	bool have_project, have_snapshot, have_verifier, have_sandbox, have_run0;
	const struct jig_flow *f;
	const struct jig_scope_template *tmpl;
	int init_fd, rundir, devnull, interrupt, sv[2], ab[2], cancel[2];
	struct jig_publish pub;
	json_t *inputs, *outputs;
	struct jig_run0 r0;
	struct jig_flow_effects fx;
	struct jig_scope_result res;
	long long started_ms;
	long long accepted_ms; /* CLOCK_MONOTONIC: the Run's acceptance, where its deadline starts (R-L01) */
	/* Bindings (run/call.h): the root's ledger and its calls. */
	struct jig_call_root calls;
	struct jig_call_caller caller;
	bool have_calls;
	struct jig_live *live; /* --display web */
	json_t *changes; /* a stale Plan's differences from the admitted one (flow/plan_diff.h) */
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What is left of the Run's deadline for its scope: at least the shortest
 * a scope may have (0 would be the template's own), so a deadline spent
 * on capture is a timeout, overshot by at most that. */
static uint64_t deadline_left(const struct run *r)
{
	long long left = r->accepted_ms + (long long)r->req->timeout_ms - mono_ms();
	return left > JIG_SCOPE_WALL_MIN_MS ? (uint64_t)left : JIG_SCOPE_WALL_MIN_MS;
}

/* Every --input names a declared input, and every declared one is given. */
static int check_inputs(const struct jig_run_request *req, const struct jig_flow *f, struct jig_error *e)
{
	for (size_t k = 0; k < req->n_inputs; k++) {
		bool declared = false;
		for (size_t j = 0; j < f->n_inputs; j++)
			declared |= strcmp(f->inputs[j], req->inputs[k].name) == 0;
		char list[400];
		if (!declared)
			return jig_err(e, JIG_E_USAGE, "flow %s declares no input \"%s\"; its inputs (flow.json): %s", f->name,
				       req->inputs[k].name, jig_text_list(list, sizeof(list), f->inputs, f->n_inputs));
	}
	for (size_t j = 0; j < f->n_inputs; j++) {
		bool given = false;
		for (size_t k = 0; k < req->n_inputs; k++)
			given |= strcmp(f->inputs[j], req->inputs[k].name) == 0;
		if (!given)
			return jig_err(e, JIG_E_USAGE, "flow %s needs --input %s=PATH", f->name, f->inputs[j]);
	}
	return 0;
}

/* The Plan of the project as it is now, built from the catalog as at
 * review (every Run derives it: decision 195), and the admitted Plan's
 * identity into admitted. */
static int plan(struct run *r, char admitted[JIG_SHA256_HEX], struct jig_error *e)
{
	jig_progress_status("flow %s: building the Plan", r->f->name);
	int rc = jig_plan_build(&r->p, &r->s, &r->pl, e);
	if (!rc)
		rc = jig_plan_admitted(&r->p, admitted, e);
	JIG_TRACE_POINT("plan: derived");
	return rc;
}

/* admit: the Plan of the project as it is now, against the snapshot
 * installed now, must be the admitted one; the installed tools are the
 * reviewed bytes (by the operator's verification mode). */
static int admit(struct run *r, struct jig_error *e)
{
	const struct jig_run_request *req = r->req;
	char libdir[PATH_MAX], admitted[JIG_SHA256_HEX];
	int rc;
	if ((rc = jig_verifier_init(&r->v, req->verification, JIG_VERIFY_CACHED, e)))
		return rc;
	r->have_verifier = true;
	if (geteuid() == 0)
		return jig_err(e, JIG_E_HOST, "refusing to run a Flow as root; jig is a rootless tool, run it as an unprivileged user");
	if ((rc = jig_project_open_run(req->project, &r->p, e)))
		return rc;
	r->have_project = true;
	if (!(r->f = jig_project_flow(&r->p, req->flow)))
		return jig_project_no_flow(&r->p, req->flow, e);
	/* Admitted by this operator for this directory, before anything else
	 * is captured or derived (decision 190): a carried admission is
	 * refused here, "not admitted by you". */
	if ((rc = jig_plan_admitted(&r->p, admitted, e)))
		return rc;
	struct jig_signature_memo memo = jig_verifier_signature_memo(&r->v);
	if ((rc = check_inputs(req, r->f, e)) || (rc = jig_project_capture(&r->p, false, e)) ||
	    (rc = jig_snapshot_default_libdir(libdir, sizeof(libdir), e)) ||
	    (rc = jig_snapshot_open_installed_memo(&r->s, libdir, &memo, e)))
		return rc;
	r->have_snapshot = true;
	r->s.verifier = &r->v; /* memos: the catalog's check, an unchanged root-owned module (decisions 85, 86) */
	if ((rc = jig_plan_verify_installation(&r->s, &r->v, &r->init_fd, e)) || (rc = plan(r, admitted, e)))
		return rc;
	if (strcmp(admitted, r->pl.sha256) != 0) { /* named: the Flow and the changed file or fact (jig why keeps them all) */
		json_t *was = jig_plan_admitted_doc(&r->p, admitted);
		r->changes = was ? jig_plan_diff(&r->p, was, r->pl.doc, false) : NULL;
		json_decref(was);
		return jig_plan_stale(r->changes, r->f->name, admitted, r->pl.sha256, e);
	}
	r->f = jig_project_flow(&r->p, req->flow);
	if (!(r->tmpl = jig_plan_scope(&r->pl, r->f->name, NULL)))
		return jig_err(e, JIG_E_INTERNAL, "flow %s has no composed scope", r->f->name);
	if ((rc = jig_sandbox_open(&r->sb, &r->s, e)))
		return rc;
	r->have_sandbox = true;
	return jig_publish_open(&r->pub, req->output, e);
}

/* Captures one attachment into inputdir/NAME. The project's protected
 * state (.jig) is never attachable, not even inside a larger tree. */
static int attach(const struct jig_run_input *in, int inputdir, int statefd, struct jig_tree_stats *st,
		  struct jig_error *e)
{
	char what[128];
	snprintf(what, sizeof(what), "attachment %s", in->name);
	JIG_FAULT_DELAY("attach"); /* a slow capture, inside the deadline (test-only) */
	struct jig_tree_limits l = {.what = what, .max_files = JIG_INPUT_MAX_FILES, .max_entries = JIG_INPUT_MAX_FILES * 4,
				    .max_bytes = JIG_INPUT_MAX_BYTES, .reject_sparse = true, .deny_name = ".jig"};
	jig_autoclose int fd = open(in->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "%s (%s): %s", what, in->path,
			       errno == ELOOP ? "is a symbolic link; attach the real file" : strerror(errno));
	char fs[32];
	if (!jig_tree_fs_ok(fd, fs, sizeof(fs)))
		return jig_err(e, JIG_E_USAGE, "%s (%s): is on %s; attachments are captured from ext4, XFS, Btrfs or tmpfs only", what, in->path, fs);
	struct stat sb, state;
	if (fstat(fd, &sb) < 0 || fstat(statefd, &state) < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", what, strerror(errno));
	if (sb.st_dev == state.st_dev && sb.st_ino == state.st_ino)
		return jig_err(e, JIG_E_USAGE, "%s (%s): is the project's protected .jig state; refused", what, in->path);
	if (S_ISREG(sb.st_mode))
		return jig_tree_copy_file(fd, in->name, inputdir, &l, st, e);
	if (!S_ISDIR(sb.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s (%s): is a special file; refused", what, in->path);
	if (mkdirat(inputdir, in->name, 0700) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", what, strerror(errno));
	jig_autoclose int dst = openat(inputdir, in->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = dst < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", what, strerror(errno)) : jig_tree_copy(fd, in->name, dst, &l, st, e);
	if (!rc && fchmod(dst, 0555) < 0)
		rc = jig_err(e, JIG_E_INTERNAL, "%s: cannot make it read-only: %s", what, strerror(errno));
	return rc;
}

/* prepare: the package and the attachments in the outer command's private
 * run directory (under /tmp, so the scope's mount table names no user,
 * project or .jig path). */
static int prepare(struct run *r, struct jig_error *e)
{
	struct stat st;
	errno = 0;
	if ((r->rundir = open(r->req->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(r->rundir, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700 ||
	    mkdirat(r->rundir, "package", 0700) < 0 || mkdirat(r->rundir, "input", 0700) < 0)
		return jig_err(e, JIG_E_INTERNAL, "the run directory %s: %s", r->req->run_dir, errno ? strerror(errno) : "not private");
	jig_autoclose int pk = openat(r->rundir, "package", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	jig_autoclose int in = openat(r->rundir, "input", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char fs[32];
	int rc = pk < 0 || in < 0 ? jig_err(e, JIG_E_INTERNAL, "the run directory: %s", strerror(errno))
				  : jig_store_materialise(&r->p, r->f->package_sha256, pk, e);
	if (!rc && !jig_tree_fs_ok(in, fs, sizeof(fs)))
		rc = jig_err(e, JIG_E_USAGE, "%s is on %s; attachments are captured onto ext4, XFS, Btrfs or tmpfs only", r->req->run_dir, fs);
	/* The prepared npm dependencies the Plan names, beside the package
	 * (read-only there: the package is bound read-only). */
	const char *deps = json_string_value(json_object_get(json_object_get(jig_plan_flow(&r->pl, r->f->name), "dependencies"), "tree"));
	if (!rc && deps) {
		jig_autoclose int nm = mkdirat(pk, "node_modules", 0755) == 0 ? openat(pk, "node_modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		rc = nm < 0 ? jig_err(e, JIG_E_USAGE, "flow %s: its package has its own node_modules; nothing was run", r->f->name)
			    : jig_store_materialise(&r->p, deps, nm, e);
		if (!rc && fchmod(nm, 0555) < 0)
			rc = jig_err(e, JIG_E_INTERNAL, "the run directory's node_modules: %s", strerror(errno));
	}
	struct jig_tree_stats ist = {.list = r->inputs};
	for (size_t k = 0; !rc && k < r->req->n_inputs; k++)
		rc = attach(&r->req->inputs[k], in, r->p.statefd, &ist, e), JIG_FAULT_POINT("capture");
	if (!rc && r->req->n_inputs) {
		char b[32];
		jig_progress_bytes(b, sizeof(b), ist.bytes);
		jig_progress_line("flow %s: captured its inputs: %zu files, %s", r->f->name, ist.files, b);
	}
	if (!rc && (fchmod(pk, 0555) < 0 || fchmod(in, 0555) < 0))
		rc = jig_err(e, JIG_E_INTERNAL, "the run directory: cannot make the package and the attachments read-only: %s", strerror(errno));
	return rc;
}

/* Bindings: the root's durable ledger (its own envelope first) and the
 * root as a caller; its children are fenced when it is (cancel). */
static int bindings_start(struct run *r, struct jig_error *e)
{
	r->calls = (struct jig_call_root){.p = &r->p, .pl = &r->pl, .sb = &r->sb, .init_fd = r->init_fd, .outer_pid = r->req->outer_pid,
					  .run_dir = r->req->run_dir, .rundir = r->rundir,
					  .deadline_ms = r->accepted_ms + (long long)r->req->timeout_ms};
	int rc = jig_call_root_init(&r->calls, r->tmpl, e);
	r->caller = (struct jig_call_caller){.root = &r->calls, .f = r->f, .rundir = r->rundir, .outroot = -1, .abort_fd = r->cancel[0],
					     .children = json_array()};
	r->have_calls = true;
	return rc;
}

/* The scope's end state for a live display, with its limits. */
static json_t *fenced_view(const struct run *r)
{
	const struct jig_scope_result *res = &r->res;
	const struct jig_scope_limits *l = &r->tmpl->policy.limits; /* as resolved, but for the deadline */
	return json_pack("{s:s,s:s,s:s,s:i,s:i,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "name", "Run", "state", "fenced",
			 "outcome", jig_scope_outcome_name(res->outcome), "exit_status", res->exit_status, "signal", res->signal,
			 "fenced", res->fenced, "cleanup_confirmed", res->cleanup_confirmed, "memory_peak_bytes",
			 (json_int_t)res->memory_peak_bytes, "memory_max_bytes", (json_int_t)l->memory_bytes, "oom_kills",
			 (json_int_t)res->oom_kills, "tasks_max", (json_int_t)l->tasks, "pids_max_hits",
			 (json_int_t)res->pids_max_hits, "cpu_usec", (json_int_t)res->cpu_usec, "cpu_quota_usec_per_100ms",
			 (json_int_t)l->cpu_quota_us, "wall_ms", (json_int_t)res->wall_ms);
}

/* Just before the launch, with the stop signals blocked (the Run/0 reader
 * inherits the mask): what a recovery-only coordinator needs if this one
 * is lost, the root's bindings, Run/0's reader. */
static int ready(void *ctx, struct jig_error *e)
{
	struct run *r = ctx;
	int rc;
	if ((rc = jig_recovery_bind(r->rundir, r->req->project, r->f->name, r->pl.sha256, r->f->package_sha256,
				    r->req->timeout_ms, r->req->expiry_ms, r->f->checkpoint, e)))
		return rc;
	if (r->f->n_bindings && (rc = bindings_start(r, e)))
		return rc;
	if (jig_flow_effects_start(&r->fx, &r->r0, r->sv[0], r->ab[1], r->have_calls ? &r->caller : NULL, NULL) < 0)
		return jig_err(e, JIG_E_INTERNAL, "Run/0: cannot start its reader");
	r->have_run0 = true;
	r->started_ms = now_ms();
	jig_progress_status("flow %s: running", r->f->name);
	jig_live_attach(r->live, r->r0.logs, r->r0.effects, &r->r0.data_lock, r->have_calls ? r->caller.children : NULL,
			&r->calls.lock);
	return 0;
}

/* launch: the Plan's scope for this Flow with this run's slot values, and
 * Run/0 read alongside. Returns when the scope is fenced. */
static int launch(struct run *r, struct jig_error *e)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sv) < 0 || pipe2(r->ab, O_CLOEXEC) < 0 ||
	    pipe2(r->cancel, O_CLOEXEC) < 0 || (r->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		return jig_err(e, JIG_E_INTERNAL, "Run/0: %s", strerror(errno));
	struct jig_flow_site site = {.sb = &r->sb, .pl = &r->pl, .init_fd = r->init_fd, .companion_pid = r->req->outer_pid,
				     .statefd = r->p.statefd, .abort_fd = r->cancel[0], .run_dir = r->req->run_dir,
				     .rundir = r->rundir};
	jig_flow_effects_init(&r->fx, r->f, &site);
	/* From the launch a cancellation (SIGTERM from the outer command) is
	 * the supervisor's to handle (it fences and reports it): blocked in
	 * this thread and in the Run/0 reader, relayed to the supervisor
	 * through a signalfd. The mask stays: the coordinator ends after the
	 * Run. */
	const struct jig_scope_slot slots[] = {{"null", r->devnull}, {"run0", r->sv[1]}};
	jig_progress_status("flow %s: launching its scope", r->f->name);
	struct jig_launch s = {.sb = &r->sb, .t = r->tmpl,
			       .run = {.run_dir = r->req->run_dir, .slots = slots, .n_slots = 2, .wall_ms = deadline_left(r)},
			       .l = {.init_fd = r->init_fd, .abort_fd = r->ab[0], .companion_pid = r->req->outer_pid,
				     /* a caller: its stages hidden on its own output */
				     .output_ready = r->f->n_bindings ? jig_call_output_ready : NULL, .output_ctx = &r->caller},
			       .stop = JIG_LAUNCH_STOP_KEEP, .ready = ready, .ctx = r};
	int rc = jig_launch(&s, &r->res, e);
	r->interrupt = s.interrupt;
	if (!s.launched)
		return rc;
	if (r->live)
		jig_live_fenced(r->live, fenced_view(r));
	close(r->sv[1]);
	r->sv[1] = -1;
	jig_poke(r->cancel[1]); /* the Flow is fenced: a request in flight is cancelled */
	jig_run0_join(&r->r0);
	if (r->have_calls) {
		jig_call_join(&r->caller); /* fenced with the root (cancel), reservations settled */
		jig_call_output_close(&r->caller);
	}
	return rc ? jig_err(e, JIG_E_HOST, "flow %s refused: %s", r->f->name, e->msg) : 0;
}

/* The verdict from the supervisor's result and Run/0. */
static const char *verdict(const struct run *r, char *why, size_t cap)
{
	const struct jig_scope_result *res = &r->res;
	const struct jig_run0 *r0 = &r->r0;
	const char *status = "succeeded";
	why[0] = '\0';
	int sig = res->interrupted_by ? res->interrupted_by : r0->interrupted_by;
	/* The outer command says why it stopped us: the operator's signal
	 * or the command's expiry (else the signal the supervisor saw). */
	int cause = sig ? jig_outer_stop_cause() : 0;
	if (cause > 0)
		sig = cause;
	const char *abbrev = sig > 0 && sig < 65 ? sigabbrev_np(sig) : NULL;
	if (cause < 0)
		status = "cancelled", snprintf(why, cap, "cancelled: the command's expiry of %llu ms passed (SIGTERM); the scope was fenced",
					       (unsigned long long)r->req->expiry_ms);
	else if (sig)
		status = "cancelled", snprintf(why, cap, "cancelled by %sSIG%s (signal %d); the scope was fenced",
					       cause > 0 ? "the operator: " : "", abbrev ? abbrev : "?", sig);
	else if (r0->violation)
		status = "failed", snprintf(why, cap, "%s", r0->error);
	else if (res->outcome == JIG_SCOPE_TIMEOUT)
		status = "timeout", snprintf(why, cap, "the Run passed its %llu ms deadline (from its acceptance, input capture included) and was fenced",
					     (unsigned long long)r->req->timeout_ms);
	else if (res->signal && (res->outcome == JIG_SCOPE_CRASHED || res->outcome == JIG_SCOPE_SIGNALED))
		status = "failed", jig_scope_signal_text(why, cap, "the Flow", res->signal, res->core_dumped, r0->error);
	else if (res->outcome != JIG_SCOPE_EXITED || res->exit_status != 0 || !r0->done)
		status = "failed", snprintf(why, cap, "%s", r0->error[0] ? r0->error : res->error[0] ? res->error : "the Flow did not complete");
	if (!res->cleanup_confirmed)
		status = "failed", snprintf(why, cap, "cleanup not confirmed: %s", res->error);
	return status;
}

/* --display web: the final view and the staged files' captures, then
 * retirement within its allowance, before the commit: a failure of it is
 * the command's cleanup failure, beside the Run's facts (not its status). */
static void display_retire(struct run *r, json_t *rec)
{
	char why[600];
	struct jig_live *l = r->live;
	r->live = NULL;
	if (!l || !rec)
		return jig_live_close(l);
	char head[1024];
	jig_why_headline(rec, r->req->output, head, sizeof(head)); /* jig run's first line */
	const char *failed = jig_live_finish(l, r->pub.stagefd, rec, head, why, sizeof(why));
	if (failed)
		json_object_set_new(rec, "command_cleanup", json_pack("{s:s,s:s}", "display", "failed", "why", failed));
}

/* collect and publish: final validation of the output (writers are fenced;
 * the launcher's held descriptor keeps the tmpfs), the record, the rename. */
static int publish(struct run *r, struct jig_run_outcome *out, struct jig_error *e)
{
	char why[700];
	const char *status = verdict(r, why, sizeof(why));
	int rc = jig_publish_stage(&r->pub, r->req->run_dir, e);
	if (!rc && strcmp(status, "succeeded") == 0)
		rc = r->res.held_fd < 0 ? jig_err(e, JIG_E_INTERNAL, "the scope's output was not held; nothing published")
					: jig_publish_collect(&r->pub, r->res.held_fd, r->f->outputs, r->f->n_outputs, r->outputs, e);
	/* A refused output fails the Run, it does not lose it: the packet
	 * keeps the record and the logs, no file (issue 46). */
	if (rc == -JIG_E_USAGE) {
		status = "failed";
		snprintf(why, sizeof(why), "%.600s", e->msg);
		rc = jig_publish_discard_files(&r->pub, r->outputs, e);
	}
	if (rc)
		return rc;
	struct jig_record_facts facts = {.status = status, .why = why, .flow = r->f->name, .plan_sha256 = r->pl.sha256,
					 .package_sha256 = r->f->package_sha256, .timeout_ms = r->req->timeout_ms,
					 .started_ms = r->started_ms, .inputs = r->inputs, .outputs = r->outputs, .logs = r->r0.logs};
	json_t *rec = jig_record_new(&facts, &r->res);
	if (rec) /* the command's expiry (R-L05): null for none */
		json_object_set_new(rec, "expiry_ms", r->req->expiry_ms ? json_integer((json_int_t)r->req->expiry_ms) : json_null());
	if (rec && jig_flow_effects_any(r->f))
		json_object_set(rec, "effects", r->r0.effects);
	if (rec)
		jig_run0_note_cuts(&r->r0, rec); /* what the caps did not keep */
	if (rec && r->have_calls) { /* the tree of children (run/call.h) */
		json_object_set(rec, "children", r->caller.children);
		json_object_set_new(rec, "root_budget", jig_call_root_json(&r->calls));
	}
	/* Interrupted progress, after confirmed fencing only: the accepted
	 * checkpoint (never unfinished output files); completion says so. */
	json_t *ck = NULL;
	if (rec && r->f->checkpoint && strcmp(status, "succeeded") == 0)
		ck = json_pack("{s:s,s:I}", "progress", "completed", "saves", (json_int_t)r->fx.checkpoint.saves);
	else if (rec && r->f->checkpoint && r->res.cleanup_confirmed && jig_checkpoint_publish(r->rundir, r->pub.stagefd, &ck, e) < 0) {
		json_decref(rec);
		return -JIG_E_INTERNAL;
	}
	if (ck)
		json_object_set_new(rec, "checkpoint", ck);
	/* The scope that ran: the Plan's digest and its canonical policy (this
	 * run's slot values are not part of it); before the display's final
	 * view, which shows its limits. */
	if (rec) {
		json_object_set_new(rec, "verification", jig_verifier_json(&r->v));
		json_object_set_new(rec, "scope", json_pack("{s:s,s:O}", "policy_sha256", r->tmpl->policy.sha256, "policy",
							   r->tmpl->policy.doc));
	}
	display_retire(r, rec);
	/* Never more than jig inspect reads: over it, cut and failed (issue 31). */
	bool cut = false;
	char *txt = rec ? jig_record_text(rec, JIG_RECORD_MAX_BYTES, &cut) : NULL;
	if (cut)
		status = "failed";
	rc = txt ? jig_publish_commit(&r->pub, txt, e)
		 : jig_err(e, JIG_E_INTERNAL, "%s", rec ? "the record does not fit what jig inspect reads even cut; nothing published" : "out of memory");
	free(txt);
	if (rc) {
		json_decref(rec);
		return rc;
	}
	out->record = rec;
	out->succeeded = strcmp(status, "succeeded") == 0;
	return 0;
}

static void finish(struct run *r)
{
	if (r->res.held_fd >= 0)
		close(r->res.held_fd);
	jig_publish_close(&r->pub);
	int fds[] = {r->rundir, r->init_fd, r->devnull, r->interrupt, r->sv[0], r->sv[1], r->ab[0], r->ab[1], r->cancel[0], r->cancel[1]};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_decref(r->inputs);
	json_decref(r->outputs);
	json_decref(r->changes);
	if (r->have_run0)
		jig_run0_free(&r->r0);
	if (r->have_calls) {
		json_decref(r->caller.children);
		jig_call_root_free(&r->calls);
	}
	jig_plan_free(&r->pl);
	if (r->have_verifier)
		jig_verifier_finish(&r->v);
	if (r->have_sandbox)
		jig_sandbox_close(&r->sb);
	if (r->have_snapshot)
		jig_snapshot_close(&r->s);
	if (r->have_project)
		jig_project_close(&r->p);
}

int jig_run_flow(const struct jig_run_request *req, struct jig_run_outcome *out, struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	struct run r = {.req = req, .init_fd = -1, .rundir = -1, .devnull = -1, .interrupt = -1, .sv = {-1, -1}, .ab = {-1, -1},
			.cancel = {-1, -1}, .pub = {.parentfd = -1, .stagefd = -1}, .inputs = json_array(),
			.outputs = json_array(), .res = {.held_fd = -1}};
	JIG_TRACE_POINT("flow: start");
	jig_progress_status("flow %s: checking the project against its admitted Plan", req->flow);
	int rc = admit(&r, e);
	r.accepted_ms = mono_ms(); /* Run acceptance: the deadline starts here (R-L01) */
	JIG_TRACE_POINT("flow: admitted");
	JIG_FAULT_POINT("admitted");
	if (!rc && req->display) {
		struct jig_live_facts lf = {.flow = r.f->name, .plan_sha256 = r.pl.sha256, .package_sha256 = r.f->package_sha256,
					    .timeout_ms = req->timeout_ms, .out = req->display_to};
		rc = jig_live_open(&r.live, &r.s, &lf, e);
	}
	if (!rc) {
		jig_progress_status("flow %s: admitted; preparing its package and inputs", r.f->name);
		rc = prepare(&r, e);
	}
	JIG_TRACE_POINT("flow: prepared");
	if (!rc && (rc = launch(&r, e)) && r.res.needs_delegation) {
		if (req->may_need_transient_scope) {
			out->needs_transient_scope = true; /* nothing ran; the outer starts over */
			rc = 0;
		} else if (req->no_transient_scope_why)
			rc = jig_err(e, JIG_E_HOST, "flow %s refused: %s; no transient scope either: %s", r.f->name, r.res.error,
				     req->no_transient_scope_why);
	}
	JIG_TRACE_POINT("flow: launch returned");
	if (!rc && !out->needs_transient_scope) {
		jig_progress_status("flow %s: ended (%s); collecting and publishing", r.f->name, jig_scope_outcome_name(r.res.outcome));
		rc = publish(&r, out, e);
	}
	jig_live_close(r.live); /* not retired by publish: an error path */
	if (r.have_project && r.f && !out->needs_transient_scope) /* what jig why FLOW explains */
		jig_history_note(r.p.statefd, &(struct jig_history_entry){.flow = r.f->name, .packet = req->output,
									   .record = rc ? NULL : out->record, .refusal = rc ? e : NULL,
									   .changes = r.changes});
	finish(&r);
	JIG_TRACE_POINT("flow: published");
	return rc;
}
