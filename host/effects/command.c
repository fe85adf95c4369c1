/* Project Commands: caps, the private source directory, the scope, the
 * collector (see command.h). */
#include "effects/command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/base64.h>

#include <jig/module.h>

#include "effects/worker.h"
#include "sandbox/scope.h"
#include "flow/tree.h"
#include "policy/scope_argv.h"
#include "util/limits.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/text.h"

#define SRC_DIR "command" /* the catalog's "@run/command" */
#define CAPTURE_DIR "capture" /* the captured tree's copy, outside every scope, removed after reading */

#define refuse(reply, ev, ...) jig_effect_refuse(reply, ev, "command", __VA_ARGS__)

struct file {
	const char *path; /* borrowed from the operation */
	unsigned char *data;
	size_t len;
};

struct request {
	struct file files[JIG_COMMAND_MAX_FILES];
	size_t n_files;
	size_t text_bytes;
	const char *entry;
	const char *args[JIG_COMMAND_MAX_ARGS];
	size_t n_args;
	unsigned char *stdin_data;
	size_t stdin_len;
};

static void request_free(struct request *q)
{
	for (size_t i = 0; i < q->n_files; i++)
		free(q->files[i].data);
	free(q->stdin_data);
}

/* Strict base64 (padded, canonical, no whitespace) of at most max bytes:
 * 0, -1 malformed, -2 over max (nothing decoded). */
static int unbase64(json_t *v, size_t max, unsigned char **out, size_t *len)
{
	const char *s = json_string_value(v);
	size_t n = s ? json_string_length(v) : 0;
	*out = NULL;
	*len = 0;
	if (!s || n % 4)
		return -1;
	if (n / 4 > (max + 2) / 3)
		return -2;
	unsigned char *buf = malloc(BASE64_DECODE_LENGTH(n) + 1);
	char *again = malloc(n + 1);
	struct base64_decode_ctx ctx;
	size_t dl = BASE64_DECODE_LENGTH(n);
	base64_decode_init(&ctx);
	int r = buf && again && base64_decode_update(&ctx, &dl, buf, n, s) && base64_decode_final(&ctx) ? 0 : -1;
	if (!r && BASE64_ENCODE_RAW_LENGTH(dl) == n) {
		base64_encode_raw(again, dl, buf);
		r = memcmp(again, s, n) == 0 ? 0 : -1;
	} else if (!r)
		r = -1;
	free(again);
	if (r || dl > max) {
		free(buf);
		return r ? r : -2;
	}
	*out = buf;
	*len = dl;
	return 0;
}

static json_t *base64_json(const unsigned char *data, size_t len)
{
	char *s = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
	if (!s)
		return NULL;
	base64_encode_raw(s, len, data);
	s[BASE64_ENCODE_RAW_LENGTH(len)] = '\0';
	json_t *v = json_string(s);
	free(s);
	return v;
}

/* Every cap of docs/commands.md, checked and counted before anything is
 * written: 0, or a refusal in why. */
