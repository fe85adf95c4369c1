/* The worker's request (<jig/acp.h>, jig-acp-request/1): read from a
 * descriptor, size-capped, and checked strictly before anything starts. */
#ifndef JIG_ACP_REQUEST_H
#define JIG_ACP_REQUEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The largest request the worker reads (the prompt is most of it). */
#define JIG_ACP_REQUEST_MAX (24u << 20) /* a restored history: 8 MiB, escaped */

struct jig_acp_limits {
	int64_t deadline_ms;
	int64_t cancel_grace_ms;
	int64_t exit_grace_ms;
	int64_t max_line_bytes;
	int64_t max_messages;
	int64_t max_transcript_bytes;
};

struct jig_acp_request {
	json_t *doc;                /* owns the strings below but envp's */
	char **argv;                /* NULL-terminated; argv[0] absolute */
	char **envp;                /* "NAME=value", NULL-terminated, owned */
	const char **secrets;       /* the non-empty ones */
	size_t nsecrets;
	const char *cwd;
	const char *expect_name;    /* NULL: not checked */
	const char *expect_version; /* NULL: not checked */
	const char *auth_method;    /* authenticate with this method after initialize; NULL: not */
	const char *model;          /* selected with session/set_model after session/new; NULL: not */
	json_t *session_meta;       /* session/new's "_meta" (a client profile), borrowed; NULL: none */
	json_t *prompt;             /* borrowed from doc */
	const char *home;           /* the client's HOME (env), for history */
	const char *history_dir;    /* below home: collect the session's history; NULL: not */
	int64_t history_max;
	const char *restore_id;     /* session/load this session from restore_rollout; NULL: session/new */
	const char *restore_path;   /* below history_dir */
	json_t *restore_rollout;    /* borrowed from doc */
	struct jig_acp_limits limits;
};

/* Reads and checks the request from fd. 0, or -1 with a one-line reason in
 * why (the request's own bytes never appear in it). Free with
 * jig_acp_request_free either way. */
int jig_acp_request_read(struct jig_acp_request *out, int fd, char *why, size_t cap);

/* Wipes the credential bytes it held (env values, secrets) and frees. Safe
 * on a zeroed request. */
void jig_acp_request_free(struct jig_acp_request *r);

#endif
