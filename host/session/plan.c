/* The session's plan, text and JSON, from the object that launches. */
#include <stdio.h>
#include <string.h>

#include "session/broker.h"
#include "session/gitcmd.h"
#include "session/internal.h"
#include "session/httpschain.h"
#include "session/sshchain.h"
#include "util/fileio.h"
#include "util/text.h"

static json_t *high_risk_json(unsigned bits)
{
	json_t *a = json_array();
	for (unsigned b = 1; b & JIG_SESSION_HR_ALL; b <<= 1)
		if (bits & b)
			json_array_append_new(a, json_pack("{s:s,s:s}", "flag", jig_session_high_risk_name(b), "status", "not built yet"));
	return a;
}

/* The scope each brokered git request runs in (decision 238): the
 * session-git kind as a request from the worktree's root with no remote
 * gets it; a fetch, pull or push adds its approved local remotes or SSH
 * host (listed beside it), nothing else. */
static int git_scope(const struct jig_session *s, struct jig_scope_template *t, struct jig_error *e)
{
	char copy[4096];
	struct jig_session_git_facts gf = {.name = JIG_SESSION_GIT_KIND, .snapshot_dir = s->snap.dirpath, .home = jig_caller_home(),
					   .worktree = s->w.worktree, .git_dir = s->w.common_dir, .rw = s->w.rw, .cwd = s->w.worktree,
					   .git_copy = jig_broker_git_copy_path(s->broker_dir, JIG_SESSION_ID_SLOT, copy, sizeof(copy)) == 0 ? copy : NULL};
	return jig_session_git_compose(&s->cat, &gf, t, e);
}

/* The context's SSH hosts the repository's git_remotes name, and its agent. */
static json_t *ssh_hosts(const struct jig_session *s, const char **agent)
{
	json_t *ctx = json_object_get(json_object_get(s->map.doc, "contexts"), s->w.context), *out = json_object(), *v;
	size_t i;
	*agent = json_string_value(json_object_get(ctx, "ssh_agent"));
	json_array_foreach(json_object_get(s->w.repo, "git_remotes"), i, v) {
		char alias[64];
		if (jig_ssh_url_alias(json_string_value(v), alias, sizeof(alias)) == 0)
			json_object_set_new(out, alias, json_deep_copy(json_object_get(json_object_get(ctx, "ssh_hosts"), alias)));
	}
	json_t *h;
	const char *k;
	json_object_foreach(out, k, h) json_object_del(h, "about");
	return out;
}

/* The context's HTTPS hosts the repository's git_remotes name (decision 290). */
static json_t *https_hosts(const struct jig_session *s)
{
	json_t *hosts = json_object_get(json_object_get(json_object_get(s->map.doc, "contexts"), s->w.context), "https_hosts");
	json_t *out = json_object(), *v, *h;
	size_t i;
	json_array_foreach(json_object_get(s->w.repo, "git_remotes"), i, v) {
		const char *alias = jig_https_host_of(hosts, json_string_value(v));
		if (alias)
			json_object_set_new(out, alias, json_deep_copy(json_object_get(hosts, alias)));
	}
	const char *k;
	json_object_foreach(out, k, h) json_object_del(h, "about");
	return out;
}

/* The broker's policies (Slice 4A): the snapshot's git command policy by
 * its manifest digest, the pinned git by its own, the approved remotes,
 * the git scope's policy and digest, the SSH hosts and the agent. */
