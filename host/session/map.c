/* The trusted repository map: strict parse, the operator's file, and the
 * resolution of a working directory to its mapped repository. */
#include "session/map.h"

#include <errno.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "policy/scope_policy.h"
#include "session/places.h"
#include "session/httpschain.h"
#include "session/sshchain.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/netaddr.h"
#include "util/text.h"

#define MAX_LIST 64
#define MAX_ID 32

static bool valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_ID || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

static bool abs_normal(const char *p)
{
	return p[0] == '/' && p[1] != '\0' && jig_path_is_normal_relative(p + 1);
}

/* A DNS name: labels of [a-z0-9-] (1-63, no '-' at either end), no empty
 * label (so no trailing dot), the last not all digits; not "localhost" nor
 * a name below it (RFC 6761). */
static bool dns_name(const char *h, size_t n)
{
	size_t label = 0;
	for (size_t i = 0; i <= n; i++) {
		char c = i < n ? h[i] : '.';
		if (c == '.') {
			if (label == 0 || label > 63 || h[i - 1] == '-' || h[i - label] == '-')
				return false;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')
			label++;
		else
			return false;
	}
	return !(n >= 9 && strncmp(h + n - 9, "localhost", 9) == 0 && (n == 9 || h[n - 10] == '.'));
}

const char *jig_session_endpoint_check(const char *ep, bool *loopback)
{
	const char *colon = strrchr(ep, ':');
	*loopback = false;
	if (!colon || colon == ep || colon - ep > 253)
		return "not HOST:PORT";
	/* Only digits, no leading zero (strtoul would also take leading
	 * white space of any kind, a sign or "0x"-less zeros). */
	size_t digits = strspn(colon + 1, "0123456789");
	unsigned long port = digits && digits <= 5 && !colon[1 + digits] && colon[1] != '0' ? strtoul(colon + 1, NULL, 10) : 0;
	if (port < 1 || port > 65535)
		return "its PORT is not 1-65535 written plainly";
	size_t n = (size_t)(colon - ep);
	struct sockaddr_storage sa;
	int lit = jig_addr_literal(ep, n, &sa);
	if (lit < 0)
		return "an IP address in a spelling other than its canonical one (inet_ntop's); write it canonically";
	if (lit == 0)
		return dns_name(ep, n) ? NULL : "its HOST is neither a DNS name (lower case, no trailing dot, not localhost) nor a canonical IP address";
	/* A literal: exactly 127.0.0.1 is the loopback server; no other
	 * address of this host (or link-local) is a remote provider. */
	if (n == 9 && strncmp(ep, "127.0.0.1", 9) == 0)
		return *loopback = true, NULL;
	const char *local = jig_addr_local((const struct sockaddr *)&sa);
	return local ? "a remote provider's address is this host's or link-local (only 127.0.0.1:PORT is a loopback server)" : NULL;
}

bool jig_session_endpoint_valid(const char *ep, bool *loopback)
{
	return jig_session_endpoint_check(ep, loopback) == NULL;
}

/* An optional array of at most MAX_LIST strings, each passing ok (NULL: any). */
static int str_list(json_t *o, const char *key, const char *what, bool (*ok)(const char *), const char *rule,
		    struct jig_error *e)
{
	json_t *a = json_object_get(o, key), *v;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > MAX_LIST)
		return jig_err(e, JIG_E_USAGE, "%s.%s: an array of at most %d strings", what, key, MAX_LIST);
	size_t i;
	json_array_foreach(a, i, v)
		if (!json_is_string(v) || (ok && !ok(json_string_value(v))))
			return jig_err(e, JIG_E_USAGE, "%s.%s[%zu]: %s", what, key, i, rule);
	return 0;
}

static bool is_selector(const char *s)
{
	return s[0] == '-' && s[1] != '\0' && strlen(s) <= 64;
}

/* Non-secret environment: names not credential-like, not jig's own. */
static int env_obj(json_t *o, const char *what, struct jig_error *e)
{
	static const char *const reserved[] = {"HOME", "TMPDIR", "PATH", "TERM", "LANG", NULL};
	json_t *env = json_object_get(o, "env"), *v;
	const char *k;
	if (!env)
		return 0;
	if (!json_is_object(env) || json_object_size(env) > MAX_LIST)
		return jig_err(e, JIG_E_USAGE, "%s.env: an object of at most %d NAME: \"value\"", what, MAX_LIST);
	json_object_foreach(env, k, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) > 1024)
			return jig_err(e, JIG_E_USAGE, "%s.env.%s: a string of at most 1024 bytes", what, k);
		if (jig_env_name_is_credential(k))
			return jig_err(e, JIG_E_USAGE, "%s.env.%s: a credential-like name never enters a session (a remote provider's login lives in the session's state root)", what, k);
		for (const char *const *r = reserved; *r; r++)
			if (strcmp(k, *r) == 0)
				return jig_err(e, JIG_E_USAGE, "%s.env.%s: set by jig, not by the map", what, k);
	}
	return 0;
}

