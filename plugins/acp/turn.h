/* One Agent turn's state, shared by the worker's two halves: the ACP
 * protocol steps (worker.c) and the transport to the client's stdio
 * (transport.c: the queue to its stdin, the framing of its stdout into
 * lines, the poll that waits for both and for its exit). */
#ifndef JIG_ACP_TURN_H
#define JIG_ACP_TURN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jig/buf.h>

#include "client.h"
#include "request.h"

enum outcome { OUT_NONE, OUT_ANSWER, OUT_REFUSED, OUT_FAILED, OUT_TIMEOUT, OUT_WITHHELD };

/* The worker's requests; each step's JSON-RPC id is its number. */
enum step { STEP_INITIALIZE, STEP_AUTH, STEP_SESSION, STEP_LOAD, STEP_MODEL, STEP_PROMPT, STEP_DONE };

struct counts {
	json_int_t lines, skipped_lines, messages, updates, late_updates, requests_refused, permissions_refused,
		transcript_bytes, bytes_in, bytes_out;
};

struct turn {
	const struct jig_acp_request *rq;
	struct jig_acp_client c;
	bool started;      /* a client process existed: the result has "exit" */
	bool eof, drained; /* the client's stdout: closed; empty at the last read */
	struct jig_buf out;    /* bytes for the client's stdin, from out_off */
	size_t out_off;
	struct jig_buf line;   /* the client's line so far */
	bool discarding;   /* inside an over-long line: dropped up to its newline */
	enum step step;    /* the response the turn waits for */
	enum outcome outcome; /* set once: the turn has ended */
	char error[640];
	bool ended_early; /* the client went before the prompt response; error after reaping */
	bool cancelled;   /* session/cancel was sent at the deadline */
	int64_t t0, deadline, cancel_at, ended_at;
	int64_t input_gone_at; /* it closed its input: a failure then, unless it exits first */
	int64_t sent_at[STEP_DONE], took[STEP_DONE];
	char *session;
	char *stop_reason;
	json_t *agent;
	json_t *history;	  /* the session's collected history, for the result */
	char history_error[640]; /* why it was not collected */
	struct jig_buf text;
	struct counts n;
};

/* --- worker.c: the protocol ------------------------------------------- */

int64_t jig_acp_now_ms(void);

/* Ends the turn; the first reason wins. */
void jig_acp_end(struct turn *t, enum outcome o, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One complete line the client sent (without its newline). */
void jig_acp_line(struct turn *t, const char *p, size_t n);

/* --- transport.c: the client's stdio ---------------------------------- */

/* Queues one message (taking the reference) and writes what the client
 * takes now; the rest waits for jig_acp_pump. */
void jig_acp_queue(struct turn *t, json_t *msg);

/* Reads what the client sent (at most a budget per call), line by line. */
void jig_acp_drain(struct turn *t);

/* One wait for the client, until `until` at most, then what it allows:
 * write what waits, read what arrived, notice its exit. */
void jig_acp_pump(struct turn *t, int64_t until);

#endif
