/* The retained-session store: one file per session in .jig/sessions,
 * named "<created>-<ref>" (the creation time in seconds, the reference in
 * hex), holding one JSON header line and then the history's bytes. Every
 * file is read and written through the trusted-state store (state/state.h):
 * its owner and mode rule, its bounded reader, its write-then-rename; the
 * header carries the operator's MAC bound to the project (decision 230),
 * and an entry whose MAC does not verify is ignored: never restored, never
 * counted (decision 231). */
#include "effects/agent_sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state/state.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"

#define HEADER_MAX 4096
#define CLOCK_SLACK_S 300 /* a creation time this far ahead of now is not believed */
#define TMP_PREFIX ".tmp-"
#define TMP_STALE_S 3600
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

/* The store, locked: its directory under the store's rule (created 0700,
 * the caller's, not a link). */
static int open_store(int statefd, struct jig_error *e)
{
	int fd = jig_state_subdir(statefd, JIG_SESSIONS_DIR, true);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, ".jig/" JIG_SESSIONS_DIR ": %s",
			       errno == EPERM ? "not yours alone (mode 0700); refused" : "not a directory of yours (a link is never followed); refused");
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		return jig_err(e, JIG_E_INTERNAL, ".jig/" JIG_SESSIONS_DIR ": cannot lock: %s", strerror(errno));
	}
	return fd;
}

/* "<created>-<ref>": 1-12 digits, '-', 32 lowercase hex digits. */
static int parse_name(const char *n, long long *created, const char **ref)
{
	size_t d = strspn(n, "0123456789");
	if (d == 0 || d > 12 || n[d] != '-' || strlen(n + d + 1) != JIG_SESSION_REF_HEX ||
	    strspn(n + d + 1, "0123456789abcdef") != JIG_SESSION_REF_HEX)
		return -1;
	*created = strtoll(n, NULL, 10);
	*ref = n + d + 1;
	return 0;
}

static bool expired(long long created, time_t now)
{
	return created > (long long)now + CLOCK_SLACK_S || (long long)now - created >= JIG_SESSION_TTL_S;
}

static const char *const FACTS[] = {"flow", "route", "identity_sha256", "session_id", "path", "rollout_sha256"};
#define N_FACTS (sizeof(FACTS) / sizeof(FACTS[0]))

/* The entry's MAC: its reference, creation time and facts, bound to the
 * project and the operator (state/state.h). */
static void entry_mac(const struct jig_state_binding *b, const char *ref, long long created, json_t *h,
		      unsigned char out[JIG_STATE_MAC_LEN])
{
	char c[24];
	const void *parts[2 + N_FACTS];
	size_t lens[2 + N_FACTS];
	snprintf(c, sizeof(c), "%lld", created);
	parts[0] = ref, parts[1] = c;
	for (size_t i = 0; i < N_FACTS; i++)
		parts[2 + i] = json_string_value(json_object_get(h, FACTS[i])) ?: "";
	for (size_t i = 0; i < 2 + N_FACTS; i++)
		lens[i] = strlen(parts[i]);
	jig_state_bound_mac(b, JIG_SESSION_FORMAT, parts, lens, 2 + N_FACTS, out);
}

/* The header of entry name from its first bytes buf[n]: exactly the keys
 * jig writes, its creation time the name's, its MAC this operator's for
 * this project (b NULL: no key, nothing verifies). NULL: ignored, never
 * trusted. *hlen: the header line's length. */
static json_t *verified(const char *buf, size_t n, const char *name, const struct jig_state_binding *b, size_t *hlen)
{
	static const char *const keys[] = {"format", "flow", "route", "identity_sha256", "created", "session_id", "path",
					   "rollout_bytes", "rollout_sha256", "mac", NULL};
	const char *nl = memchr(buf, '\n', n < HEADER_MAX ? n : HEADER_MAX), *ref;
	long long created;
	struct jig_error ignored;
	json_t *h = NULL;
	if (!b || !nl || parse_name(name, &created, &ref) < 0 ||
	    jig_json_parse_object(buf, (size_t)(nl - buf), "session header", &h, &ignored) < 0)
		return NULL;
	bool ok = jig_json_only_keys(h, keys, "session header", &ignored) == 0 &&
		  strcmp(json_string_value(json_object_get(h, "format")) ?: "", JIG_SESSION_FORMAT) == 0 &&
		  json_integer_value(json_object_get(h, "created")) == created && json_is_integer(json_object_get(h, "rollout_bytes"));
	for (size_t i = 0; ok && i < N_FACTS; i++)
		ok = json_is_string(json_object_get(h, FACTS[i]));
	unsigned char mac[JIG_STATE_MAC_LEN], want[JIG_STATE_MAC_LEN];
	const char *hex = json_string_value(json_object_get(h, "mac"));
	if (ok && hex && strlen(hex) == 2 * JIG_STATE_MAC_LEN && jig_unhex(hex, mac, sizeof(mac)) == 0) {
		entry_mac(b, ref, created, h, want);
		ok = jig_state_mac_equal(mac, want);
	} else
		ok = false;
	if (!ok) {
		json_decref(h);
		return NULL;
	}
	*hlen = (size_t)(nl - buf);
	return h;
}

