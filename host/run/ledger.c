/* The root's durable ledger of reservations: see ledger.h. */
#include "run/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEDGER "reservations.json"
#define JIG_RESERVATIONS_FORMAT "jig-reservations/1"

static json_t *budget_json(void)
{
	struct jig_reservation b = {JIG_ROOT_MEMORY_BYTES, JIG_ROOT_TASKS, JIG_ROOT_CPU_QUOTA_US};
	return jig_reservation_json(&b);
}

/* Synced before a dispatch goes on. */
int jig_ledger_write(struct jig_call_root *root)
{
	json_t *doc = json_pack("{s:s,s:o,s:o,s:O,s:b}", "format", JIG_RESERVATIONS_FORMAT, "budget", budget_json(), "reserved",
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
	if (!root->live || jig_ledger_write(root) < 0)
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

int jig_ledger_reserve(struct jig_call_root *root, const char *id, const struct jig_binding *b,
		       const struct jig_reservation *r, char *why, size_t cap)
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
	if (jig_ledger_write(root) < 0) {
		json_array_remove(root->live, json_array_size(root->live) - 1);
		root->reserved = was;
		return snprintf(why, cap, "binding %s: the reservation could not be recorded; not dispatched", b->name), -1;
	}
	root->peak.memory_bytes = sum.memory_bytes > root->peak.memory_bytes ? sum.memory_bytes : root->peak.memory_bytes;
	root->peak.tasks = sum.tasks > root->peak.tasks ? sum.tasks : root->peak.tasks;
	root->peak.cpu_quota_us = sum.cpu_quota_us > root->peak.cpu_quota_us ? sum.cpu_quota_us : root->peak.cpu_quota_us;
	return 0;
}

void jig_ledger_release(struct jig_call_root *root, const char *id, const struct jig_reservation *r)
{
	size_t i;
	json_t *v;
	json_array_foreach(root->live, i, v) {
		if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0) {
			json_array_remove(root->live, i);
			root->reserved.memory_bytes -= r->memory_bytes;
			root->reserved.tasks -= r->tasks;
			root->reserved.cpu_quota_us -= r->cpu_quota_us;
			jig_ledger_write(root);
			return;
		}
	}
}
