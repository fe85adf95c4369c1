/* jig run FLOW: run an admitted Flow in its scope and publish its packet.
 *
 *   check admission  -> the Plan rebuilt from the project and the installed
 *                       snapshot must be the admitted one, else refuse
 *   prepare          -> private run dir under .jig/runs: the package
 *                       materialised from the store, attachments captured
 *   scope            -> Bun + runtime support + package, inputs read-only,
 *                       scratch, a 16 MiB output tmpfs held open by the
 *                       launcher, Run/0 on descriptor 3, nothing else
 *   Run/0            -> a thread reads bounded NDJSON; abuse ends the Run
 *   collect          -> after fencing: final validation of the output and a
 *                       bounded copy into a private stage next to --output
 *   publish          -> record.json + files/, renameat2(RENAME_NOREPLACE) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jig/http.h>
#include <jig/sandbox.h>

#include "../effects/http.h"
#include "../flow/plan.h"
#include "../flow/timeout.h"
#include "../flow/tree.h"
#include "../snapshot/loader.h"
#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "commands.h"

#define JIG_RUN_DIR_BASE "/tmp"
#define MAX_INPUTS 64
#define INPUT_MAX_FILES 64
#define INPUT_MAX_BYTES (8ull << 20)
#define OUTPUT_MAX_FILES 64
#define OUTPUT_MAX_ENTRIES 256
#define RUN0_MAX_LINE 65536
#define RUN0_MAX_MESSAGES 1024
#define RUN0_MAX_LOGS 256

/* --- Run/0 ------------------------------------------------------------------ */

struct run0 {
	int fd;	      /* our end of the socket */
	int abort_wr; /* written to end the Run */
	json_t *logs;
	bool done;
	char error[512]; /* a protocol violation or the Flow's reported error */
	bool violation;
	/* Effects: the Flow's reviewed HTTP routes, run one at a time. */
	const struct jig_flow *flow;
	struct jig_http_effect_env http;
	json_t *effects; /* evidence, for the record */
	size_t n_http;
	int interrupted_by; /* a stop signal an effect's supervisor took */
};

/* Makes a pipe readable: how the Run (abort_fd) or a request in flight is
 * told to end. The pipe is ours and empty, so the write cannot fail. */
static void poke(int fd)
{
	if (write(fd, "x", 1) < 0) {
		/* nothing else to do */
	}
}

static void run0_fail(struct run0 *r, const char *why)
{
	if (!r->violation) {
		r->violation = true;
		snprintf(r->error, sizeof(r->error), "Run/0: %s", why);
		poke(r->abort_wr);
	}
}

