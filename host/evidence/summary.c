/* The redacted evidence summary (jig-session-evidence/1): built only from
 * check ids, outcomes, digests, times and the raw files' hashes; checked
 * against the snapshot's schema and hunted for canaries and credential
 * names before a byte of it is written (pure; tests/unit/session). */
#include "evidence/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/crypto.h"
#include "util/json.h"
#include "util/limits.h"
#include "util/schema0.h"

static const char *outcome(int a)
{
	static const char *const names[] = {"allow", "deny", "error", "missing"};
	return a >= 0 && a <= JIG_EV_MISSING ? names[a] : "error";
}

static json_t *checks_json(const struct jig_evidence_suite *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < s->n; i++) {
		const struct jig_evidence_check *c = &s->c[i];
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:b}", "id", c->id, "expected",
						       c->expect_allow ? "allow" : "deny", "actual", outcome(c->actual),
						       "pass", jig_evidence_check_passed(c), "vacuous", c->vacuous)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *jig_evidence_summary(const struct jig_evidence_suite *s, const struct jig_evidence_meta *m)
{
	json_t *raw = json_array();
	for (size_t i = 0; raw && i < m->n_raw; i++)
		if (json_array_append_new(raw, json_pack("{s:s, s:s, s:I}", "name", m->raw_names[i], "sha256",
							 m->raw_sha256[i], "bytes", (json_int_t)m->raw_bytes[i])) < 0) {
			json_decref(raw);
			raw = NULL;
		}
	json_t *checks = checks_json(s);
	if (!raw || !checks) {
		json_decref(raw);
		json_decref(checks);
		return NULL;
	}
	json_t *sum = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}", "format", JIG_EVIDENCE_FORMAT,
				"run", m->run, "repository", m->repository, "worktree_mode", m->worktree_rw ? "rw" : "ro",
				"policy_sha256", m->policy_sha256, "probe_policy_sha256", m->probe_policy_sha256, "snapshot_sha256", m->snapshot_sha256, "started", m->started,
				"finished", m->finished, "result", jig_evidence_failed(s) ? "fail" : "pass", "checks", checks,
				"evidence", raw);
	if (sum && m->git)
		json_object_set(sum, "git", m->git);
	return sum;
}

const char **jig_evidence_canaries(char *const *env)
{
	size_t n = 0;
	while (env && env[n])
		n++;
	const char **out = calloc(n + 1, sizeof(*out));
	size_t k = 0;
	for (size_t i = 0; out && i < n; i++) {
		const char *eq = strchr(env[i], '=');
		if (!eq || strlen(eq + 1) < JIG_EVIDENCE_CANARY_MIN)
			continue;
		size_t len = (size_t)(eq - env[i]);
		if (jig_evidence_credential_name(env[i], len) ||
		    (len == strlen(JIG_EVIDENCE_CANARY_VAR) && !strncmp(env[i], JIG_EVIDENCE_CANARY_VAR, len)))
			out[k++] = eq + 1;
	}
	return out;
}

static bool word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int jig_evidence_redaction_check(const char *text, const char *const *canaries, struct jig_error *e)
{
	for (size_t i = 0; canaries && canaries[i]; i++)
		if (strlen(canaries[i]) >= JIG_EVIDENCE_CANARY_MIN && strstr(text, canaries[i]))
			return jig_err(e, JIG_E_INTEGRITY,
				       "evidence: the summary would carry the value of a credential-like variable (canary %zu); "
				       "nothing was written",
				       i + 1);
	for (const char *p = text; *p;) {
		if (!word_char(*p)) {
			p++;
			continue;
		}
		const char *w = p;
		while (word_char(*p))
			p++;
		if (jig_evidence_credential_name(w, (size_t)(p - w)))
			return jig_err(e, JIG_E_INTEGRITY,
				       "evidence: the summary would carry a credential-like name at byte %zu; nothing was written",
				       (size_t)(w - text));
	}
	return 0;
}

int jig_evidence_summary_bytes(json_t *summary, json_t *schema, const char *const *canaries, char **out,
			       struct jig_error *e)
{
	*out = NULL;
	int r = jig_schema0_check(schema, e);
	if (r)
		return jig_err_prefix(e, JIG_E_INTEGRITY, "evidence: the shipped summary schema: ");
	if (jig_schema0_validate(schema, summary, e) < 0)
		return jig_err_prefix(e, JIG_E_INTERNAL, "evidence: the summary does not match %s: ", JIG_EVIDENCE_FORMAT);
	char *text = jig_json_canonical(summary);
	if (!text)
		return jig_err(e, JIG_E_INTERNAL, "evidence: out of memory");
	if ((r = jig_evidence_redaction_check(text, canaries, e))) {
		free(text);
		return r;
	}
	*out = text;
	return 0;
}

int jig_evidence_run_id(char out[40], struct jig_error *e)
{
	unsigned char rnd[8];
	char hex[17];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return jig_err(e, JIG_E_INTERNAL, "evidence: no random bytes for a run id");
	jig_hex(rnd, sizeof(rnd), hex);
	time_t now = time(NULL);
	struct tm tm;
	char ts[20];
	if (!gmtime_r(&now, &tm) || !strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm))
		return jig_err(e, JIG_E_INTERNAL, "evidence: no time for a run id");
	snprintf(out, 40, "%s-%s", ts, hex);
	return 0;
}