/* Whether stored session name counts towards the caps: 0 it does not
 * verify (ignored), 1 it does, 2 it does and is of sc's Flow and route. */
static int counted(int dfd, const char *name, const struct jig_state_binding *b, const struct jig_session_scope *sc)
{
	struct jig_error ignored;
	jig_autoclose int fd = b ? jig_state_open(dfd, name, "retained session", &ignored) : -1;
	char buf[HEADER_MAX];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
	size_t hl;
	json_t *h = n > 0 ? verified(buf, (size_t)n, name, b, &hl) : NULL;
	const char *flow = json_string_value(json_object_get(h, "flow")), *route = json_string_value(json_object_get(h, "route"));
	int c = !h ? 0 : strcmp(flow, sc->flow) == 0 && strcmp(route, sc->route) == 0 ? 2 : 1;
	json_decref(h);
	return c;
}

/* Removes expired sessions and stale partial writes; with sc, counts the
 * rest that verify under b (and those of sc's Flow and route); with ref,
 * finds ref's file name (verified or not: take says why not). */
static int prune(int dfd, time_t now, const char *ref, char found[64], const struct jig_state_binding *b,
		 const struct jig_session_scope *sc, int *available, int *in_scope, struct jig_error *e)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return jig_err(e, JIG_E_INTERNAL, ".jig/" JIG_SESSIONS_DIR ": %s", strerror(errno));
	}
	*available = 0;
	*in_scope = 0;
	found[0] = '\0';
	for (struct dirent *de; (de = readdir(d));) {
		long long created;
		const char *r;
		struct stat st;
		if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && now - st.st_mtime > TMP_STALE_S)
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (parse_name(de->d_name, &created, &r) < 0)
			continue;
		if (expired(created, now)) {
			unlinkat(dfd, de->d_name, 0);
			continue;
		}
		int c = sc ? counted(dfd, de->d_name, b, sc) : 0;
		*available += c > 0;
		*in_scope += c == 2;
		if (ref && strcmp(r, ref) == 0 && strlen(de->d_name) < 64) /* parse_name: <= 45 */
			memcpy(found, de->d_name, strlen(de->d_name) + 1);
	}
	closedir(d);
	return 0;
}

static void identity_line(const struct jig_session_scope *sc, char *out, size_t cap)
{
	snprintf(out, cap, "flow %s, route %s", sc->flow, sc->route);
}