/* A reply to the Flow: one line. The Flow may be gone (never SIGPIPE). */
static void run0_reply(struct run0 *r, json_t *reply)
{
	char *txt = json_dumps(reply, JSON_COMPACT);
	size_t len = txt ? strlen(txt) : 0, off = 0;
	if (txt)
		txt[len++] = '\n'; /* replaces the NUL; json_dumps leaves no room otherwise */
	while (txt && off < len) {
		ssize_t n = send(r->fd, txt + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(txt);
}

static void run0_http(struct run0 *r, json_t *m)
{
	if (++r->n_http > JIG_HTTP_MAX_REQUESTS)
		return run0_fail(r, "more than 64 HTTP requests");
	json_t *reply = NULL, *ev = NULL;
	int sig = 0;
	jig_http_effect(&r->http, r->flow, m, &reply, &ev, &sig);
	json_array_append_new(r->effects, ev);
	if (sig) {
		/* The stop signal reached the worker's supervisor: end the Run. */
		r->interrupted_by = sig;
		poke(r->abort_wr);
	}
	run0_reply(r, reply);
	json_decref(reply);
}

/* One message: {"op":"log","text":S} | {"op":"done"} | {"op":"error","text":S}
 * | {"op":"http","route":S,...} (answered with one line). */
static void run0_message(struct run0 *r, const char *line, size_t len, size_t *count)
{
	if (++*count > RUN0_MAX_MESSAGES)
		return run0_fail(r, "more than 1024 messages");
	json_error_t je;
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const char *op = m ? json_string_value(json_object_get(m, "op")) : NULL;
	if (!m || !json_is_object(m) || !op)
		run0_fail(r, "a message is not a JSON object with an \"op\"");
	else if (strcmp(op, "log") == 0 && json_object_size(m) == 2 && json_is_string(json_object_get(m, "text"))) {
		if (json_array_size(r->logs) < RUN0_MAX_LOGS)
			json_array_append(r->logs, json_object_get(m, "text"));
	} else if (strcmp(op, "http") == 0 && r->flow && r->flow->n_http)
		run0_http(r, m);
	else if (strcmp(op, "done") == 0 && json_object_size(m) == 1)
		r->done = true;
	else if (strcmp(op, "error") == 0 && json_object_size(m) == 2 && json_is_string(json_object_get(m, "text"))) {
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "the Flow failed: %s", json_string_value(json_object_get(m, "text")));
	} else
		run0_fail(r, "unknown or malformed operation");
	json_decref(m);
}

static void *run0_thread(void *arg)
{
	struct run0 *r = arg;
	char *buf = malloc(RUN0_MAX_LINE + 1);
	size_t have = 0, count = 0;
	while (buf) {
		ssize_t n = read(r->fd, buf + have, RUN0_MAX_LINE + 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		char *start = buf, *nl;
		while (!r->violation && (nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			run0_message(r, start, (size_t)(nl - start), &count);
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have > RUN0_MAX_LINE)
			run0_fail(r, "a message is longer than 64 KiB");
		if (r->violation)
			break; /* the Run is ending; stop reading its bytes */
	}
	free(buf);
	return NULL;
}

/* --- helpers ------------------------------------------------------------------ */


static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct input {
	char *name;
	const char *path;
};

static int usage(void)
{
	fprintf(stderr, "usage: jig run FLOW --output DIR [--input NAME=PATH]... [--timeout N(ms|s|m|h)] [--project DIR] [--json] [--verification cached|strict|fast]\n");
	return JIG_E_USAGE;
}

/* Captures one attachment into inputdir/NAME. The project's protected
 * state (.jig: admissions, the store, run directories) is never attachable,
 * not even as part of a larger tree. */
static int attach(const struct input *in, int inputdir, int statefd, struct jig_tree_stats *st,
		  struct jig_error *e)
{
	char what[128];
	snprintf(what, sizeof(what), "attachment %s", in->name);
	struct jig_tree_limits l = {.what = what, .max_files = INPUT_MAX_FILES, .max_entries = INPUT_MAX_FILES * 4,
				    .max_bytes = INPUT_MAX_BYTES, .reject_sparse = true};
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
	l.deny_name = ".jig";
	if (S_ISREG(sb.st_mode))
		return jig_tree_copy_file(fd, in->name, inputdir, &l, st, e);
	if (!S_ISDIR(sb.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s (%s): is a special file; refused", what, in->path);
	if (mkdirat(inputdir, in->name, 0700) < 0)
		return jig_err(e, JIG_E_INTERNAL, "%s: %s", what, strerror(errno));
	jig_autoclose int dst = openat(inputdir, in->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = dst < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", what, strerror(errno))
			: jig_tree_copy(fd, in->name, dst, &l, st, e);
	if (!r)
		fchmod(dst, 0555);
	return r;
}

/* The coordinator's exit status asking the outer command to obtain a
 * transient delegated scope and start over (never a Flow's status). */
#define NEEDS_TRANSIENT_SCOPE 75

static int coordinator(int argc, char **argv, int in_transient_scope, const char *run_dir)
{
	const char *flow_name = NULL, *output = NULL, *project = ".", *verification = NULL;
	uint64_t timeout_ms = JIG_RUN_TIMEOUT_DEFAULT_MS;
	int json = 0;
	struct input inputs[MAX_INPUTS];
	size_t n_inputs = 0;
	struct jig_error e = {0};
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "--output") == 0 && i + 1 < argc)
			output = argv[++i];
		else if (strcmp(a, "--project") == 0 && i + 1 < argc)
			project = argv[++i];
		else if (strcmp(a, "--verification") == 0 && i + 1 < argc)
			verification = argv[++i];
		else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
			if (jig_parse_timeout(argv[++i], &timeout_ms, &e) < 0) {
				fprintf(stderr, "jig run: %s\n", e.msg);
				return JIG_E_USAGE;
			}
		} else if (strcmp(a, "--input") == 0 && i + 1 < argc) {
			char *spec = argv[++i], *eq = strchr(spec, '=');
			if (!eq || eq == spec || !eq[1] || n_inputs >= MAX_INPUTS) {
				fprintf(stderr, "jig run: --input \"%s\": expected NAME=PATH\n", spec);
				return JIG_E_USAGE;
			}
			*eq = '\0';
			for (size_t k = 0; k < n_inputs; k++)
				if (strcmp(inputs[k].name, spec) == 0) {
					fprintf(stderr, "jig run: --input %s given twice\n", spec);
					return JIG_E_USAGE;
				}
			inputs[n_inputs++] = (struct input){spec, eq + 1};
		} else if (a[0] != '-' && !flow_name)
			flow_name = a;
		else {
			fprintf(stderr, "jig run: unknown argument \"%s\"\n", a);
			return usage();
		}
	}
	if (!flow_name || !output)
		return usage();
	struct jig_verifier v;
	if (jig_verifier_init(&v, verification, JIG_VERIFY_CACHED, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (geteuid() == 0) {
		fprintf(stderr, "jig: refusing to run a Flow as root; jig is a rootless tool, run it as an unprivileged user\n");
		return JIG_E_HOST;
	}

	/* The destination: a new name in an existing directory; never replaced. */
	char outbuf[PATH_MAX];
	snprintf(outbuf, sizeof(outbuf), "%s", output);
	char *slash = strrchr(outbuf, '/');
	const char *outname = slash ? slash + 1 : outbuf;
	const char *outparent = slash ? (slash == outbuf ? "/" : outbuf) : ".";
	if (slash)
		*slash = '\0';
	if (!jig_path_is_normal_relative(outname)) {
		fprintf(stderr, "jig run: --output %s: the last component must be a plain new name\n", output);
		return JIG_E_USAGE;
	}
	jig_autoclose int parentfd = open(outparent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (parentfd < 0) {
		fprintf(stderr, "jig run: --output %s: parent directory: %s\n", output, strerror(errno));
		return JIG_E_USAGE;
	}
	if (fstatat(parentfd, outname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		fprintf(stderr, "jig run: --output %s already exists; jig never replaces a destination\n", output);
		return JIG_E_USAGE;
	}

	struct jig_project p;
	if (jig_project_open(project, &p, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	int code = 0;
	struct jig_snapshot s;
	bool have_snap = false, have_mod = false;
	struct jig_module_handle h;
	struct jig_plan pl = {0};
	char stage_name[128] = "";
	int devnull = -1, rundir = -1, init_fd = -1, sv[2] = {-1, -1}, ab[2] = {-1, -1}, cancel[2] = {-1, -1}, stagefd = -1;
	json_t *inlist = json_array(), *outlist = json_array(), *record = NULL;
	struct run0 r0 = {.fd = -1, .abort_wr = -1, .logs = json_array(), .effects = json_array()};
	struct jig_scope_policy rpol;
	bool have_rpol = false;
	struct jig_scope_result res;
	memset(&res, 0, sizeof(res));
	res.struct_size = sizeof(res);
	res.held_fd = -1;
	const struct jig_flow *f = jig_project_flow(&p, flow_name);
	if (!f) {
		jig_err(&e, JIG_E_USAGE, "project %s has no Flow \"%s\"", project, flow_name);
		goto fail;
	}
	for (size_t k = 0; k < n_inputs; k++) {
		bool declared = false;
		for (size_t j = 0; j < f->n_inputs; j++)
			declared |= strcmp(f->inputs[j], inputs[k].name) == 0;
		if (!declared) {
			jig_err(&e, JIG_E_USAGE, "flow %s declares no input \"%s\" (its inputs are in flow.json)", f->name, inputs[k].name);
			goto fail;
		}
	}
	for (size_t j = 0; j < f->n_inputs; j++) {
		bool given = false;
		for (size_t k = 0; k < n_inputs; k++)
			given |= strcmp(f->inputs[j], inputs[k].name) == 0;
		if (!given) {
			jig_err(&e, JIG_E_USAGE, "flow %s needs --input %s=PATH", f->name, f->inputs[j]);
			goto fail;
		}
	}

	/* Admission: the Plan of the project as it is now, against the snapshot
	 * installed now, must be the admitted one. Nothing runs otherwise. */
	char libdir[PATH_MAX], admitted[JIG_SHA256_HEX];
	if (jig_project_capture(&p, false, &e) < 0)
		goto fail;
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) < 0 || jig_snapshot_open_installed(&s, libdir, &e) < 0)
		goto fail;
	have_snap = true;
	/* The installed tools are the reviewed bytes (by the operator's
	 * verification mode), and the launcher is opened verified. */
	if (jig_cli_verify_installation(&s, &v, &init_fd, &e) < 0)
		goto fail;
	if (jig_plan_build(&p, &s, &pl, &e) < 0 || jig_plan_admitted(&p, admitted, &e) < 0)
		goto fail;
	if (strcmp(admitted, pl.sha256) != 0) {
		jig_err(&e, JIG_E_INTEGRITY,
			"the project or the installed snapshot changed since review (admitted Plan %.12s, now %.12s); nothing was run: review again with 'jig review'",
			admitted, pl.sha256);
		goto fail;
	}
	f = jig_project_flow(&p, flow_name);

	if (jig_module_load(&s, "sandbox-linux", JIG_KIND_SANDBOX, &h, &e) < 0)
		goto fail;
	have_mod = true;
	const struct jig_sandbox_ops *ops = h.desc->ops;
	if (h.desc->ops_size < offsetof(struct jig_sandbox_ops, launch) + sizeof(ops->launch) || !ops->launch) {
		jig_err(&e, JIG_E_INTEGRITY, "module sandbox-linux cannot launch scopes");
		goto fail;
	}

	/* The private run directory (the outer command's, under /tmp, so that
	 * the scope's mount table names no user, project or .jig path):
	 * package and attachments. */
	struct stat rst;
	errno = 0;
	if ((rundir = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(rundir, &rst) < 0 ||
	    rst.st_uid != geteuid() || (rst.st_mode & 07777) != 0700 || mkdirat(rundir, "package", 0700) < 0 ||
	    mkdirat(rundir, "input", 0700) < 0) {
		jig_err(&e, JIG_E_INTERNAL, "the run directory %s: %s", run_dir, errno ? strerror(errno) : "not private");
		goto fail;
	}
	{
		jig_autoclose int pk = openat(rundir, "package", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		jig_autoclose int in = openat(rundir, "input", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char fs[32];
		if (pk < 0 || in < 0 || jig_store_materialise(&p, f->package_sha256, pk, &e) < 0)
			goto fail;
		if (!jig_tree_fs_ok(in, fs, sizeof(fs))) {
			jig_err(&e, JIG_E_USAGE, "%s is on %s; attachments are captured onto ext4, XFS, Btrfs or tmpfs only", JIG_RUN_DIR_BASE, fs);
			goto fail;
		}
		struct jig_tree_stats ist = {.list = inlist};
		for (size_t k = 0; k < n_inputs; k++)
			if (attach(&inputs[k], in, p.statefd, &ist, &e) < 0)
				goto fail;
		fchmod(pk, 0555);
		fchmod(in, 0555);
	}

	/* The scope: the Plan's composed template for this Flow, its slots
	 * filled with this run's directory, descriptors and deadline. */
	const struct jig_scope_template *tmpl = jig_plan_scope(&pl, f->name, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ab, O_CLOEXEC) < 0 ||
	    pipe2(cancel, O_CLOEXEC) < 0 || (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		jig_err(&e, JIG_E_INTERNAL, "Run/0: %s", strerror(errno));
		goto fail;
	}
	const struct jig_scope_slot slots[] = {{"null", devnull}, {"run0", sv[1]}};
	struct jig_scope_run srun = {.run_dir = run_dir, .slots = slots, .n_slots = 2, .wall_ms = timeout_ms};
	struct jig_scope sc;
	struct jig_scope_launch launch = {.policy_sha256 = tmpl ? tmpl->policy.sha256 : NULL, .init_fd = init_fd,
					  .argv = tmpl ? (const char *const *)tmpl->argv : NULL,
					  .hold_path = tmpl ? tmpl->hold : NULL, .abort_fd = ab[0]};
	if (!tmpl) {
		jig_err(&e, JIG_E_INTERNAL, "flow %s has no composed scope", f->name);
		goto fail;
	}
	if (jig_scope_policy_resolve(&tmpl->policy, &srun, jig_caller_home(), &rpol, &e) < 0)
		goto fail;
	have_rpol = true;
	jig_scope_describe(&rpol, &launch, &sc, &e);
	r0.fd = sv[0];
	r0.abort_wr = ab[1];
	r0.flow = f;
	r0.http = (struct jig_http_effect_env){.ops = ops, .state = h.state, .plan = &pl, .init_fd = init_fd,
					       .flow = f->name, .abort_fd = cancel[0]};
	/* From here a cancellation (SIGTERM from the outer command) is the
	 * supervisor's to handle (it fences and reports it): no thread of ours
	 * may take the signal's default action instead. */
	sigset_t stop_sigs;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	pthread_t th;
	if (pthread_create(&th, NULL, run0_thread, &r0) != 0) {
		jig_err(&e, JIG_E_INTERNAL, "Run/0: cannot start its reader");
		goto fail;
	}
	long long started = now_ms();
	int lr = ops->launch(h.state, &sc, &res);
	close(sv[1]);
	sv[1] = -1;
	/* The Flow is fenced: a request still in flight is cancelled. */
	poke(cancel[1]);
	pthread_join(th, NULL);
	res.error[sizeof(res.error) - 1] = '\0';
	if (lr != JIG_MOD_OK && res.needs_delegation && !in_transient_scope) {
		char sysd[128];
		if (jig_cli_systemd_usable(sysd, sizeof(sysd))) {
			code = NEEDS_TRANSIENT_SCOPE; /* nothing ran; the outer starts over */
			goto out;
		}
		jig_err(&e, JIG_E_HOST, "flow %s refused: %s; no transient scope either: %s", f->name, res.error, sysd);
		goto fail;
	}
	if (lr != JIG_MOD_OK) {
		jig_err(&e, JIG_E_HOST, "flow %s refused: %s", f->name, res.error[0] ? res.error : "launch failed");
		goto fail;
	}

	/* The verdict, then final validation of the output (writers are fenced:
	 * the cgroup is empty; the launcher's held descriptor keeps the tmpfs). */
	const char *status = "succeeded";
	char why[700] = "";
	if (res.interrupted_by || r0.interrupted_by)
		status = "cancelled", snprintf(why, sizeof(why), "cancelled by signal %d; the scope was fenced",
					       res.interrupted_by ? res.interrupted_by : r0.interrupted_by);
	else if (r0.violation)
		status = "failed", snprintf(why, sizeof(why), "%s", r0.error);
	else if (res.outcome == JIG_SCOPE_TIMEOUT)
		status = "timeout", snprintf(why, sizeof(why), "the Flow ran past its %llu ms deadline and was fenced", (unsigned long long)timeout_ms);
	else if (res.signal && (res.outcome == JIG_SCOPE_CRASHED || res.outcome == JIG_SCOPE_SIGNALED))
		status = "failed", jig_cli_signal_text(why, sizeof(why), "the Flow", res.signal, res.core_dumped, r0.error);
	else if (res.outcome != JIG_SCOPE_EXITED || res.exit_status != 0 || !r0.done)
		status = "failed", snprintf(why, sizeof(why), "%s", r0.error[0] ? r0.error : res.error[0] ? res.error : "the Flow did not complete");
	if (!res.cleanup_confirmed)
		status = "failed", snprintf(why, sizeof(why), "cleanup not confirmed: %s", res.error);
	snprintf(stage_name, sizeof(stage_name), ".jig-stage-%d-%.80s", (int)getpid(), outname);
	if (mkdirat(parentfd, stage_name, 0700) < 0 ||
	    (stagefd = openat(parentfd, stage_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(stagefd, "files", 0700) < 0) {
		stage_name[0] = '\0';
		jig_err(&e, JIG_E_INTERNAL, "--output %s: cannot create the stage: %s", output, strerror(errno));
		goto fail;
	}
	if (strcmp(status, "succeeded") == 0) {
		if (res.held_fd < 0) {
			jig_err(&e, JIG_E_INTERNAL, "the scope's output was not held; nothing published");
			goto fail;
		}
		jig_autoclose int files = openat(stagefd, "files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct jig_tree_limits ol = {.what = "output", .max_files = OUTPUT_MAX_FILES, .max_entries = OUTPUT_MAX_ENTRIES,
					     .max_bytes = JIG_FLOW_OUTPUT_BYTES, .reject_sparse = true,
					     .allowed = f->outputs, .n_allowed = f->n_outputs};
		struct jig_tree_stats ost = {.list = outlist};
		struct jig_error oe = {0};
		if (jig_tree_copy(res.held_fd, "", files, &ol, &ost, &oe) < 0) {
			jig_err(&e, JIG_E_USAGE, "output refused, nothing published: %s", oe.msg);
			goto fail;
		}
		fchmod(files, 0555);
	}
	record = json_pack(
		"{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:{s:s,s:i,s:i,s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:I},s:O,s:O,s:O}",
		"format", "jig-run-record/1", "status", status, "error", why, "flow", f->name, "plan_sha256",
		pl.sha256, "package_sha256", f->package_sha256, "timeout_ms", (json_int_t)timeout_ms, "started_ms",
		(json_int_t)started, "termination", "outcome", jig_cli_outcome_name(res.outcome), "exit_status", res.exit_status,
		"signal", res.signal, "core_dumped", res.core_dumped != 0, "fenced", res.fenced != 0,
		"cleanup_confirmed", res.cleanup_confirmed != 0, "oom_kills", (json_int_t)res.oom_kills,
		"pids_max_hits", (json_int_t)res.pids_max_hits, "memory_peak_bytes", (json_int_t)res.memory_peak_bytes,
		"cpu_usec", (json_int_t)res.cpu_usec, "wall_ms", (json_int_t)res.wall_ms, "inputs", inlist, "outputs",
		outlist, "logs", r0.logs);
	if (record && f->n_http)
		json_object_set(record, "effects", r0.effects);
	/* The scope that ran: the Plan's digest and its canonical policy (the
	 * run's slot values are not part of it). */
	if (record)
		json_object_set_new(record, "scope", json_pack("{s:s,s:O}", "policy_sha256", tmpl->policy.sha256, "policy",
							      tmpl->policy.doc));
	if (record)
		json_object_set_new(record, "verification", jig_verifier_json(&v));
	char *txt = record ? json_dumps(record, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (!txt || jig_write_file_at(stagefd, "record.json", txt, strlen(txt), 0444, &e) < 0) {
		free(txt);
		goto fail;
	}
	if (fchmod(stagefd, 0555) < 0 || renameat2(parentfd, stage_name, parentfd, outname, RENAME_NOREPLACE) < 0) {
		jig_err(&e, JIG_E_USAGE, "--output %s: %s; nothing published", output,
			errno == EEXIST ? "appeared while the Flow ran; jig never replaces a destination" : strerror(errno));
		free(txt);
		goto fail;
	}
	stage_name[0] = '\0';
	if (json)
		jig_json_print(stdout, record);
	else {
		/* why carries the Flow's own text: shown inert. */
		fprintf(stderr, "jig: flow %s %s%s", f->name, status, why[0] ? ": " : "");
		jig_text_put(stderr, why);
		fputs("; packet ", stderr);
		jig_text_put(stderr, output);
		fputc('\n', stderr);
	}
	free(txt);
	code = strcmp(status, "succeeded") == 0 ? 0 : 1;
	goto out;
fail:
	jig_cli_fail(json, &e);
	code = e.code ? e.code : JIG_E_INTERNAL;
out:
	if (res.held_fd >= 0)
		close(res.held_fd);
	if (stage_name[0])
		jig_remove_tree(parentfd, stage_name);
	if (stagefd >= 0)
		close(stagefd);
	if (rundir >= 0)
		close(rundir); /* the outer command removes it */
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (ab[i] >= 0)
			close(ab[i]);
		if (cancel[i] >= 0)
			close(cancel[i]);
	}
	if (init_fd >= 0)
		close(init_fd);
	if (devnull >= 0)
		close(devnull);
	json_decref(record);
	json_decref(inlist);
	json_decref(outlist);
	json_decref(r0.logs);
	json_decref(r0.effects);
	if (have_rpol)
		jig_scope_policy_free(&rpol);
	jig_plan_free(&pl);
	jig_verifier_finish(&v);
	if (have_mod)
		jig_module_unload(&h);
	if (have_snap)
		jig_snapshot_close(&s);
	jig_project_close(&p);
	return code;
}

/* --- the outer command -----------------------------------------------------------
 * Owns the coordinator (a child process that does everything above). On
 * SIGINT/SIGTERM/SIGHUP it sends SIGTERM to that exact child once and allows
 * at most 60 s before SIGKILL; later signals extend nothing. If the
 * coordinator dies without finishing, the outer fences what it left (the
 * sandbox module's recover), removes its run directory and its stage, and
 * says so; a packet already published is never touched. */

#define SETTLE_MS 60000

static void cleanup_lost(pid_t pid, const char *output, char *msg, size_t cap)
{
	size_t len = 0;
	/* The scope's cgroups. */
	struct jig_snapshot s;
	struct jig_module_handle h;
	struct jig_error e = {0};
	char libdir[PATH_MAX], err[512] = "";
	if (jig_snapshot_default_libdir(libdir, sizeof(libdir), &e) == 0 && jig_snapshot_open_installed(&s, libdir, &e) == 0) {
		if (jig_module_load(&s, "sandbox-linux", JIG_KIND_SANDBOX, &h, &e) == 0) {
			const struct jig_sandbox_ops *ops = h.desc->ops;
			if (h.desc->ops_size >= offsetof(struct jig_sandbox_ops, recover) + sizeof(ops->recover) && ops->recover &&
			    ops->recover(h.state, pid, err, sizeof(err)) != JIG_MOD_OK)
				len += (size_t)snprintf(msg + len, cap - len, "; cgroup cleanup NOT confirmed: %s", err);
			jig_module_unload(&h);
		} else
			len += (size_t)snprintf(msg + len, cap - len, "; cannot load the sandbox module to fence: %s", e.msg);
		jig_snapshot_close(&s);
	} else
		len += (size_t)snprintf(msg + len, cap - len, "; cannot open the snapshot to fence: %s", e.msg);
	/* Its stage (the name carries its pid); the run directory is the
	 * outer command's and goes in any case. */
	if (output) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s", output);
		char *sl = strrchr(parent, '/');
		const char *name = sl ? sl + 1 : parent;
		char stage[200];
		snprintf(stage, sizeof(stage), ".jig-stage-%d-%.80s", (int)pid, name);
		int pfd = open(sl ? (sl == parent ? "/" : (*sl = '\0', parent)) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd >= 0) {
			jig_remove_tree(pfd, stage);
			close(pfd);
		}
	}
	if (len == 0)
		snprintf(msg, cap, "; its scope was fenced and its run directory and stage removed");
}

int jig_cmd_run(int argc, char **argv, int in_transient_scope)
{
	const char *output = NULL;
	for (int i = 0; i + 1 < argc; i++)
		if (strcmp(argv[i], "--output") == 0)
			output = argv[i + 1];
	/* The run directory: private, under /tmp rather than the project, so
	 * that nothing the scope can see of its mounts names the operator,
	 * the project or its .jig state. Owned here, so it goes however the
	 * coordinator ends. */
	char run_dir[] = JIG_RUN_DIR_BASE "/jig-run-XXXXXX";
	if (!mkdtemp(run_dir)) {
		fprintf(stderr, "jig: cannot create a private run directory in %s: %s\n", JIG_RUN_DIR_BASE, strerror(errno));
		return JIG_E_INTERNAL;
	}
	sigset_t stop, saved;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &saved);
	int sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	pid_t parent = getpid();
	fflush(NULL);
	pid_t c = sfd < 0 ? -1 : fork();
	if (c < 0) {
		fprintf(stderr, "jig: cannot start the coordinator: %s\n", strerror(errno));
		jig_remove_tree(AT_FDCWD, run_dir);
		return JIG_E_INTERNAL;
	}
	if (c == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(JIG_E_INTERNAL);
		close(sfd);
		sigprocmask(SIG_SETMASK, &saved, NULL);
		int code = coordinator(argc, argv, in_transient_scope, run_dir);
		fflush(NULL);
		_exit(code);
	}
	int pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	long long term_deadline = -1;
	int status = 0;
	for (;;) {
		int timeout = -1;
		if (term_deadline >= 0) {
			long long left = term_deadline - now_ms();
			timeout = left > 0 ? (int)left : 0;
		}
		struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		int n = poll(p, pidfd >= 0 ? 2 : 1, timeout);
		if (pidfd < 0)
			p[0].revents = POLLIN; /* no pidfd: just wait */
		if (n == 0 && term_deadline >= 0) {
			kill(c, SIGKILL);
			term_deadline = -1;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			if (term_deadline < 0) {
				kill(c, SIGTERM);
				term_deadline = now_ms() + SETTLE_MS;
			}
		}
		if (p[0].revents & POLLIN) {
			if (waitpid(c, &status, 0) == c)
				break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	close(sfd);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (WIFEXITED(status)) /* after a lost coordinator: once its scope is fenced */
		jig_remove_tree(AT_FDCWD, run_dir);
	if (WIFEXITED(status) && WEXITSTATUS(status) == NEEDS_TRANSIENT_SCOPE && !in_transient_scope) {
		/* Outer and (new) coordinator move into a systemd scope with
		 * Delegate=yes; everything is checked again there. */
		jig_cli_reexec_in_transient_scope("run", argc, argv);
		fprintf(stderr, "jig: %s failed: %s; no delegated cgroup, so nothing was run\n", JIG_SYSTEMD_RUN, strerror(errno));
		return JIG_E_HOST;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	char msg[1024] = "";
	cleanup_lost(c, output, msg, sizeof(msg));
	jig_remove_tree(AT_FDCWD, run_dir);
	fprintf(stderr, "jig: the coordinator (pid %d) was killed by signal %d before it finished; nothing was published%s\n",
		(int)c, WTERMSIG(status), msg);
	return JIG_E_INTERNAL;
}