static json_t *broker_json(const struct jig_session *s)
{
	char pol[JIG_SHA256_HEX] = "", git[JIG_SHA256_HEX] = "";
	const struct jig_manifest_file *f = jig_manifest_find_file(&s->snap.m, JIG_GIT_POLICY_FILE);
	if (f)
		jig_hex(f->sha256, JIG_SHA256_LEN, pol);
	jig_broker_git_sha256(git);
	json_t *rem = json_object_get(s->w.repo, "git_remotes");
	const char *agent;
	json_t *hosts = ssh_hosts(s, &agent);
	json_t *b = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:o}", "socket", JIG_SESSION_BROKER_TARGET "/sock", "git_policy",
			      JIG_GIT_POLICY_FILE, "git_policy_sha256", pol, "git", JIG_BROKER_GIT, "git_sha256", git, "git_remotes",
			      rem ? json_deep_copy(rem) : json_array(), "ssh", "refused", "ssh_hosts", hosts);
	if (b)
		json_object_set_new(b, "https_hosts", https_hosts(s));
	if (b && json_object_size(hosts))
		json_object_set_new(b, "ssh_agent", json_pack("{s:s,s:s}", "context", s->w.context, "socket", agent ? agent : ""));
	struct jig_scope_template t;
	struct jig_error e = {0};
	if (b && git_scope(s, &t, &e) == 0) {
		json_object_set_new(b, "git_scope", json_pack("{s:s,s:s,s:o}", "name", t.policy.name, "policy_sha256", t.policy.sha256,
							      "permission_plan", jig_scope_plan_json(&t.policy)));
		jig_scope_template_free(&t);
	} else if (b)
		json_object_set_new(b, "git_scope", json_pack("{s:s}", "error", e.msg));
	return b;
}

json_t *jig_session_plan_json(const struct jig_session *s)
{
	json_t *argv = json_object_get(s->doc, "argv");
	json_t *caps = json_object_get(s->w.repo, "capabilities");
	json_t *plan = json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:s,s:s,s:s},s:{s:s,s:s},s:{s:s,s:s,s:s,s:O},s:{s:s,s:O},s:s,s:o,s:o,"
			 "s:{s:s,s:s,s:s},s:s,s:s,s:O,s:o}",
			 "schema", JIG_SESSION_PLAN_FORMAT,
			 "repository", "id", s->w.repo_id, "root", s->w.root, "worktree", s->w.worktree, "common_dir",
			 s->w.common_dir, "cwd", s->w.cwd, "mode", s->w.rw ? "rw" : "ro", "context", s->w.context,
			 "tmpdir", "path", s->tmpdir, "note", "@session is this launch's id: created 0700 at launch, removed at exit; not in the digest",
			 "provider", "id", s->w.provider_id, "endpoint", json_string_value(json_object_get(s->w.provider, "endpoint")),
			 "kind", s->loopback ? "loopback" : "remote (through jig's CONNECT relay)", "network", s->network,
			 "client", "id", s->w.client_id, "command", json_object_get(s->w.client, "command"),
			 "state_root", s->state_root, "capabilities", caps ? json_incref(caps) : json_array(),
			 "high_risk", high_risk_json(s->high_risk),
			 "snapshot", "manifest_sha256", s->manifest_sha256, "launch_identity", s->identity, "catalog_sha256",
			 s->catalog_sha256, "map_sha256", s->map.sha256, "policy_sha256", s->sha256, "argv", argv,
			 "permission_plan", jig_scope_plan_json(&s->t.policy));
	if (plan)
		json_object_set_new(plan, "broker", broker_json(s));
	return plan;
}

static void line(FILE *out, const char *label, const char *value)
{
	fprintf(out, "  %-14s ", label);
	jig_text_put(out, value);
	fputc('\n', out);
}