int jig_session_take(int statefd, const struct jig_session_scope *sc, const char *ref, json_t **history,
		     struct jig_error *e)
{
	*history = NULL;
	if (strlen(ref) != JIG_SESSION_REF_HEX || strspn(ref, "0123456789abcdef") != JIG_SESSION_REF_HEX)
		return jig_err(e, JIG_E_USAGE, "session: not a reference jig returned (%d lowercase hex digits)", JIG_SESSION_REF_HEX);
	jig_autoclose int dfd = open_store(statefd, e);
	if (dfd < 0)
		return dfd;
	char name[64];
	int available, in_scope, r;
	if ((r = prune(dfd, time(NULL), ref, name, NULL, NULL, &available, &in_scope, e)) < 0)
		return r;
	if (!name[0])
		return jig_err(e, JIG_E_USAGE, "session %.8s…: unknown, expired (after 24 h) or already used; not restored", ref);
	struct jig_state_binding b;
	struct jig_error why = {0};
	if (jig_state_binding(statefd, false, &b, &why) < 0)
		return jig_err(e, JIG_E_USAGE, "session %.8s…: not restored (and not consumed): %s", ref, why.msg);
	jig_autofree char *buf = NULL;
	size_t len = 0, hl = 0;
	r = jig_state_read(dfd, name, HEADER_MAX + JIG_SESSION_MAX_BYTES, "its stored entry", &buf, &len, &why);
	json_t *h = r < 0 ? NULL : verified(buf, len, name, &b, &hl);
	jig_state_binding_clear(&b);
	/* Decision 231: refused (the Flow sees it), not started fresh. */
	if (!h)
		return jig_err(e, JIG_E_USAGE,
			       "session %.8s…: not restored (and not consumed): %s; it is ignored, never trusted: start a new session", ref,
			       r < 0 ? why.msg : "its stored entry was not made by you for this project (copied, planted or edited)");
	const char *flow = json_string_value(json_object_get(h, "flow")), *route = json_string_value(json_object_get(h, "route"));
	const char *idsha = json_string_value(json_object_get(h, "identity_sha256"));
	const char *sid = json_string_value(json_object_get(h, "session_id")), *path = json_string_value(json_object_get(h, "path"));
	const char *sha = json_string_value(json_object_get(h, "rollout_sha256"));
	const char *body = buf + hl + 1;
	size_t blen = len - hl - 1;
	unsigned char want[JIG_SHA256_LEN], got[JIG_SHA256_LEN];
	if (blen > JIG_SESSION_MAX_BYTES || strlen(sha) != 2 * JIG_SHA256_LEN || jig_unhex(sha, want, JIG_SHA256_LEN) < 0 ||
	    (jig_sha256(body, blen, got), memcmp(want, got, JIG_SHA256_LEN) != 0)) {
		json_decref(h);
		return jig_err(e, JIG_E_INTEGRITY, "session %.8s…: the stored session is damaged; not restored", ref);
	}
	if (strcmp(flow, sc->flow) != 0 || strcmp(route, sc->route) != 0 || strcmp(idsha, sc->identity_sha256) != 0) {
		char mine[300];
		identity_line(sc, mine, sizeof(mine));
		json_decref(h);
		return jig_err(e, JIG_E_USAGE,
			       "session %.8s…: belongs to another Flow, route or reviewed provider than %s; not restored (and not consumed)",
			       ref, mine);
	}
	/* The one caller whose unlink succeeds has it. */
	if (unlinkat(dfd, name, 0) < 0) {
		json_decref(h);
		return jig_err(e, JIG_E_USAGE, "session %.8s…: already used; not restored", ref);
	}
	fsync(dfd);
	*history = json_pack("{s:s,s:s,s:s%}", "session_id", sid, "path", path, "rollout", body, blen);
	json_decref(h);
	if (!*history)
		return jig_err(e, JIG_E_INTEGRITY, "session %.8s…: the stored history is not UTF-8 text; not restored", ref);
	return 0;
}

/* The worker's own rule for what it restores (plugins/acp/history.c,
 * request.c), checked again here: the worker runs in the provider's scope,
 * and a session stored that restore refuses would be a reference that
 * never works. id: 1-128 plain characters, no leading dot; path: 1-4 plain
 * names (no "." or ".."), at most 512 bytes, the last
 * "rollout-…-ID.jsonl". */
static bool restorable(const char *id, const char *path)
{
	size_t il = strlen(id), parts = 0;
	if (!il || il > 128 || strspn(id, NAME_CHARS) != il || id[0] == '.' || !*path || strlen(path) > 512)
		return false;
	const char *c = path;
	size_t n;
	for (;;) {
		n = strcspn(c, "/");
		if (n == 0 || strspn(c, NAME_CHARS) < n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.') ||
		    ++parts > 4)
			return false;
		if (!c[n])
			break;
		c += n + 1;
	}
	return n >= 8 + il + 7 && strncmp(c, "rollout-", 8) == 0 && strcmp(c + n - 6, ".jsonl") == 0 && c[n - 7 - il] == '-' &&
	       strncmp(c + n - 6 - il, id, il) == 0;
}

