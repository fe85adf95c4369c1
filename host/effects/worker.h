/* An effect's worker (plugins/http's, plugins/acp's): run in the Plan's
 * composed scope for its route, the request on a private stdin memfd, the
 * result read from a private stdout memfd, launched as every scope is
 * (sandbox/scope.h). */
#ifndef JIG_EFFECTS_WORKER_H
#define JIG_EFFECTS_WORKER_H

#include <jansson.h>
#include <stddef.h>

#include "policy/catalog.h"
#include "sandbox/door.h"

struct jig_worker_call {
	struct jig_sandbox *sandbox;
	const struct jig_scope_template *t; /* the Plan's scope for the route */
	int init_fd;			    /* the trusted launcher */
	int abort_fd;			    /* readable when the Run ends */
	int companion_pid;
	const char *input;	   /* the request (wiped by the caller if secret) */
	const char *result_format; /* the result's "format" */
	size_t result_max;	   /* bytes */
	const struct jig_scope_run *run; /* the run directory for "@run/" binds; NULL: none */
	int *held_fd;		   /* if set: the scope's held directory, open, for the caller */
};

/* 0 with *result (a JSON object of result_format with a string "outcome"),
 * or -1 with a one-line reason in why. res says how the scope ended. */
int jig_worker_run(const struct jig_worker_call *c, json_t **result, struct jig_scope_result *res, char *why, size_t cap);

/* The worker's result bytes (untrusted: the worker ran in a scope) read
 * as one JSON object of format_want with a string "outcome": 0 with
 * *result, or -1 with a one-line reason. Fuzzed on its own (fuzz/). */
int jig_worker_result_parse(const char *buf, size_t size, const char *format_want, json_t **result, char *why, size_t cap);

/* A sealed memfd holding data[0..len), at offset 0, or -1: no one, the
 * scope included, can change or grow it. */
int jig_worker_memfd(const char *name, const char *data, size_t len);

/* The first key of a Run/0 operation that is not in keys (NULL-terminated),
 * or NULL. */
const char *jig_effect_unknown_key(json_t *op, const char *const *keys);

/* An effect that gives the Flow no result: the outcome and the reason in
 * the evidence, the reason in the reply ({"op", "ok": false, "error"}).
 * The reason is made inert first (it may hold a Flow's or a worker's bytes,
 * cut anywhere), so the reply is always valid JSON. */
void jig_effect_decline(json_t **reply, json_t *ev, const char *op, const char *outcome, const char *msg);
void jig_effect_refuse(json_t **reply, json_t *ev, const char *op, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
