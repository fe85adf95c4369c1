/* One line the ACP client sent, classified (the worker's first reading of
 * the client's bytes; fuzz/fuzz_acp_message.c exercises it). */
#ifndef JIG_ACP_MESSAGE_H
#define JIG_ACP_MESSAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum jig_acp_line {
	JIG_ACP_LINE_MESSAGE,  /* a JSON object with "jsonrpc": "2.0": *msg (the caller's) */
	JIG_ACP_LINE_SKIPPED,  /* not a JSON object (garbage, a batch array), or not
				* JSON-RPC 2.0 ("jsonrpc" missing or another value):
				* counted and ignored */
	JIG_ACP_LINE_NOT_TEXT, /* bytes that are not UTF-8, or a string holding a
				* character jig does not pass on (U+0000, a lone
				* UTF-16 surrogate escape): the turn fails, why says
				* which */
};

/* Reads the line p[0..n) (without its newline). *msg is set only for
 * JIG_ACP_LINE_MESSAGE; why (one line) only for JIG_ACP_LINE_NOT_TEXT. */
enum jig_acp_line jig_acp_line_read(const char *p, size_t n, json_t **msg, char *why, size_t cap);

/* ACP v1's stop reasons of a session/prompt response: end_turn,
 * max_tokens, max_turn_requests, refusal, cancelled. Any other is a
 * protocol error. */
bool jig_acp_stop_reason_known(const char *s, size_t n);

#endif