static int parse_request(json_t *op, struct request *q, char *why, size_t cap)
{
	json_t *files = json_object_get(op, "files"), *entry = json_object_get(op, "entry");
	json_t *args = json_object_get(op, "args"), *in = json_object_get(op, "stdin");
	if (!json_is_object(files) || json_object_size(files) == 0)
		return snprintf(why, cap, "jig.command: files must be an object of path: text"), -1;
	if (json_object_size(files) > JIG_COMMAND_MAX_FILES)
		return snprintf(why, cap, "jig.command: %zu files, over the cap of %d; not run", json_object_size(files),
				JIG_COMMAND_MAX_FILES), -1;
	const char *path;
	json_t *v;
	json_object_foreach(files, path, v) {
		struct file *fl = &q->files[q->n_files];
		if (!jig_path_is_normal_relative(path))
			return snprintf(why, cap, "jig.command: file \"%.80s\": not a normalised relative path of [A-Za-z0-9._+@-] components (at most %d bytes); not run",
					path, JIG_COMMAND_MAX_PATH), -1;
		int r = unbase64(v, JIG_COMMAND_MAX_TEXT - q->text_bytes, &fl->data, &fl->len);
		if (r == -1)
			return snprintf(why, cap, "jig.command: file %s: not base64 (jig's runtime encodes it)", path), -1;
		if (r == -2)
			return snprintf(why, cap, "jig.command: the files are over the cap of %u bytes of text together (at %s); not run",
					JIG_COMMAND_MAX_TEXT, path), -1;
		fl->path = path;
		q->text_bytes += fl->len;
		q->n_files++;
	}
	if (!json_is_string(entry) || !json_object_get(files, json_string_value(entry)))
		return snprintf(why, cap, "jig.command: entry must name one of the files"), -1;
	q->entry = json_string_value(entry);
	if (args && !json_is_array(args))
		return snprintf(why, cap, "jig.command: args must be an array of strings"), -1;
	if (json_array_size(args) > JIG_COMMAND_MAX_ARGS)
		return snprintf(why, cap, "jig.command: %zu arguments, over the cap of %d; not run", json_array_size(args),
				JIG_COMMAND_MAX_ARGS), -1;
	size_t i, total = 0;
	json_array_foreach(args, i, v) {
		size_t n = json_string_length(v);
		if (!json_is_string(v) || strlen(json_string_value(v)) != n)
			return snprintf(why, cap, "jig.command: args[%zu] must be a string without NUL", i), -1;
		if (n > JIG_COMMAND_MAX_ARG || (total += n) > JIG_COMMAND_MAX_ARGS_BYTES)
			return snprintf(why, cap, "jig.command: args[%zu]: an argument is at most %d bytes, all of them %u; not run", i,
					JIG_COMMAND_MAX_ARG, JIG_COMMAND_MAX_ARGS_BYTES), -1;
		q->args[q->n_args++] = json_string_value(v);
	}
	if (in) {
		int r = unbase64(in, JIG_COMMAND_MAX_STDIN, &q->stdin_data, &q->stdin_len);
		if (r == -1)
			return snprintf(why, cap, "jig.command: stdin: not base64 (jig's runtime encodes it)"), -1;
		if (r == -2)
			return snprintf(why, cap, "jig.command: stdin is over the cap of %u bytes; not run", JIG_COMMAND_MAX_STDIN), -1;
	}
	return 0;
}