static int parse_client(const char *id, json_t *c, const char *what, struct jig_error *e)
{
	static const char *const keys[] = {"command", "trees", "config", "env", "selectors", "about", NULL};
	char w[128];
	snprintf(w, sizeof(w), "%s: clients.%s", what, id);
	json_t *cmd = json_object_get(c, "command");
	int r = jig_json_usage(jig_json_only_keys(c, keys, w, e), e);
	if (!r && (!json_is_array(cmd) || json_array_size(cmd) == 0 || !json_is_string(json_array_get(cmd, 0)) ||
		   !abs_normal(json_string_value(json_array_get(cmd, 0)))))
		r = jig_err(e, JIG_E_USAGE, "%s.command: an array whose first string is the client's absolute path", w);
	if (!r)
		r = str_list(c, "command", w, NULL, "a string", e);
	if (!r)
		r = str_list(c, "trees", w, abs_normal, "an absolute, normalised path", e);
	if (!r)
		r = str_list(c, "config", w, abs_normal, "an absolute, normalised path", e);
	if (!r)
		r = str_list(c, "selectors", w, is_selector, "an option starting with \"-\"", e);
	if (!r && json_object_get(c, "about") && !json_is_string(json_object_get(c, "about")))
		r = jig_err(e, JIG_E_USAGE, "%s.about: a string", w);
	return r ? r : env_obj(c, w, e);
}

static int parse_provider(json_t *doc, const char *id, json_t *p, const char *what, struct jig_error *e)
{
	static const char *const keys[] = {"client", "endpoint", "args", "env", "about", NULL};
	char w[128];
	snprintf(w, sizeof(w), "%s: providers.%s", what, id);
	const char *client = json_string_value(json_object_get(p, "client"));
	const char *ep = json_string_value(json_object_get(p, "endpoint"));
	bool lo;
	int r = jig_json_usage(jig_json_only_keys(p, keys, w, e), e);
	if (!r && (!client || !json_object_get(json_object_get(doc, "clients"), client)))
		r = jig_err(e, JIG_E_USAGE, "%s.client: the id of a client in \"clients\"", w);
	const char *why = ep ? jig_session_endpoint_check(ep, &lo) : "missing";
	if (!r && why)
		r = jig_err(e, JIG_E_USAGE, "%s.endpoint \"%.80s\": %s; \"127.0.0.1:PORT\" (a loopback server) or \"HOST:PORT\" (a remote provider)", w,
			    ep ? ep : "", why);
	if (!r)
		r = str_list(p, "args", w, NULL, "a string", e);
	if (!r && json_object_get(p, "about") && !json_is_string(json_object_get(p, "about")))
		r = jig_err(e, JIG_E_USAGE, "%s.about: a string", w);
	return r ? r : env_obj(p, w, e);
}

static bool approved(json_t *repo, const char *prov)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(repo, "providers"), i, v)
		if (strcmp(json_string_value(v), prov) == 0)
			return true;
	return false;
}

static bool git_remote_ok(const char *u)
{
	char alias[64], host[300];
	long port;
	return jig_https_url(u, host, sizeof(host), &port) == 0 || abs_normal(u) || jig_ssh_url_alias(u, alias, sizeof(alias)) == 0;
}

/* Each ssh:// remote names an SSH host of the repository's own context
 * (decision 235): the other context's hosts, keys and agent never serve it. */