/* Stores history under the binding b (the caller holds it). */
static int put(int statefd, const struct jig_session_scope *sc, json_t *history, const struct jig_state_binding *b,
	       char ref[JIG_SESSION_REF_HEX + 1], struct jig_error *e)
{
	const char *sid = json_string_value(json_object_get(history, "session_id"));
	const char *path = json_string_value(json_object_get(history, "path"));
	json_t *ro = json_object_get(history, "rollout");
	jig_autoclose int dfd = open_store(statefd, e);
	if (dfd < 0)
		return dfd;
	time_t now = time(NULL);
	char unused[64];
	int available, in_scope, r;
	if ((r = prune(dfd, now, NULL, unused, b, sc, &available, &in_scope, e)) < 0)
		return r;
	if (available >= JIG_SESSIONS_MAX)
		return jig_err(e, JIG_E_USAGE,
			       "the project's session store holds %d sessions (each kept 24 h or until used); this one is not retained",
			       JIG_SESSIONS_MAX);
	/* Refused, not evicting: a reference a turn returned stays good
	 * until it is used or expires. */
	if (in_scope >= JIG_SESSIONS_SCOPE_MAX)
		return jig_err(e, JIG_E_USAGE,
			       "flow %s, route %s holds %d sessions in the project's store (each kept 24 h or until used); this one is "
			       "not retained",
			       sc->flow, sc->route, JIG_SESSIONS_SCOPE_MAX);
	/* The new reference is the caller's only once the store committed it
	 * (the rename below): until then it is a local name, and ref stays
	 * empty on every failure. */
	ref[0] = '\0';
	char fresh[JIG_SESSION_REF_HEX + 1];
	unsigned char rnd[JIG_SESSION_REF_HEX / 2], sha[JIG_SHA256_LEN], mac[JIG_STATE_MAC_LEN];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return jig_err(e, JIG_E_INTERNAL, "getrandom: %s", strerror(errno));
	jig_hex(rnd, sizeof(rnd), fresh);
	char shahex[JIG_SHA256_HEX], machex[2 * JIG_STATE_MAC_LEN + 1], tmp[64], name[64];
	jig_sha256(json_string_value(ro), json_string_length(ro), sha);
	jig_hex(sha, sizeof(sha), shahex);
	json_t *h = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:s,s:I,s:s}", "format", JIG_SESSION_FORMAT, "flow", sc->flow, "route",
			      sc->route, "identity_sha256", sc->identity_sha256, "created", (json_int_t)now, "session_id", sid,
			      "path", path, "rollout_bytes", (json_int_t)json_string_length(ro), "rollout_sha256", shahex);
	entry_mac(b, fresh, (long long)now, h, mac);
	jig_hex(mac, sizeof(mac), machex);
	json_object_set_new(h, "mac", json_string(machex));
	jig_autofree char *line = h ? json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(h);
	size_t ll = line ? strlen(line) : 0, len = ll + 1 + json_string_length(ro);
	if (!line || ll >= HEADER_MAX)
		return jig_err(e, JIG_E_INTERNAL, "the session header does not fit");
	jig_autofree char *data = malloc(len);
	if (!data)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	memcpy(data, line, ll);
	data[ll] = '\n';
	memcpy(data + ll + 1, json_string_value(ro), json_string_length(ro));
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s", fresh);
	snprintf(name, sizeof(name), "%lld-%s", (long long)now, fresh);
	/* Written whole by the store under a temporary name, then committed
	 * by its rename to the reference's name. */
	struct jig_error w = {0};
	bool ok = jig_state_write(dfd, tmp, data, len, &w) == 0;
	if (!ok)
		errno = EIO;
	/* Between the written history and its commit (docs/reliability.md):
	 * a coordinator stopped or killed here, or a commit that fails, gives
	 * no reference. */
	JIG_FAULT_POINT("session commit");
	if (ok && JIG_FAULT_FAILS("session commit"))
		ok = false, errno = EIO;
	if (!ok || renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE) < 0) {
		int err = errno;
		unlinkat(dfd, tmp, 0);
		return jig_err(e, JIG_E_INTERNAL, ".jig/" JIG_SESSIONS_DIR ": cannot store the session: %s", w.msg[0] ? w.msg : strerror(err));
	}
	fsync(dfd);
	memcpy(ref, fresh, sizeof(fresh));
	return 0;
}

int jig_session_put(int statefd, const struct jig_session_scope *sc, json_t *history, char ref[JIG_SESSION_REF_HEX + 1],
		    struct jig_error *e)
{
	const char *sid = json_string_value(json_object_get(history, "session_id"));
	const char *path = json_string_value(json_object_get(history, "path"));
	json_t *ro = json_object_get(history, "rollout");
	if (!sid || !path || !json_is_string(ro))
		return jig_err(e, JIG_E_INTEGRITY, "the worker's session history is malformed; not retained");
	if (!restorable(sid, path))
		return jig_err(e, JIG_E_INTEGRITY,
			       "the worker's session history has a session id or path jig would not restore (plain names, "
			       "rollout-…-SESSIONID.jsonl at most 4 levels deep); not retained");
	if (json_string_length(ro) > JIG_SESSION_MAX_BYTES)
		return jig_err(e, JIG_E_USAGE, "the session history is over %u bytes; not retained", JIG_SESSION_MAX_BYTES);
	struct jig_state_binding b;
	struct jig_error why = {0};
	if (jig_state_binding(statefd, true, &b, &why) < 0)
		return jig_err(e, JIG_E_USAGE, "the session is not retained: %s", why.msg);
	int r = put(statefd, sc, history, &b, ref, e);
	jig_state_binding_clear(&b);
	return r;
}