/* The files' identity: SHA-256 of the canonical JSON {path: sha256}. */
static void files_digest(const struct request *q, char out[JIG_SHA256_HEX])
{
	json_t *m = json_object();
	for (size_t i = 0; i < q->n_files; i++) {
		char hex[JIG_SHA256_HEX];
		jig_sha256_hex(q->files[i].data, q->files[i].len, hex);
		json_object_set_new(m, q->files[i].path, json_string(hex));
	}
	char *c = jig_json_canonical(m);
	jig_sha256_hex(c ? c : "", c ? strlen(c) : 0, out);
	free(c);
	json_decref(m);
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One file beneath dir: its directories 0700 (made as needed, never
 * through a link), the file 0444, created fresh. */
static int write_file(int dir, const struct file *fl, char *why, size_t cap)
{
	char path[JIG_COMMAND_MAX_PATH + 1];
	snprintf(path, sizeof(path), "%s", fl->path);
	int d = dup(dir);
	char *c = path, *slash;
	while (d >= 0 && (slash = strchr(c, '/'))) {
		*slash = '\0';
		if (mkdirat(d, c, 0700) < 0 && errno != EEXIST) {
			close(d);
			d = -1;
			break;
		}
		int next = openat(d, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(d);
		d = next;
		c = slash + 1;
	}
	int fd = d < 0 ? -1 : openat(d, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	int r = fd < 0 || write_all(fd, fl->data, fl->len) < 0 ? -1 : 0;
	if (r)
		snprintf(why, cap, "jig.command: file %s: %s", fl->path,
			 errno == EEXIST || errno == ENOTDIR ? "a path is both a file and a directory; not run" : strerror(errno));
	if (fd >= 0)
		close(fd);
	if (d >= 0)
		close(d);
	return r;
}

/* --- the collector: outside the scope, never blocking it ----------------- */

struct collector {
	struct jig_command_stream out[2]; /* stdout, stderr */
	int stop;		/* readable: the scope is fenced; drain and end */
	pthread_t thread;
};

/* Reads what fd has now: 1 more may follow, 0 at EOF or error. */
void jig_command_keep(struct jig_command_stream *p, const unsigned char *buf, size_t n)
{
	size_t room = JIG_COMMAND_RETAIN - p->n_kept, keep = n < room ? n : room;
	memcpy(p->kept + p->n_kept, buf, keep);
	p->n_kept += keep;
	p->total += (uint64_t)n;
}

static int take(struct jig_command_stream *p)
{
	unsigned char buf[16384];
	for (;;) {
		ssize_t n = read(p->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 1;
		if (n <= 0)
			return 0;
		jig_command_keep(p, buf, (size_t)n);
	}
}

static void *collect(void *arg)
{
	struct collector *c = arg;
	bool open[2] = {true, true}, stopping = false;
	while (open[0] || open[1]) {
		struct pollfd pf[3] = {{c->out[0].fd, POLLIN, 0}, {c->out[1].fd, POLLIN, 0}, {c->stop, POLLIN, 0}};
		for (int i = 0; i < 2; i++)
			if (!open[i])
				pf[i].fd = -1;
		if (!stopping && poll(pf, 3, -1) < 0 && errno != EINTR)
			break;
		stopping |= (pf[2].revents & POLLIN) != 0;
		for (int i = 0; i < 2; i++)
			if (open[i] && (stopping || pf[i].revents))
				open[i] = take(&c->out[i]) == 1 && !stopping;
	}
	return NULL;
}

/* --- the effect --------------------------------------------------------- */

/* The command's outcome for the Flow (docs/commands.md): the scope's word,
 * but a crash is "signaled" (the signal says which), and a scope killed
 * from outside while the command ran is "killed" (it ran: not "never
 * ran"); NULL: the command did not run to an end. */
static const char *outcome_of(const struct jig_scope_result *res)
{
	if (res->outcome == JIG_SCOPE_CRASHED)
		return jig_scope_outcome_name(JIG_SCOPE_SIGNALED);
	if (res->outcome < JIG_SCOPE_FAILED)
		return jig_scope_outcome_name(res->outcome);
	return jig_scope_killed_while_running(res) ? "killed" : NULL;
}

/* Launches the route's scope on the written files; fills res and the
 * collector's counts. 0, or -1 with why. */
static int run_scope(const struct jig_command_effect_env *env, const struct jig_scope_template *t, const struct request *q,
		     struct collector *col, struct jig_scope_result *res, int *held, char *why, size_t cap)
{
	int pout[2] = {-1, -1}, perr[2] = {-1, -1}, stop[2] = {-1, -1};
	jig_autoclose int in = jig_worker_memfd("jig-command-stdin", (const char *)(q->stdin_data ? q->stdin_data : (unsigned char *)""),
						 q->stdin_len);
	int rc = -1;
	if (in < 0 || pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0 || pipe2(stop, O_CLOEXEC) < 0 ||
	    fcntl(pout[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(perr[0], F_SETFL, O_NONBLOCK) < 0 ||
	    !(col->out[0].kept = malloc(JIG_COMMAND_RETAIN)) || !(col->out[1].kept = malloc(JIG_COMMAND_RETAIN))) {
		snprintf(why, cap, "cannot prepare the command: %s", strerror(errno));
		goto out;
	}
	col->out[0].fd = pout[0];
	col->out[1].fd = perr[0];
	col->stop = stop[0];
	const struct jig_scope_slot slots[] = {{"stdin", in}, {"stdout", pout[1]}, {"stderr", perr[1]}};
	struct jig_scope_run run = {.run_dir = env->run_dir, .slots = slots, .n_slots = 3};
	char entry[JIG_COMMAND_MAX_PATH + 16];
	snprintf(entry, sizeof(entry), "/command/%s", q->entry);
	const char *call[JIG_COMMAND_MAX_ARGS + 1] = {entry};
	memcpy(call + 1, q->args, q->n_args * sizeof(*call));
	const char *argv[JIG_CATALOG_MAX_ARGV + JIG_COMMAND_MAX_ARGS + 2];
	struct jig_error ae = {0};
	if (jig_scope_argv(t, call, 1 + q->n_args, argv, sizeof(argv) / sizeof(*argv), &ae) < 0) {
		snprintf(why, cap, "the command's scope was refused: %.600s", ae.msg);
		goto out;
	}
	if (pthread_create(&col->thread, NULL, collect, col) != 0) {
		snprintf(why, cap, "cannot start the command's collector");
		goto out;
	}
	struct jig_launch s = {.sb = env->sandbox, .t = t, .run = run,
			       .l = {.init_fd = env->init_fd, .argv = argv, .abort_fd = env->abort_fd,
				     .companion_pid = env->companion_pid},
			       .stop = JIG_LAUNCH_STOP_AROUND};
	struct jig_error e = {0};
	int lr = jig_launch(&s, res, &e);
	*held = res->held_fd; /* the fenced /capture tmpfs, or -1 */
	res->held_fd = -1;
	/* The scope is fenced (or never ran): its ends of the pipes are gone
	 * with it; ours go now, and the collector takes what is left and ends. */
	close(pout[1]);
	close(perr[1]);
	pout[1] = perr[1] = -1;
	jig_poke(stop[1]);
	pthread_join(col->thread, NULL);
	if (lr < 0)
		snprintf(why, cap, "the command's scope was refused: %.600s", e.msg);
	else
		rc = 0;
out:;
	int fds[] = {pout[0], pout[1], perr[0], perr[1], stop[0], stop[1]};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* The route's captured tree (R-K03), read after the scope is fenced: the
 * held tmpfs is copied with the output checks (regular files and
 * directories only; no symlink, special file or hard link; at most
 * JIG_COMMAND_CAPTURE_FILES files and _BYTES bytes) into a private
 * directory of the run directory, which no scope binds, then each file is
 * read back as data and the directory removed. Nothing here is executed
 * or imported. *out is {path: {sha256, bytes, base64}}; a refusal is one
 * line in why and no tree. */
static int collect_capture(const struct jig_command_effect_env *env, int held, json_t **out, json_t *ev, char *why,
			   size_t cap)
{
	*out = NULL;
	if (mkdirat(env->rundir, CAPTURE_DIR, 0700) < 0)
		return snprintf(why, cap, "capture: cannot create its private copy: %s", strerror(errno)), -1;
	jig_autoclose int dst = openat(env->rundir, CAPTURE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct jig_tree_limits l = {.what = "capture", .max_files = JIG_COMMAND_CAPTURE_FILES,
				    .max_entries = 2 * JIG_COMMAND_CAPTURE_FILES, .max_bytes = JIG_COMMAND_CAPTURE_BYTES,
				    .reject_sparse = true};
	struct jig_tree_stats st = {.list = json_array()};
	struct jig_error e = {0};
	int rc = -1;
	json_t *tree = json_object(), *digests = json_object(), *it;
	size_t i;
	if (dst < 0 || jig_tree_copy(held, "", dst, &l, &st, &e) < 0) {
		snprintf(why, cap, "capture refused, nothing returned: %.600s", dst < 0 ? strerror(errno) : e.msg);
		goto out;
	}
	json_array_foreach(st.list, i, it) {
		const char *path = json_string_value(json_object_get(it, "path"));
		char *data = NULL;
		size_t len = 0;
		if (!path || jig_read_file_at(dst, path, JIG_COMMAND_CAPTURE_BYTES, "capture", &data, &len, NULL, &e) < 0) {
			snprintf(why, cap, "capture refused, nothing returned: %.600s", path ? e.msg : "a file without a path");
			goto out;
		}
		char hex[JIG_SHA256_HEX];
		jig_sha256_hex(data, len, hex);
		json_object_set_new(tree, path, json_pack("{s:s,s:I,s:o}", "sha256", hex, "bytes", (json_int_t)len, "base64",
							  base64_json((unsigned char *)data, len)));
		json_object_set_new(digests, path, json_string(hex));
		free(data);
	}
	char *canon = jig_json_canonical(digests), all[JIG_SHA256_HEX];
	jig_sha256_hex(canon ? canon : "", canon ? strlen(canon) : 0, all);
	free(canon);
	json_object_set_new(ev, "capture", json_pack("{s:I,s:I,s:s}", "files", (json_int_t)st.files, "bytes",
						      (json_int_t)st.bytes, "sha256", all));
	*out = tree;
	tree = NULL;
	rc = 0;
out:
	json_decref(tree);
	json_decref(digests);
	json_decref(st.list);
	jig_remove_tree(env->rundir, CAPTURE_DIR);
	return rc;
}

void jig_command_measure(json_t *ev, const struct jig_scope_result *res, const struct jig_command_stream out[2],
			 bool confirmed)
{
	const char *outcome = outcome_of(res);
	json_object_set_new(ev, "stdout_bytes", json_integer((json_int_t)out[0].total));
	json_object_set_new(ev, "stderr_bytes", json_integer((json_int_t)out[1].total));
	json_object_set_new(ev, "stdout_truncated", json_boolean(out[0].total > out[0].n_kept));
	json_object_set_new(ev, "stderr_truncated", json_boolean(out[1].total > out[1].n_kept));
	json_object_set_new(ev, "wall_ms", json_integer((json_int_t)res->wall_ms));
	json_object_set_new(ev, "memory_peak_bytes", json_integer((json_int_t)res->memory_peak_bytes));
	json_object_set_new(ev, "cleanup_confirmed", json_boolean(confirmed));
	json_object_set_new(ev, "payload_started", jig_scope_payload_started_json(res));
	if (outcome && res->outcome == JIG_SCOPE_EXITED)
		json_object_set_new(ev, "exit_code", json_integer(res->exit_status));
	if (outcome && res->signal)
		json_object_set_new(ev, "signal", json_integer(res->signal));
}

json_t *jig_command_reply(json_t *ev, const struct jig_scope_result *res, const struct jig_command_stream out[2])
{
	const char *outcome = outcome_of(res);
	json_object_set_new(ev, "outcome", json_string(outcome));
	return json_pack("{s:s,s:b,s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:b,s:b,s:I}", "op", "command", "ok", 1, "outcome", outcome,
			 "exit_code", res->outcome == JIG_SCOPE_EXITED ? json_integer(res->exit_status) : json_null(), "signal",
			 res->signal ? json_integer(res->signal) : json_null(), "stdout_base64",
			 base64_json(out[0].kept, out[0].n_kept), "stderr_base64", base64_json(out[1].kept, out[1].n_kept),
			 "stdout_bytes", (json_int_t)out[0].total, "stderr_bytes", (json_int_t)out[1].total, "stdout_truncated",
			 out[0].total > out[0].n_kept, "stderr_truncated", out[1].total > out[1].n_kept, "wall_ms",
			 (json_int_t)res->wall_ms);
}

void jig_command_effect(const struct jig_command_effect_env *env, const struct jig_flow *f, json_t *op, json_t **reply,
			json_t **evidence, int *interrupted)
{
	*interrupted = 0;
	json_t *ev = *evidence = json_pack("{s:s}", "effect", "command");
	const char *route = json_string_value(json_object_get(op, "route")), *bad;
	json_object_set_new(ev, "route", json_string(route ? route : ""));
	static const char *const keys[] = {"op", "route", "files", "entry", "args", "stdin", NULL};
	if ((bad = jig_effect_unknown_key(op, keys)))
		return refuse(reply, ev, "jig.command: unknown field \"%.40s\"", bad);
	const struct jig_command_grant *g = route ? jig_flow_command_grant(f, route) : NULL;
	const struct jig_scope_template *t = g ? jig_plan_scope(env->plan, f->name, g->route) : NULL;
	if (!g || !t)
		return refuse(reply, ev, "flow %s has no reviewed command route \"%.64s\"; its command routes: %s", f->name, route ? route : "",
			      jig_flow_routes(f, "command", (char[300]){0}, 300));
	json_object_set_new(ev, "scope_policy_sha256", json_string(t->policy.sha256));
	if (g->input)
		json_object_set_new(ev, "input", json_string(g->input));
	struct request q = {0};
	char why[700] = "";
	if (parse_request(op, &q, why, sizeof(why)) < 0) {
		request_free(&q);
		return refuse(reply, ev, "route %s: %s", g->route, why);
	}
	char digest[JIG_SHA256_HEX];
	files_digest(&q, digest);
	json_object_set_new(ev, "files", json_pack("{s:I,s:I,s:s}", "count", (json_int_t)q.n_files, "bytes",
						   (json_int_t)q.text_bytes, "sha256", digest));
	json_object_set_new(ev, "args", json_integer((json_int_t)q.n_args));
	json_object_set_new(ev, "stdin_bytes", json_integer((json_int_t)q.stdin_len));
	/* A fresh private directory per call (calls are one at a time); a
	 * leftover means an earlier cleanup failed: nothing more runs. */
	if (mkdirat(env->rundir, SRC_DIR, 0700) < 0) {
		request_free(&q);
		return jig_effect_decline(reply, ev, "command", "failed",
					  errno == EEXIST ? "an earlier command's files were not removed; not run"
							  : "cannot create the command's directory");
	}
	jig_autoclose int src = openat(env->rundir, SRC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int wr = src < 0 ? (snprintf(why, sizeof(why), "the command's directory: %s", strerror(errno)), -1) : 0;
	for (size_t i = 0; !wr && i < q.n_files; i++)
		wr = write_file(src, &q.files[i], why, sizeof(why));
	struct collector col = {0};
	struct jig_scope_result res = {.held_fd = -1};
	int held = -1;
	int rr = wr ? -1 : run_scope(env, t, &q, &col, &res, &held, why, sizeof(why));
	request_free(&q);
	json_t *captured = NULL;
	char cwhy[700] = "";
	bool ended = !rr && res.cleanup_confirmed && !res.aborted && !res.interrupted_by &&
		     (res.outcome == JIG_SCOPE_EXITED || res.outcome == JIG_SCOPE_SIGNALED || res.outcome == JIG_SCOPE_CRASHED);
	if (g->capture && !(ended && held >= 0))
		snprintf(cwhy, sizeof(cwhy), "no capture: the command did not end by itself (a deadline, memory, or the Run ended)");
	else if (g->capture && collect_capture(env, held, &captured, ev, cwhy, sizeof(cwhy)) < 0)
		json_object_set_new(ev, "capture_refused", json_string(cwhy));
	if (held >= 0)
		close(held);
	/* The candidate's text is never retained: removed, and confirmed. */
	jig_remove_tree(env->rundir, SRC_DIR);
	struct stat st;
	bool removed = fstatat(env->rundir, SRC_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	*interrupted = res.interrupted_by;
	const char *outcome = rr ? NULL : outcome_of(&res);
	if (!rr)
		jig_command_measure(ev, &res, col.out, res.cleanup_confirmed && removed);
	if (rr)
		jig_effect_decline(reply, ev, "command", "failed", why);
	else if (res.aborted || res.interrupted_by)
		jig_effect_decline(reply, ev, "command", "cancelled", "cancelled: the Run ended while the command ran");
	else if (!res.cleanup_confirmed || !removed)
		jig_effect_decline(reply, ev, "command", "failed",
				   res.cleanup_confirmed ? "the command's files could not be removed" : "the command's cleanup was not confirmed");
	else if (!outcome)
		jig_effect_decline(reply, ev, "command", "failed", res.error[0] ? res.error : "the command did not run");
	else {
		*reply = jig_command_reply(ev, &res, col.out);
		if (strcmp(outcome, "killed") == 0) { /* what the supervisor saw, for the Flow and the record */
			char clean[600];
			jig_text_inert(clean, sizeof(clean), res.error, strlen(res.error));
			json_object_set_new(ev, "error", json_string(clean));
			json_object_set_new(*reply, "error", json_string(clean));
		}
		if (g->capture) /* the captured tree as data, or why there is none */
			json_object_set_new(*reply, "capture", captured ? json_incref(captured) : json_pack("{s:s}", "refused", cwhy));
	}
	json_decref(captured);
	free(col.out[0].kept);
	free(col.out[1].kept);
}
