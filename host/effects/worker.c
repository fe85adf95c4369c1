/* Effect workers: see worker.h. */
#include "effects/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sandbox/scope.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/text.h"

/* The request: a sealed memfd (no one, the worker included, can change or
 * grow what jig wrote; it may hold a credential for this one launch). */
int jig_worker_memfd(const char *name, const char *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int jig_worker_result_parse(const char *buf, size_t size, const char *format_want, json_t **result, char *why, size_t cap)
{
	json_error_t je;
	*result = json_loadb(buf, size, JSON_DISABLE_EOF_CHECK, &je);
	const char *format = json_string_value(json_object_get(*result, "format"));
	if (!json_is_object(*result) || !format || strcmp(format, format_want) != 0 ||
	    !json_is_string(json_object_get(*result, "outcome"))) {
		json_decref(*result);
		*result = NULL;
		snprintf(why, cap, "the worker's result is malformed");
		return -1;
	}
	return 0;
}

static int read_result(int out, const struct jig_worker_call *c, json_t **result, char *why, size_t cap)
{
	off_t size = lseek(out, 0, SEEK_END);
	if (size <= 0 || (size_t)size > c->result_max) {
		snprintf(why, cap, "the worker gave no usable result");
		return -1;
	}
	char *buf = malloc((size_t)size);
	if (!buf || pread(out, buf, (size_t)size, 0) != size) {
		free(buf);
		snprintf(why, cap, "the worker's result cannot be read");
		return -1;
	}
	int r = jig_worker_result_parse(buf, (size_t)size, c->result_format, result, why, cap);
	free(buf);
	return r;
}

int jig_worker_run(const struct jig_worker_call *c, json_t **result, struct jig_scope_result *res, char *why, size_t cap)
{
	*result = NULL;
	const struct jig_scope_template *t = c->t;
	jig_autoclose int in = jig_worker_memfd("jig-worker-request", c->input, strlen(c->input));
	jig_autoclose int out = memfd_create("jig-worker-result", MFD_CLOEXEC);
	jig_autoclose int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (!t || in < 0 || out < 0 || devnull < 0) {
		snprintf(why, cap, "cannot prepare the worker: %s", t ? strerror(errno) : "no composed scope");
		return -1;
	}
	const struct jig_scope_slot slots[] = {{"request", in}, {"result", out}, {"null", devnull}};
	struct jig_launch s = {.sb = c->sandbox, .t = t,
			       .run = {.slots = slots, .n_slots = 3, .run_dir = c->run ? c->run->run_dir : NULL,
				       .wall_ms = c->run ? c->run->wall_ms : 0},
			       .l = {.init_fd = c->init_fd, .abort_fd = c->abort_fd, .companion_pid = c->companion_pid},
			       .stop = JIG_LAUNCH_STOP_AROUND};
	struct jig_error e = {0};
	int lr = jig_launch(&s, res, &e);
	if (c->held_fd) {
		*c->held_fd = res->held_fd;
		res->held_fd = -1;
	} else if (res->held_fd >= 0) {
		close(res->held_fd);
	}
	if (lr < 0) {
		snprintf(why, cap, "the worker's scope was refused: %.600s", e.msg);
		return -1;
	}
	if (res->aborted || res->interrupted_by) {
		snprintf(why, cap, "cancelled: the Run ended while the effect was in flight");
		return -1;
	}
	if (res->outcome != JIG_SCOPE_EXITED || res->exit_status != 0 || !res->cleanup_confirmed) {
		char how[64];
		if (res->outcome == JIG_SCOPE_OOM || res->oom_kills)
			snprintf(how, sizeof(how), "its scope hit its memory limit of %llu MiB",
				 (unsigned long long)(t->policy.limits.memory_bytes >> 20));
		else if (res->outcome == JIG_SCOPE_TIMEOUT)
			snprintf(how, sizeof(how), "its scope's deadline passed");
		else if (res->signal)
			snprintf(how, sizeof(how), "killed by signal %d", (int)res->signal);
		else
			snprintf(how, sizeof(how), "exit status %d", (int)res->exit_status);
		snprintf(why, cap, "the worker did not complete (%s)%s%.300s", how, res->error[0] ? ": " : "", res->error);
		return -1;
	}
	return read_result(out, c, result, why, cap);
}

void jig_effect_decline(json_t **reply, json_t *ev, const char *op, const char *outcome, const char *msg)
{
	char clean[1024];
	jig_text_inert(clean, sizeof(clean), msg, strlen(msg));
	json_object_set_new(ev, "outcome", json_string(outcome));
	json_object_set_new(ev, "error", json_string(clean));
	*reply = json_pack("{s:s,s:b,s:s}", "op", op, "ok", 0, "error", clean);
}

void jig_effect_refuse(json_t **reply, json_t *ev, const char *op, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jig_effect_decline(reply, ev, op, "refused", msg);
}

const char *jig_effect_unknown_key(json_t *op, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach(op, k, v) {
		size_t i = 0;
		while (keys[i] && strcmp(k, keys[i]) != 0)
			i++;
		if (!keys[i])
			return k;
	}
	return NULL;
}