void jig_session_plan_print(const struct jig_session *s, FILE *out)
{
	char buf[3 * PATH_MAX];
	fprintf(out, "session of repository ");
	jig_text_put(out, s->w.repo_id);
	fputc('\n', out);
	line(out, "root", s->w.root);
	snprintf(buf, sizeof(buf), "%s (%s)", s->w.worktree, s->w.rw ? "read/write" : "read-only");
	line(out, "worktree", buf);
	line(out, "cwd", s->w.cwd);
	line(out, "context", s->w.context);
	snprintf(buf, sizeof(buf), "%s (0700, created at launch, removed at exit; @session is the launch's id)", s->tmpdir);
	line(out, "TMPDIR", buf);
	snprintf(buf, sizeof(buf), "%s at %s (%s)", s->w.provider_id, json_string_value(json_object_get(s->w.provider, "endpoint")),
		 s->loopback ? "loopback: only this address and port" : "remote: CONNECT to only this host and port");
	line(out, "provider", buf);
	line(out, "client", s->w.client_id);
	snprintf(buf, sizeof(buf), "%s (0700, writable, HOME)", s->state_root);
	line(out, "state root", buf);
	line(out, "capabilities", json_array_size(json_object_get(s->w.repo, "capabilities")) ? "(see --json)" : "none");
	fprintf(out, "  %-14s", "high-risk");
	if (!(s->high_risk & JIG_SESSION_HR_ALL))
		fprintf(out, " none");
	for (unsigned b = 1; b & JIG_SESSION_HR_ALL; b <<= 1)
		if (s->high_risk & b)
			fprintf(out, " --%s (not built yet)", jig_session_high_risk_name(b));
	fputc('\n', out);
	line(out, "snapshot", s->manifest_sha256);
	line(out, "map sha256", s->map.sha256);
	line(out, "policy sha256", s->sha256);
	char pol[JIG_SHA256_HEX] = "?", git[JIG_SHA256_HEX];
	const struct jig_manifest_file *f = jig_manifest_find_file(&s->snap.m, JIG_GIT_POLICY_FILE);
	if (f)
		jig_hex(f->sha256, JIG_SHA256_LEN, pol);
	jig_broker_git_sha256(git);
	snprintf(buf, sizeof(buf), "through jig's broker: %s (sha256 %s), policy %s (sha256 %s), %zu approved remote(s); ssh refused",
		 JIG_BROKER_GIT, git, JIG_GIT_POLICY_FILE, pol, json_array_size(json_object_get(s->w.repo, "git_remotes")));
	line(out, "git", buf);
	const char *agent, *alias;
	json_t *hosts = ssh_hosts(s, &agent), *h;
	json_object_foreach(hosts, alias, h) {
		snprintf(buf, sizeof(buf), "%s at %s:%lld (known_hosts %s, %zu approved key(s), the %s context's agent %s)", alias,
			 json_string_value(json_object_get(h, "host")), (long long)json_integer_value(json_object_get(h, "port")),
			 json_string_value(json_object_get(h, "known_hosts")), json_array_size(json_object_get(h, "fingerprints")),
			 s->w.context, agent ? agent : "?");
		line(out, "ssh host", buf);
	}
	json_decref(hosts);
	hosts = https_hosts(s);
	json_object_foreach(hosts, alias, h) {
		const char *cred = json_string_value(json_object_get(h, "credential"));
		snprintf(buf, sizeof(buf), "%s at %s:%lld (CA %s, %s%s)", alias, json_string_value(json_object_get(h, "host")),
			 (long long)json_integer_value(json_object_get(h, "port")), json_string_value(json_object_get(h, "ca_file")),
			 cred ? "credential " : "no credential", cred ? cred : "");
		line(out, "https host", buf);
	}
	json_decref(hosts);
	struct jig_scope_template t;
	struct jig_error e = {0};
	if (git_scope(s, &t, &e) == 0) {
		fprintf(out, "  git's scope (each brokered request; a fetch, pull or push adds its approved local remote, or its SSH host's port, jig's ssh configuration, the known_hosts and the agent, or its HTTPS host's port, CA file, credential file and jig's TLS configuration):\n");
		jig_scope_plan_print(&t.policy, "    ", out);
		jig_scope_template_free(&t);
	} else
		line(out, "git's scope", e.msg);
	fprintf(out, "  %-14s", "program");
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(s->doc, "argv"), i, v) {
		fputc(' ', out);
		jig_text_put(out, json_string_value(v));
	}
	fputc('\n', out);
	jig_scope_plan_print(&s->t.policy, "  ", out);
}
