/* Run/0: the Flow's one channel to its coordinator (docs/flow-format.md).
 * Newline-delimited JSON on a socket, read by a thread of the coordinator:
 * lines of at most JIG_RUN0_MAX_LINE bytes (a checkpoint's,
 * JIG_CHECKPOINT_MAX_LINE), at most JIG_RUN0_MAX_MESSAGES
 * messages, known operations only. Any abuse ends the Run (abort_wr is
 * written, the supervisor fences the scope) and is recorded. */
#ifndef JIG_RUN_RUN0_H
#define JIG_RUN_RUN0_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* An effect operation's handler: sets *reply (one line back to the Flow)
 * and *evidence (for the record); *interrupted is a stop signal the
 * effect's supervisor took (the Run then ends). */
typedef void (*jig_run0_effect_fn)(void *ctx, json_t *op, json_t **reply, json_t **evidence, int *interrupted);

/* What one record tree (a root Run and its children) may keep, charged as
 * it is kept (util/limits.h): log text, effect evidence, child nodes. */
struct jig_run0_budget {
	pthread_mutex_t lock;
	size_t log_bytes, evidence_bytes, nodes;
};

struct jig_run0 {
	int fd;	      /* the coordinator's end of the socket */
	int abort_wr; /* written to end the Run */
	json_t *logs;	 /* the Flow's log lines, for the record */
	json_t *effects; /* evidence of each effect */
	bool done;	 /* the Flow said it finished */
	bool violation;	 /* a protocol violation (or jig, jig_run0_end) ended the Run */
	char error[512]; /* the violation, or the Flow's own error text */
	size_t messages, http_requests, agent_turns, commands, checkpoints;
	int interrupted_by;
	/* The http, agent and command operations; NULL: the Flow has no such
	 * route. */
	jig_run0_effect_fn http, agent, command;
	jig_run0_effect_fn checkpoint; /* NULL: the Flow declares no checkpoint */
	void *ctx;
	pthread_t thread;
	/* Bindings (run/call.h): "call" and "imported" go to call(call_ctx,
	 * op), which answers later from threads of its own through
	 * jig_run0_send; NULL: the Flow has no bindings. */
	void (*call)(void *call_ctx, struct jig_run0 *r, json_t *op);
	void *call_ctx;
	size_t calls;
	pthread_mutex_t send_lock;
	/* Held while logs or effects grow: a live display (display/live.c)
	 * copies them from another thread. */
	pthread_mutex_t data_lock;
	/* The record budget: own_budget for a root, the root's for a child. */
	struct jig_run0_budget own_budget, *budget;
	/* What was not kept: log lines dropped (over JIG_RUN0_MAX_LOGS or the
	 * budget) and their bytes, lines cut to JIG_RUN0_LOG_MAX_TEXT, evidence
	 * replaced by a stub. */
	size_t logs_dropped, logs_dropped_bytes, logs_cut, evidence_cut;
	/* One checkpoint save in flight (R-O01), kept by the host: bytes read
	 * from the Flow so far, the stream offset of the line being handled,
	 * and how far the Flow had sent when the last save was answered; a
	 * save whose line starts before that was sent while one was in
	 * flight and is refused. */
	unsigned long long received, line_at, save_window;
};

/* Starts reading fd in a thread. */
int jig_run0_start(struct jig_run0 *r, int fd, int abort_wr, jig_run0_effect_fn http, jig_run0_effect_fn agent,
		   jig_run0_effect_fn command, jig_run0_effect_fn checkpoint, void *ctx);
/* The same, with a Flow's bindings (call: see above); shared: the root's
 * record budget for a child's Run/0, NULL for a root's own. */
int jig_run0_start_calls(struct jig_run0 *r, int fd, int abort_wr, jig_run0_effect_fn http, jig_run0_effect_fn agent,
			 jig_run0_effect_fn command, jig_run0_effect_fn checkpoint, void *ctx,
			 void (*call)(void *, struct jig_run0 *, json_t *), void *call_ctx, struct jig_run0_budget *shared);
/* One more child node in the record tree: false (nothing kept) over
 * JIG_CALL_MAX_NODES. */
bool jig_run0_take_node(struct jig_run0 *r);
/* What was not kept, on obj (a record or a child's node):
 * "logs_dropped": {lines, bytes}, "logs_cut", "evidence_cut"; nothing when
 * everything was kept. */
void jig_run0_note_cuts(const struct jig_run0 *r, json_t *obj);
/* A log text as kept: at most JIG_RUN0_LOG_MAX_TEXT bytes on a UTF-8
 * boundary, then a mark saying how many bytes were cut. *cut: it was. */
json_t *jig_run0_log_text(const char *text, size_t len, bool *cut);
/* Bytes of s as a JSON string in the record (quotes and escapes). */
size_t jig_run0_json_len(const char *s, size_t len);
/* One line to the Flow, from any thread. */
void jig_run0_send(struct jig_run0 *r, json_t *msg);
/* Ends the Run for a protocol violation (any thread). */
void jig_run0_violation(struct jig_run0 *r, const char *why);
/* Ends the Run for jig's own reason (any thread): why is its error as
 * given, never blamed on the Flow (an unconfirmed import stage cleanup). */
void jig_run0_end(struct jig_run0 *r, const char *why);
/* Waits for the reader (the Flow's end must be closed). */
void jig_run0_join(struct jig_run0 *r);
void jig_run0_free(struct jig_run0 *r);

#endif
