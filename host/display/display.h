/* --display web (docs/display.md): the host's side of the read-only local
 * display. plugins/display parses HTTP and serves; this room decides:
 * which requests are authorised (exact Host and Origin, fetch site, the
 * capability header, GET only but the close request, no bodies), which
 * routes exist, which response headers every answer carries, and what the
 * page may see: a bounded, validated view and the excerpts of verified,
 * immutable captures by content identity. The capability is 256 random
 * bits; it leaves this room only in the link the CLI prints. */
#ifndef JIG_DISPLAY_DISPLAY_H
#define JIG_DISPLAY_DISPLAY_H

#include <jansson.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jig/display.h>

#include "snapshot/snapshot.h"
#include "util/error.h"
#include "util/limits.h"

#define JIG_DISPLAY_CAP_HEADER "X-Jig-Capability"
/* The view a display page reads (a packet's or a live Run's). */
#define JIG_DISPLAY_VIEW_FORMAT "jig-display-view/1"

/* What a request may reach once authorised. */
enum jig_display_route {
	JIG_ROUTE_REFUSED = 0, /* status says why */
	JIG_ROUTE_ASSET,       /* asset names the bundled file */
	JIG_ROUTE_VIEW,
	JIG_ROUTE_ARTIFACT, /* artifact: the 64 hex digits */
	JIG_ROUTE_CLOSE,
};

struct jig_display_decision {
	enum jig_display_route route;
	unsigned status; /* for REFUSED: 400, 401, 403, 404, 405, 421 */
	const char *asset;
	char artifact[65];
};

/* The constants a request is checked against. */
struct jig_display_policy {
	char host[32];   /* "127.0.0.1:PORT" */
	char origin[40]; /* "http://127.0.0.1:PORT" */
	char cap[2 * JIG_DISPLAY_CAP_BYTES + 1];
};

/* A fresh capability and the constants for port. */
int jig_display_policy_init(struct jig_display_policy *p, uint16_t port, struct jig_error *e);
/* The policy, on one request as the parser saw it. Pure. */
struct jig_display_decision jig_display_authorize(const struct jig_display_policy *p,
						  const struct jig_display_request *rq);
/* The fixed headers of every response: name/value pairs, NULL-ended. */
extern const char *const jig_display_headers[];

/* One verified, immutable capture, shown by content identity only. */
struct jig_display_artifact {
	char id[65];  /* SHA-256 of the whole file, hex */
	char *json;   /* the artifact answer (name, size, excerpt), made once */
	size_t len;
};

struct jig_display;

/* Loads the signed display module from s and listens on 127.0.0.1 at a
 * new port with a new capability. Takes the artifacts (may be none). */
int jig_display_open(struct jig_display **d, const struct jig_snapshot *s, struct jig_display_artifact *arts,
		     size_t n_arts, struct jig_error *e);
/* "http://127.0.0.1:PORT/#cap=..." into out: for the terminal only. */
void jig_display_link(const struct jig_display *d, char *out, size_t cap);
uint16_t jig_display_port(const struct jig_display *d);
/* Replaces the view (bounded: JIG_DISPLAY_MAX_VIEW_BYTES, logs trimmed
 * first). Steals view. */
int jig_display_publish(struct jig_display *d, json_t *view, struct jig_error *e);
/* Waits until the page asks to close, SIGINT/SIGTERM/SIGHUP (which must
 * be blocked by the caller), or max_ms. Returns the reason as text. */
const char *jig_display_wait(struct jig_display *d, uint64_t max_ms);
/* Stops the server (no handler runs after it), forgets the capability. */
void jig_display_close(struct jig_display *d);
/* Offers artifacts (the display takes them; at most once). */
void jig_display_set_artifacts(struct jig_display *d, struct jig_display_artifact *arts, size_t n);
/* Retires a live display whose final view is published: lingers while a
 * reading page has not had the final view (at most JIG_DISPLAY_LINGER_MS),
 * then stops the server and waits for its acknowledgement until
 * allowance_ms after the call. 0: retired and freed. -1 with why: the
 * acknowledgement was lost; inspection is closed as far as it can be (the
 * capability forgotten, nothing more served by this room) and d is left
 * to the process's exit. */
int jig_display_retire(struct jig_display *d, uint64_t allowance_ms, char *why, size_t cap);

/* Pieces of the view (view.c): a string of the record bounded at
 * JIG_DISPLAY_MAX_STRING, a number or boolean, the listed fields of an
 * object, an effect's scalar evidence, the tree of child Flows. */
json_t *jig_display_str(json_t *v);
json_t *jig_display_num(json_t *v);
json_t *jig_display_pick(json_t *obj, const char *const *keys);
json_t *jig_display_evidence(json_t *o);
json_t *jig_display_children(json_t *list, int depth);

/* jig run --display web (live.c): the Run's live view, rebuilt by a
 * thread of its own from what it is given and from the scope's cgroup
 * files (read by the host), until jig_live_finish. */
struct jig_live;
struct jig_live_facts {
	const char *flow, *plan_sha256, *package_sha256;
	uint64_t timeout_ms;
	FILE *out; /* the command's stream for the one link (host/cli's stdout) */
};
/* Opens the display and prints the one link to f->out. */
int jig_live_open(struct jig_live **l, const struct jig_snapshot *s, const struct jig_live_facts *f,
		  struct jig_error *e);
/* The Run is launched: its log lines and effects (grown under data_lock)
 * and its children (under children_lock; may be NULL) are shown from now. */
void jig_live_attach(struct jig_live *l, json_t *logs, json_t *effects, pthread_mutex_t *data_lock, json_t *children,
		     pthread_mutex_t *children_lock);
/* The scope is fenced: its end state, as the supervisor measured it. */
void jig_live_fenced(struct jig_live *l, json_t *termination);
/* The Run's record is made and its files staged beneath stagefd/files:
 * the final view, the captures, retirement. NULL, or why the command's
 * cleanup of the display failed (for the record). */
const char *jig_live_finish(struct jig_live *l, int stagefd, json_t *rec, const char *headline, char *why, size_t cap);
/* Ends it if jig_live_finish did not (an error path). NULL is nothing. */
void jig_live_close(struct jig_live *l);

/* The packet view and its artifacts: every listed file re-read from the
 * packet pfd, hashed whole and compared with the record (so what is shown
 * is what was verified), its first JIG_DISPLAY_EXCERPT_BYTES kept. The
 * summary shows headline first: the caller's (jig_why_headline, the words
 * of jig run, jig inspect and jig why; the display does not judge). */
int jig_display_packet(int pfd, json_t *rec, const char *headline, json_t **view, struct jig_display_artifact **arts,
		       size_t *n_arts, struct jig_error *e);
void jig_display_artifacts_free(struct jig_display_artifact *arts, size_t n);

#endif
