#include "run/recovery.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "effects/checkpoint.h"
#include "util/limits.h"
#include "publish/run_lease.h"
#include "publish/publish.h"
#include "packet/record.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"

#define BINDING_FORMAT "jig-recovery/1"

int jig_recovery_bind(int rundir, const char *project, const char *flow, const char *plan_sha256,
		      const char *package_sha256, uint64_t timeout_ms, uint64_t expiry_ms, bool checkpoint,
		      struct jig_error *e)
{
	struct stat st;
	if (stat(project, &st) < 0)
		return jig_err(e, JIG_E_INTERNAL, "project %s: %s", project, strerror(errno));
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	json_t *b = json_pack("{s:s,s:s,s:I,s:I,s:s,s:s,s:s,s:I,s:I,s:i,s:I,s:b}", "format", BINDING_FORMAT, "project", project, "dev",
			      (json_int_t)st.st_dev, "ino", (json_int_t)st.st_ino, "flow", flow, "plan_sha256", plan_sha256,
			      "package_sha256", package_sha256, "timeout_ms", (json_int_t)timeout_ms, "epoch_ms",
			      (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, "coordinator_pid", (int)getpid(), "expiry_ms",
			      (json_int_t)expiry_ms, "checkpoint", checkpoint);
	char *txt = b ? json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(b);
	int rc = txt ? jig_write_file_at(rundir, JIG_RECOVERY_FILE, txt, strlen(txt), 0400, e)
		     : jig_err(e, JIG_E_INTERNAL, "out of memory");
	free(txt);
	return rc;
}

/* The binding, checked against what is there now. */
static json_t *binding(int rundir, pid_t lost, char *why, size_t cap)
{
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st, now;
	struct jig_error e = {0};
	json_t *b = NULL;
	if (jig_read_file_at(rundir, JIG_RECOVERY_FILE, 64u << 10, "the Run's binding", &buf, &len, &st, &e) < 0 ||
	    jig_json_parse_object(buf, len, "the Run's binding", &b, &e) < 0) {
		snprintf(why, cap, "%.500s", e.msg);
		return NULL;
	}
	const char *project = json_string_value(json_object_get(b, "project"));
	if (!project || stat(project, &now) < 0 || (json_int_t)now.st_dev != json_integer_value(json_object_get(b, "dev")) ||
	    (json_int_t)now.st_ino != json_integer_value(json_object_get(b, "ino")))
		snprintf(why, cap, "the project is no longer the one the Run was bound to");
	else if (json_integer_value(json_object_get(b, "coordinator_pid")) != lost)
		snprintf(why, cap, "the binding names another coordinator");
	else
		return b;
	json_decref(b);
	return NULL;
}

/* The record's error for a coordinator the outer command killed at the
 * expiry's grace: what its own would have said (run/flow_run.c's
 * verdict), then how it ended. */
static void cancelled_why(char *why, size_t cap, json_t *b, int stop, pid_t lost)
{
	unsigned long long ms = (unsigned long long)json_integer_value(json_object_get(b, "expiry_ms"));
	const char *abbrev = stop > 0 && stop < 65 ? sigabbrev_np(stop) : NULL;
	if (stop > 0)
		snprintf(why, cap, "cancelled by the operator: SIG%s (signal %d); the command's expiry of %llu ms passed before the coordinator settled",
			 abbrev ? abbrev : "?", stop, ms);
	else
		snprintf(why, cap, "cancelled: the command's expiry of %llu ms passed (SIGTERM)", ms);
	size_t n = strlen(why);
	snprintf(why + n, cap - n, "; the coordinator (pid %d) did not settle within the %d ms grace and was killed (SIGKILL); the scope was fenced "
				   "(confirmed) and a recovery-only coordinator published this record", (int)lost, JIG_EXPIRY_GRACE_MS);
}

static json_t *record(json_t *b, json_t *ck, const char *run, pid_t lost, int sig, int stop)
{
	char why[400];
	if (stop)
		cancelled_why(why, sizeof(why), b, stop, lost);
	else
		snprintf(why, sizeof(why), "the coordinator (pid %d) was lost (signal %d); its scope was fenced (confirmed) and a recovery-only coordinator published %s",
			 (int)lost, sig, json_integer_value(json_object_get(ck, "save")) ? "the last accepted checkpoint" : "this record (no checkpoint had been accepted)");
	struct jig_record_facts f = {.status = stop ? "cancelled" : "interrupted", .why = why, .flow = json_string_value(json_object_get(b, "flow")),
				     .plan_sha256 = json_string_value(json_object_get(b, "plan_sha256")),
				     .package_sha256 = json_string_value(json_object_get(b, "package_sha256")),
				     .timeout_ms = (uint64_t)json_integer_value(json_object_get(b, "timeout_ms")),
				     .started_ms = json_integer_value(json_object_get(b, "epoch_ms")),
				     .inputs = json_array(), .outputs = json_array(), .logs = json_array()};
	bool whole = f.flow && f.plan_sha256 && f.package_sha256 && json_is_integer(json_object_get(b, "timeout_ms")) &&
		     json_is_integer(json_object_get(b, "epoch_ms"));
	json_t *rec = whole ? jig_record_lost(&f, sig) : NULL;
	/* the outer command's cancellation: the scope was fenced, as its own would have been */
	json_t *t = json_object_get(rec, "termination");
	if (t && stop && (json_object_set_new(t, "outcome", json_string("cancelled")) || json_object_set_new(t, "signal", json_integer(0)) ||
			  json_object_set(rec, "expiry_ms", json_object_get(b, "expiry_ms")))) {
		json_decref(rec);
		rec = NULL;
	}
	json_decref(f.inputs);
	json_decref(f.outputs);
	json_decref(f.logs);
	if (rec && (json_object_set_new(rec, "effects", json_array()) || (ck && json_object_set(rec, "checkpoint", ck)) ||
		    json_object_set_new(rec, "recovery", json_pack("{s:s,s:O,s:O,s:O,s:i,s:i}", "run", run, "epoch_ms",
								   json_object_get(b, "epoch_ms"), "project_dev", json_object_get(b, "dev"),
								   "project_ino", json_object_get(b, "ino"), "coordinator_pid", (int)lost,
								   "signal", sig)))) {
		json_decref(rec);
		rec = NULL;
	}
	return rec;
}

/* The recovery-only coordinator itself: exit 0 published, 1 not; why on wfd. */
static int recover(int rundir, const char *run, const char *output, pid_t lost, int sig, int stop, int wfd)
{
	char why[600] = "";
	struct jig_error e = {0};
	struct jig_publish pub = {.parentfd = -1, .stagefd = -1};
	json_t *b = binding(rundir, lost, why, sizeof(why)), *ck = NULL, *rec = NULL;
	JIG_FAULT_POINT("recovery");
	bool checkpoint = json_is_true(json_object_get(b, "checkpoint"));
	int rc = !b ? -1 : jig_publish_open(&pub, output, &e) || jig_publish_stage(&pub, run, &e) ||
					 (checkpoint && jig_checkpoint_publish(rundir, pub.stagefd, &ck, &e)) ? -1 : 0;
	char *txt = NULL;
	bool cut = false; /* never more than jig inspect reads (issue 31) */
	if (!rc && (!(rec = record(b, ck, run, lost, sig, stop)) || !(txt = jig_record_text(rec, JIG_RECORD_MAX_BYTES, &cut))))
		rc = jig_err(&e, JIG_E_INTERNAL, rec ? "the record does not fit what jig inspect reads" : "out of memory");
	if (!rc)
		rc = jig_publish_commit(&pub, txt, &e);
	if (rc && !why[0])
		snprintf(why, sizeof(why), "%.500s", e.msg);
	else if (!rc && ck)
		snprintf(why, sizeof(why), "checkpoint save %lld", (long long)json_integer_value(json_object_get(ck, "save")));
	else if (!rc)
		snprintf(why, sizeof(why), "no checkpoint");
	if (write(wfd, why, strlen(why)) < 0) {
	}
	free(txt);
	json_decref(rec);
	json_decref(ck);
	json_decref(b);
	jig_publish_close(&pub);
	return rc ? 1 : 0;
}

/* Whether the binding asks for a recovery after this loss: a checkpoint,
 * or the expiry's kill (the binding is read again, and checked, by the
 * recovery-only coordinator). */
static bool wanted(int rundir, int stop)
{
	if (stop)
		return true;
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error e = {0};
	json_t *b = NULL;
	if (jig_read_file_at(rundir, JIG_RECOVERY_FILE, 64u << 10, "the Run's binding", &buf, &len, &st, &e) < 0 ||
	    jig_json_parse_object(buf, len, "the Run's binding", &b, &e) < 0)
		return true; /* an unreadable binding is said so by the recovery */
	bool ck = json_is_true(json_object_get(b, "checkpoint"));
	json_decref(b);
	return ck;
}

int jig_recovery_run(const char *run_dir, const char *output, pid_t lost, int sig, int stop, char *msg, size_t cap)
{
	size_t len = strlen(msg);
	jig_autoclose int rundir = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rundir < 0 || faccessat(rundir, JIG_RECOVERY_FILE, F_OK, 0) < 0 || !output || !wanted(rundir, stop))
		return 0;
	const char *run = strrchr(run_dir, '/');
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(msg + len, cap - len, "; no recovery-only coordinator (pipe: %s), nothing was published", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		close(p[0]);
		signal(SIGPIPE, SIG_IGN); /* its owner may be gone: it still finishes */
		int code = recover(rundir, run ? run + 1 : run_dir, output, lost, sig, stop, p[1]);
		jig_lease_remove_run_dir(run_dir); /* done with it (the outer command may be gone too) */
		_exit(code);
	}
	close(p[1]);
	char why[600] = "";
	size_t got = 0;
	ssize_t n;
	while (c > 0 && got < sizeof(why) - 1 && ((n = read(p[0], why + got, sizeof(why) - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	close(p[0]);
	int status = 0;
	while (c > 0 && waitpid(c, &status, 0) < 0 && errno == EINTR)
		;
	if (c > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		if (stop)
			snprintf(msg + len, cap - len, "; a recovery-only coordinator published its record (cancelled) to %s", output);
		else
			snprintf(msg + len, cap - len, "; a recovery-only coordinator published its record (interrupted) and %s to %s", why, output);
		return 1;
	}
	if (c > 0 && !WIFEXITED(status)) {
		jig_publish_remove_stage(output, run_dir); /* it was lost too: its stage goes */
		snprintf(why, sizeof(why), "it was killed by signal %d", WTERMSIG(status));
	}
	snprintf(msg + len, cap - len, "; the recovery-only coordinator published nothing: %s", c < 0 ? strerror(errno) : why);
	return -1;
}