static int ssh_remotes_in_context(json_t *doc, json_t *p, const char *ctx, const char *w, struct jig_error *e)
{
	json_t *c = json_object_get(json_object_get(doc, "contexts"), ctx), *hosts = json_object_get(c, "ssh_hosts"), *v;
	json_t *https = json_object_get(c, "https_hosts");
	size_t i;
	json_array_foreach(json_object_get(p, "git_remotes"), i, v) {
		char alias[64];
		if (jig_ssh_url_alias(json_string_value(v), alias, sizeof(alias)) == 0 && !json_object_get(hosts, alias))
			return jig_err(e, JIG_E_USAGE, "%s.git_remotes[%zu] \"%.200s\": \"%s\" is not an SSH host of context \"%s\" (contexts.%s.ssh_hosts)",
				       w, i, json_string_value(v), alias, ctx, ctx);
		/* An https:// remote names a host and port of the context's own
		 * https_hosts (decision 290). */
		if (strncmp(json_string_value(v), "https://", 8) == 0 && !jig_https_host_of(https, json_string_value(v)))
			return jig_err(e, JIG_E_USAGE, "%s.git_remotes[%zu] \"%.200s\": its host and port are not an HTTPS host of context \"%s\" (contexts.%s.https_hosts)",
				       w, i, json_string_value(v), ctx, ctx);
	}
	return 0;
}

