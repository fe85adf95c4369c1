/* Retained Agent sessions (issue 15; docs/agents.md "Retained sessions"):
 * a route with retain_sessions keeps the client's session history (Codex's
 * rollout) after a clean turn, in the project's private store
 * <project>/.jig/sessions/, for one later turn of the same Flow, route and
 * reviewed provider identity to restore.
 *
 * At most JIG_SESSIONS_MAX sessions are available per project and
 * JIG_SESSIONS_SCOPE_MAX per Flow and route (a further one is refused,
 * nothing is evicted), each at most JIG_SESSION_MAX_BYTES, each for
 * JIG_SESSION_TTL_S after it was stored (logical expiry by the recorded
 * time, pruned whenever the store is used). A reference is taken atomically: exactly one caller gets the
 * history, before the client starts; a failed or interrupted turn does not
 * put it back. New references exist only after the store committed them.
 * Every entry goes through the trusted-state store (state/state.h) and
 * carries the operator's MAC bound to the project (decision 230); one that
 * does not verify (copied, planted, edited) is never restored nor counted
 * (decision 231). Sensitive local data, not encrypted storage. */
#ifndef JIG_EFFECTS_AGENT_SESSIONS_H
#define JIG_EFFECTS_AGENT_SESSIONS_H

#include <jansson.h>

#include "util/error.h"
#include "util/limits.h"

#define JIG_SESSIONS_DIR "sessions"
#define JIG_SESSION_REF_HEX 32
#define JIG_SESSION_FORMAT "jig-agent-session/2"

/* Whose a session is: the reference works only here. */
struct jig_session_scope {
	const char *flow, *route;
	const char *identity_sha256; /* of the reviewed provider identity */
};

/* Takes ref out of the store of statefd (<project>/.jig). On success
 * *history is {"session_id", "path", "rollout"} and no one else can take
 * it. An unknown, expired, used or foreign reference, or one whose entry
 * does not verify, is refused (-JIG_E_USAGE, one line) and nothing is
 * consumed. */
int jig_session_take(int statefd, const struct jig_session_scope *sc, const char *ref, json_t **history,
		     struct jig_error *e);

/* Stores history ({"session_id", "path", "rollout"}, as the worker
 * collected it) and writes its new reference into ref. A full store, or
 * a Flow and route already holding JIG_SESSIONS_SCOPE_MAX, refuses
 * (-JIG_E_USAGE); a session id or path the worker would not restore is
 * refused (-JIG_E_INTEGRITY). */
int jig_session_put(int statefd, const struct jig_session_scope *sc, json_t *history, char ref[JIG_SESSION_REF_HEX + 1],
		    struct jig_error *e);

#endif