static bool fingerprint_ok(const char *f)
{
	return strncmp(f, "SHA256:", 7) == 0 && strlen(f + 7) == 43 &&
	       strspn(f + 7, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") == 43;
}

/* contexts.<c>.https_hosts (decision 290): ALIAS: {host, port, ca_file,
 * credential?}; the files' own checks run at launch (httpschain.h). */
static int parse_https_hosts(json_t *c, const char *w, struct jig_error *e)
{
	static const char *const hkeys[] = {"host", "port", "ca_file", "credential", "about", NULL};
	json_t *hosts = json_object_get(c, "https_hosts"), *h;
	if (!hosts)
		return 0;
	if (!json_is_object(hosts) || json_object_size(hosts) == 0 || json_object_size(hosts) > 16)
		return jig_err(e, JIG_E_USAGE, "%s.https_hosts: an object of 1 to 16 ALIAS: {host, port, ca_file, credential}", w);
	const char *alias;
	json_object_foreach(hosts, alias, h) {
		char hw[200], ep[320];
		snprintf(hw, sizeof(hw), "%s.https_hosts.%.40s", w, alias);
		if (!valid_id(alias) || !json_is_object(h))
			return jig_err(e, JIG_E_USAGE, "%s: an alias of [a-z0-9_-] (at most %d) naming an object", hw, MAX_ID);
		int r = jig_json_usage(jig_json_only_keys(h, hkeys, hw, e), e);
		if (r)
			return r;
		const char *host = json_string_value(json_object_get(h, "host")), *why;
		const char *ca = json_string_value(json_object_get(h, "ca_file"));
		json_t *cred = json_object_get(h, "credential");
		bool lo;
		snprintf(ep, sizeof(ep), "%.255s:%lld", host ? host : "", (long long)json_integer_value(json_object_get(h, "port")));
		if (!host || !json_is_integer(json_object_get(h, "port")) || (why = jig_session_endpoint_check(ep, &lo)) != NULL)
			return jig_err(e, JIG_E_USAGE, "%s: host \"%.80s\" and port: %s", hw, host ? host : "",
				       host && json_is_integer(json_object_get(h, "port")) ? why : "a DNS name or IP address and a port 1-65535");
		if (!ca || !abs_normal(ca))
			return jig_err(e, JIG_E_USAGE, "%s.ca_file: the absolute, physical path of the operator's CA certificates for it (PEM)", hw);
		if (cred && (!json_is_string(cred) || !abs_normal(json_string_value(cred))))
			return jig_err(e, JIG_E_USAGE, "%s.credential: the absolute, physical path of the operator's credential file for it (username=, password= lines)", hw);
	}
	return 0;
}

/* contexts.<personal|work>: the context's own ssh-agent socket and its
 * approved SSH hosts (decision 235). */
static int parse_context(json_t *doc, const char *id, json_t *c, const char *what, struct jig_error *e)
{
	(void)doc;
	static const char *const keys[] = {"ssh_agent", "ssh_hosts", "https_hosts", "about", NULL};
	static const char *const hkeys[] = {"host", "port", "known_hosts", "fingerprints", "about", NULL};
	char w[128];
	snprintf(w, sizeof(w), "%s: contexts.%s", what, id);
	const char *agent = json_string_value(json_object_get(c, "ssh_agent"));
	json_t *hosts = json_object_get(c, "ssh_hosts"), *h;
	int r = jig_json_usage(jig_json_only_keys(c, keys, w, e), e);
	if (!r && strcmp(id, "personal") != 0 && strcmp(id, "work") != 0)
		r = jig_err(e, JIG_E_USAGE, "%s: a context is \"personal\" or \"work\"", w);
	if (!r)
		r = parse_https_hosts(c, w, e);
	/* A context of HTTPS hosts alone needs no agent (decision 290). */
	if (!r && json_object_get(c, "https_hosts") && !json_object_get(c, "ssh_hosts") && !agent)
		return json_object_get(c, "about") && !json_is_string(json_object_get(c, "about")) ? jig_err(e, JIG_E_USAGE, "%s.about: a string", w) : 0;
	if (!r && (!agent || !abs_normal(agent)))
		r = jig_err(e, JIG_E_USAGE, "%s.ssh_agent: the absolute, physical path of the context's own ssh-agent socket", w);
	if (!r && (strncmp(agent, "/run/", 5) == 0 || strncmp(agent, "/var/run/", 9) == 0))
		r = jig_err(e, JIG_E_USAGE, "%s.ssh_agent %s: below /run nothing but a regular file is bound into a scope; start the context's agent with `ssh-agent -a ~/.ssh/agent-%s.sock`", w, agent, id);
	if (!r && (!json_is_object(hosts) || json_object_size(hosts) == 0 || json_object_size(hosts) > 16))
		r = jig_err(e, JIG_E_USAGE, "%s.ssh_hosts: an object of 1 to 16 ALIAS: {host, port, known_hosts, fingerprints}", w);
	const char *alias;
	json_object_foreach(r ? NULL : hosts, alias, h) {
		char hw[200], ep[320];
		snprintf(hw, sizeof(hw), "%s.ssh_hosts.%.40s", w, alias);
		const char *host = json_string_value(json_object_get(h, "host")), *kh = json_string_value(json_object_get(h, "known_hosts")), *why;
		json_int_t port = json_integer_value(json_object_get(h, "port"));
		json_t *fps = json_object_get(h, "fingerprints"), *v;
		bool lo;
		if (!valid_id(alias) || !json_is_object(h))
			return jig_err(e, JIG_E_USAGE, "%s: an alias of [a-z0-9_-] (at most %d) naming an object", hw, MAX_ID);
		if ((r = jig_json_usage(jig_json_only_keys(h, hkeys, hw, e), e)))
			return r;
		snprintf(ep, sizeof(ep), "%.255s:%lld", host ? host : "", (long long)port);
		if (!host || !json_is_integer(json_object_get(h, "port")) || (why = jig_session_endpoint_check(ep, &lo)) != NULL)
			return jig_err(e, JIG_E_USAGE, "%s: host \"%.80s\" and port: %s", hw, host ? host : "",
				       host && json_is_integer(json_object_get(h, "port")) ? why : "a DNS name or IP address and a port 1-65535");
		if (!kh || !abs_normal(kh))
			return jig_err(e, JIG_E_USAGE, "%s.known_hosts: the absolute, physical path of the operator's known_hosts for it", hw);
		if (!json_is_array(fps) || json_array_size(fps) == 0 || json_array_size(fps) > 16)
			return jig_err(e, JIG_E_USAGE, "%s.fingerprints: 1 to 16 approved keys' fingerprints (\"SHA256:...\", as ssh-add -l prints them)", hw);
		size_t i;
		json_array_foreach(fps, i, v)
			if (!json_is_string(v) || !fingerprint_ok(json_string_value(v)))
				return jig_err(e, JIG_E_USAGE, "%s.fingerprints[%zu]: \"SHA256:\" and 43 base64 characters (ssh-add -l)", hw, i);
	}
	if (!r && json_object_get(c, "about") && !json_is_string(json_object_get(c, "about")))
		r = jig_err(e, JIG_E_USAGE, "%s.about: a string", w);
	return r;
}

/* The two contexts' agents apart: one socket never serves both. */
static int agents_apart(json_t *doc, const char *what, struct jig_error *e)
{
	json_t *ctx = json_object_get(doc, "contexts");
	const char *p = json_string_value(json_object_get(json_object_get(ctx, "personal"), "ssh_agent"));
	const char *w = json_string_value(json_object_get(json_object_get(ctx, "work"), "ssh_agent"));
	if (p && w && strcmp(p, w) == 0)
		return jig_err(e, JIG_E_USAGE, "%s: contexts.personal and contexts.work name the same ssh_agent %s; each context has its own agent", what, p);
	return 0;
}

static int parse_repo(json_t *doc, const char *id, json_t *p, const char *what, struct jig_error *e)
{
	static const char *const keys[] = {"root", "worktrees", "mode", "context", "default_provider", "providers",
					   "capabilities", "git_remotes", "about", NULL};
	char w[128];
	snprintf(w, sizeof(w), "%s: repositories.%s", what, id);
	const char *root = json_string_value(json_object_get(p, "root"));
	const char *mode = json_string_value(json_object_get(p, "mode"));
	const char *ctx = json_string_value(json_object_get(p, "context"));
	json_t *provs = json_object_get(p, "providers"), *dflt = json_object_get(p, "default_provider"), *v;
	int r = jig_json_usage(jig_json_only_keys(p, keys, w, e), e);
	if (!r && (!root || !abs_normal(root)))
		r = jig_err(e, JIG_E_USAGE, "%s.root: the repository's absolute, physical, normalised path", w);
	if (!r)
		r = str_list(p, "worktrees", w, abs_normal, "an absolute, physical, normalised path", e);
	if (!r && (!mode || (strcmp(mode, "ro") != 0 && strcmp(mode, "rw") != 0)))
		r = jig_err(e, JIG_E_USAGE, "%s.mode: \"ro\" or \"rw\"", w);
	if (!r && (!ctx || (strcmp(ctx, "personal") != 0 && strcmp(ctx, "work") != 0)))
		r = jig_err(e, JIG_E_USAGE, "%s.context: \"personal\" or \"work\"", w);
	if (!r && (!json_is_array(provs) || json_array_size(provs) == 0))
		r = jig_err(e, JIG_E_USAGE, "%s.providers: the approved providers' ids (at least one)", w);
	size_t i;
	json_array_foreach(r ? NULL : provs, i, v)
		if (!r && (!json_is_string(v) || !json_object_get(json_object_get(doc, "providers"), json_string_value(v))))
			r = jig_err(e, JIG_E_USAGE, "%s.providers[%zu]: the id of a provider in \"providers\"", w, i);
	/* One string; a list is kept to be refused as ambiguous when used. */
	if (!r && dflt && json_is_string(dflt) && !approved(p, json_string_value(dflt)))
		r = jig_err(e, JIG_E_USAGE, "%s.default_provider: \"%.40s\" is not one of its approved providers", w, json_string_value(dflt));
	if (!r && dflt && !json_is_string(dflt))
		r = str_list(p, "default_provider", w, NULL, "a provider id", e);
	/* The remotes the session's git may reach (Slice 4A): exact URLs. */
	if (!r)
		r = str_list(p, "git_remotes", w, git_remote_ok, "an https://HOST[:PORT]/PATH URL, an ssh://[USER@]ALIAS/PATH URL or an absolute path to a repository", e);
	if (!r)
		r = ssh_remotes_in_context(doc, p, ctx, w, e);
	json_t *caps = json_object_get(p, "capabilities");
	if (!r && caps && (!json_is_array(caps) || json_array_size(caps) != 0))
		r = jig_err(e, JIG_E_USAGE, "%s.capabilities: the catalog offers no session capability yet; [] or absent", w);
	if (!r && json_object_get(p, "about") && !json_is_string(json_object_get(p, "about")))
		r = jig_err(e, JIG_E_USAGE, "%s.about: a string", w);
	return r;
}

json_t *jig_session_repo_paths(json_t *repo)
{
	json_t *all = json_array();
	json_array_append(all, json_object_get(repo, "root"));
	if (json_object_get(repo, "worktrees"))
		json_array_extend(all, json_object_get(repo, "worktrees"));
	return all;
}

/* Every path (a root or a worktree) belongs to one repository. */
static int paths_unique(json_t *repos, const char *what, struct jig_error *e)
{
	json_t *seen = json_object(), *r, *v;
	const char *id;
	int rc = 0;
	json_object_foreach(repos, id, r) {
		json_t *all = jig_session_repo_paths(r);
		size_t i;
		json_array_foreach(all, i, v) {
			const char *p = json_string_value(v);
			if (!rc && json_object_get(seen, p))
				rc = jig_err(e, JIG_E_USAGE, "%s: %s is mapped twice (repositories.%s and repositories.%s)", what, p,
					     json_string_value(json_object_get(seen, p)), id);
			json_object_set_new(seen, p, json_string(id));
		}
		json_decref(all);
	}
	json_decref(seen);
	return rc;
}

static int parse_section(json_t *doc, const char *key, const char *what,
			 int (*one)(json_t *doc, const char *id, json_t *v, const char *what, struct jig_error *e),
			 struct jig_error *e)
{
	json_t *sec = json_object_get(doc, key), *v;
	const char *id;
	if (!json_is_object(sec))
		return jig_err(e, JIG_E_USAGE, "%s: needs \"%s\": {ID: {...}}", what, key);
	json_object_foreach(sec, id, v) {
		if (!valid_id(id) || !json_is_object(v))
			return jig_err(e, JIG_E_USAGE, "%s: %s.%.40s: an id of [a-z0-9_-] (at most %d) naming an object", what, key, id, MAX_ID);
		int r = one(doc, id, v, what, e);
		if (r)
			return r;
	}
	return 0;
}

static int one_client(json_t *doc, const char *id, json_t *v, const char *what, struct jig_error *e)
{
	(void)doc;
	return parse_client(id, v, what, e);
}

int jig_session_map_parse(const char *buf, size_t len, const char *what, struct jig_session_map *m, struct jig_error *e)
{
	static const char *const keys[] = {"format", "clients", "providers", "repositories", "contexts", NULL};
	memset(m, 0, sizeof(*m));
	snprintf(m->what, sizeof(m->what), "%s", what);
	const char *format;
	json_t *doc = NULL;
	int r = jig_json_usage(jig_json_parse_object(buf, len, what, &doc, e), e);
	if (!r)
		r = jig_json_usage(jig_json_only_keys(doc, keys, what, e), e);
	if (!r)
		r = jig_json_usage(jig_json_get_string(doc, "format", what, &format, e), e);
	if (!r && strcmp(format, JIG_SESSIONS_FORMAT) != 0)
		r = jig_err(e, JIG_E_USAGE, "%s: format \"%.40s\" is not " JIG_SESSIONS_FORMAT, what, format);
	if (!r)
		r = parse_section(doc, "clients", what, one_client, e);
	if (!r)
		r = parse_section(doc, "providers", what, parse_provider, e);
	if (!r && json_object_get(doc, "contexts"))
		r = parse_section(doc, "contexts", what, parse_context, e);
	if (!r)
		r = agents_apart(doc, what, e);
	if (!r)
		r = parse_section(doc, "repositories", what, parse_repo, e);
	if (!r)
		r = paths_unique(json_object_get(doc, "repositories"), what, e);
	if (r) {
		json_decref(doc);
		return r;
	}
	jig_sha256_hex(buf, len, m->sha256);
	m->doc = doc;
	return 0;
}

int jig_session_map_load(struct jig_session_map *m, struct jig_error *e)
{
	char home[PATH_MAX], cfg[PATH_MAX + 16], dir[PATH_MAX], what[PATH_MAX + 32], *buf = NULL;
	size_t len = 0;
	struct stat st;
	memset(m, 0, sizeof(*m));
	/* The operator's account, never the environment (decision 215). */
	int r = jig_session_home(home, sizeof(home), e);
	if (r)
		return r;
	snprintf(cfg, sizeof(cfg), "%s/" JIG_SESSION_MAP_DIR, home);
	if (!realpath(cfg, dir))
		return jig_err(e, JIG_E_USAGE, "the repository map: %s: %s; sessions are mapped in %s/" JIG_SESSIONS_FILE, cfg, strerror(errno), cfg);
	snprintf(what, sizeof(what), "%s/" JIG_SESSIONS_FILE, dir);
	if ((r = jig_session_trusted_dirs(dir, "the repository map", e)))
		return r;
	jig_autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return jig_err(e, JIG_E_USAGE, "the repository map: %s: %s", dir, strerror(errno));
	if ((r = jig_read_file_at(dfd, JIG_SESSIONS_FILE, JIG_SESSIONS_MAX_BYTES, what, &buf, &len, &st, e)))
		return jig_err_prefix(e, JIG_E_USAGE, "the repository map: ");
	if (jig_config_refusal(&st, JIG_CONFIG_SECRET))
		r = jig_err(e, JIG_E_USAGE, "the repository map %s must be yours, mode 0600 and one link; refused", what);
	else
		r = jig_session_map_parse(buf, len, what, m, e);
	free(buf);
	if (!r && (r = jig_session_outside_repositories(json_object_get(m->doc, "repositories"), NULL, dir, "the repository map's directory", e)))
		jig_session_map_free(m);
	if (!r)
		snprintf(m->dir, sizeof(m->dir), "%s", dir);
	return r;
}

void jig_session_map_free(struct jig_session_map *m)
{
	json_decref(m->doc);
	m->doc = NULL;
}
