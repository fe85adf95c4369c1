/* The operator's Agent providers (agents.json) and their reviewed
 * identity. See config/agent_config.h. */
#include "config/agent_config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "policy/scope_policy.h"
#include "util/cleanup.h"
#include "util/crypto.h"
#include "util/fileio.h"
#include "util/json.h"

#define CONFIG_MAX (64 * 1024)
#define CREDENTIAL_MAX (16 * 1024)
#define VALUE_MAX 1024

/* jig's client profiles (host policy): what a named client is told so that
 * its own tools, settings and extensions stay off, pinned in the Plan as
 * part of the provider identity. "acp" is a generic client: no profile.
 * Claude Code (@zed-industries/claude-code-acp, qualified with 0.16.2): its
 * built-in tools off (disableBuiltInTools and the rest disallowed by name),
 * no setting sources (no user, project or local settings, hooks or
 * plugins), no MCP configuration, the model selected over ACP, telemetry,
 * error reports and auto-update off. Codex: below. Pi (pi-acp, qualified
 * with 0.0.34 running Pi 1.6.0): pi-acp starts Pi with fixed arguments, so
 * it is told to start jig's launcher (plugins/acp/pi_launcher.c, bound at
 * /.jig/pi-launcher), which starts the operator's reviewed pi_command with
 * pi_args: every tool off (built-in, extension, custom and MCP), no
 * extensions (built-in ones included), no MCP, no Skills, no prompt
 * templates, no context files (AGENTS.md, CLAUDE.md), no project-local
 * configuration, no session file, no automatic network activity, and the
 * route's model; Pi's agent directory is made in the scope's private HOME
 * with the operator's reviewed models.json linked into it. */
struct profile {
	const char *client;
	const char *env;	  /* JSON object */
	const char *session_meta; /* JSON object: session/new's _meta, or NULL */
	const char *args;	  /* JSON array appended to the command; "@model": the route's model */
	const char *auth_method;  /* ACP authenticate method id, or NULL */
	bool select_model;	  /* session/set_model with the route's model */
	const char *history;	  /* where the client keeps session history below HOME, for
				   * retain_sessions (its qualified layout); NULL: none */
	const char *pi_args;	  /* JSON array: jig's launcher starts pi_command with these; "@model" */
};
static const struct profile profiles[] = {
	{"acp", NULL, NULL, NULL, NULL, false, NULL, NULL},
	{"claude-code",
	 "{\"DISABLE_AUTOUPDATER\": \"1\", \"DISABLE_TELEMETRY\": \"1\", \"DISABLE_ERROR_REPORTING\": \"1\","
	 " \"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\": \"1\"}",
	 "{\"disableBuiltInTools\": true, \"claudeCode\": {\"options\": {\"settingSources\": [], \"strictMcpConfig\": true,"
	 " \"disallowedTools\": [\"TaskOutput\", \"TaskStop\", \"EnterPlanMode\", \"Task\", \"Skill\", \"SlashCommand\","
	 " \"WebSearch\", \"WebFetch\", \"NotebookEdit\", \"TodoWrite\"]}}}",
	 "[]", NULL, true, NULL, NULL},
	/* Codex (@zed-industries/codex-acp, qualified with 0.16.0): its
	 * read-only sandbox, approvals on request (so every escalation is a
	 * permission request, which the worker refuses), web search off, no
	 * bundled Skills and no Skills instructions, plugins, apps and hooks
	 * off (R-A08), the model by configuration, the API key by the
	 * openai-api-key method; its rollouts (session history) below
	 * ~/.codex/sessions. */
	{"codex", "{}", NULL,
	 "[\"-c\", \"sandbox_mode=\\\"read-only\\\"\", \"-c\", \"approval_policy=\\\"on-request\\\"\", \"-c\","
	 " \"web_search=\\\"disabled\\\"\", \"-c\", \"skills.bundled.enabled=false\", \"-c\", \"skills.include_instructions=false\","
	 " \"-c\", \"features.plugins=false\", \"-c\", \"features.apps=false\", \"-c\", \"features.hooks=false\","
	 " \"-c\", \"model=\\\"@model\\\"\"]",
	 "openai-api-key", false, ".codex/sessions", NULL},
	{"pi", "{\"PI_ACP_PI_COMMAND\": \"/.jig/pi-launcher\", \"PI_OFFLINE\": \"1\", \"PI_SKIP_VERSION_CHECK\": \"1\", \"PI_TELEMETRY\": \"0\"}",
	 NULL, "[]", NULL, false, NULL,
	 "[\"--no-tools\", \"--no-extensions\", \"--no-mcp\", \"--no-skills\", \"--no-prompt-templates\", \"--no-context-files\","
	 " \"--no-approve\", \"--no-session\", \"--offline\", \"--model\", \"@model\"]"},
};
/* The variables jig's launcher reads or sets (never the operator's). */
static const char *const pi_launcher_env[] = {"JIG_PI_ARGV", "JIG_PI_MODELS", "PI_CODING_AGENT_DIR", NULL};

static const struct profile *profile_of(const char *client)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].client, client) == 0)
			return &profiles[i];
	return NULL;
}

/* The profile as the Plan shows it (NULL for a generic client). */
static json_t *profile_json(const struct profile *pr)
{
	if (!pr->env)
		return NULL;
	json_error_t je;
	json_t *p = json_pack("{s:o,s:o,s:b}", "env", json_loads(pr->env, 0, &je), "args", json_loads(pr->args, 0, &je),
			      "select_model", pr->select_model);
	if (p && pr->session_meta)
		json_object_set_new(p, "session_meta", json_loads(pr->session_meta, 0, &je));
	if (p && pr->auth_method)
		json_object_set_new(p, "auth_method", json_string(pr->auth_method));
	if (p && pr->history)
		json_object_set_new(p, "history", json_string(pr->history));
	if (p && pr->pi_args)
		json_object_set_new(p, "pi_args", json_loads(pr->pi_args, 0, &je));
	return p;
}

static bool env_name_ok(const char *n)
{
	size_t len = strlen(n);
	if (!len || len > 64 || (n[0] >= '0' && n[0] <= '9'))
		return false;
	return strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == len;
}

/* Printable ASCII, bounded: values shown in a Plan must be one inert line. */
static bool value_ok(const char *v, size_t max)
{
	size_t len = strlen(v);
	for (size_t i = 0; i < len; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return false;
	return len <= max;
}

/* A credential file: the operator's, mode 0600 or stricter, a regular
 * file and not a link, at most 16 KiB; one trailing newline is dropped. */
static int read_credential_file(const char *path, const char *w, char **out, struct jig_error *e)
{
	jig_autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: credential file %s: %s", w, path,
			       errno == ELOOP ? "is a symbolic link; refused" : strerror(errno));
	struct stat st;
	size_t len;
	int r = jig_read_fd(fd, CREDENTIAL_MAX, "credential file", out, &len, &st, e);
	if (r)
		return r;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		r = jig_err(e, JIG_E_USAGE, "%s: credential file %s must be your regular file with mode 0600; refused", w, path);
	else {
		if (len && (*out)[len - 1] == '\n')
			(*out)[--len] = '\0';
		if (!len || strlen(*out) != len)
			r = jig_err(e, JIG_E_USAGE, "%s: credential file %s is empty or not text; refused", w, path);
	}
	if (r) {
		explicit_bzero(*out, len);
		free(*out);
		*out = NULL;
	}
	return r;
}

/* An absolute path without empty, "." or ".." components or a trailing
 * slash (an operator's path may hold any printable character: "@scope"). */
static bool clean_absolute(const char *p)
{
	if (p[0] != '/' || !p[1])
		return false;
	for (const char *c = p + 1; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/' && !*++c)
			return false;
	}
	return true;
}

/* path is dir or below it, or dir is below path: binding path shows dir. */
static bool within(const char *path, const char *dir)
{
	size_t pl = strlen(path), dl = strlen(dir);
	if (pl <= dl)
		return strncmp(dir, path, pl) == 0 && (dir[pl] == '/' || dir[pl] == '\0' || pl == 1);
	return strncmp(path, dir, dl) == 0 && path[dl] == '/';
}

static int check_command(json_t *cmd, json_t *trees, const char *w, struct jig_error *e)
{
	if (!json_is_array(cmd) || !json_array_size(cmd) || json_array_size(cmd) > JIG_AGENT_MAX_ARGS)
		return jig_err(e, JIG_E_USAGE, "%s: command must be an array of 1-%d strings", w, JIG_AGENT_MAX_ARGS);
	size_t i;
	json_t *v;
	json_array_foreach(cmd, i, v)
		if (!json_is_string(v) || !value_ok(json_string_value(v), VALUE_MAX))
			return jig_err(e, JIG_E_USAGE, "%s: command[%zu] must be printable text", w, i);
	const char *exe = json_string_value(json_array_get(cmd, 0));
	if (!clean_absolute(exe))
		return jig_err(e, JIG_E_USAGE, "%s: command[0] must be a normalised absolute path", w);
	if (!json_is_array(trees) || !json_array_size(trees) || json_array_size(trees) > JIG_AGENT_MAX_TREES)
		return jig_err(e, JIG_E_USAGE, "%s: trees must list 1-%d absolute paths the client needs (bound read-only)", w,
			       JIG_AGENT_MAX_TREES);
	bool inside = false;
	char cfg[PATH_MAX];
	bool have_cfg = jig_user_dir("XDG_CONFIG_HOME", ".config", cfg, sizeof(cfg)) == 0;
	json_array_foreach(trees, i, v) {
		const char *t = json_string_value(v);
		if (!t || !clean_absolute(t) || !value_ok(t, PATH_MAX / 4))
			return jig_err(e, JIG_E_USAGE, "%s: trees[%zu] must be a normalised absolute path", w, i);
		size_t tl = strlen(t);
		inside |= strncmp(exe, t, tl) == 0 && (exe[tl] == '/' || exe[tl] == '\0');
		/* The operator's jig configuration (agents.json, http.json, key
		 * files next to them) never enters a client's scope. */
		if (have_cfg && within(t, cfg))
			return jig_err(e, JIG_E_USAGE, "%s: trees[%zu] %s holds your jig configuration %s; grant the client's own directory", w, i, t, cfg);
	}
	if (!inside)
		return jig_err(e, JIG_E_USAGE, "%s: command[0] %s is in none of its trees; the client could not start", w, exe);
	return 0;
}

static bool in_trees(const char *path, json_t *trees)
{
	size_t i;
	json_t *v;
	json_array_foreach(trees, i, v) {
		const char *t = json_string_value(v);
		size_t tl = strlen(t);
		if (strncmp(path, t, tl) == 0 && (path[tl] == '/' || path[tl] == '\0'))
			return true;
	}
	return false;
}

/* The pi client's own keys (trees already checked): pi_command, Pi's
 * executable and the script it runs, only paths in the trees (an option
 * could undo the profile's flags or load an extension or Skill by path),
 * and pi_models, Pi's models.json in the trees. Both are identity. */
static int check_pi(json_t *o, bool pi, const char *w, struct jig_error *e)
{
	json_t *cmd = json_object_get(o, "pi_command"), *models = json_object_get(o, "pi_models"), *trees = json_object_get(o, "trees");
	if (!pi)
		return cmd || models ? jig_err(e, JIG_E_USAGE, "%s: pi_command and pi_models are for client \"pi\" only", w) : 0;
	if (!json_is_array(cmd) || !json_array_size(cmd) || json_array_size(cmd) > JIG_AGENT_PI_MAX_ARGS)
		return jig_err(e, JIG_E_USAGE, "%s: client pi needs pi_command: 1-%d absolute paths (Pi's executable, the script it runs)", w,
			       JIG_AGENT_PI_MAX_ARGS);
	size_t i;
	json_t *v;
	json_array_foreach(cmd, i, v) {
		const char *a = json_string_value(v);
		if (!a || !clean_absolute(a) || !value_ok(a, PATH_MAX / 4))
			return jig_err(e, JIG_E_USAGE, "%s: pi_command[%zu] must be a normalised absolute path; jig's pi profile gives Pi its options", w, i);
		if (!in_trees(a, trees))
			return jig_err(e, JIG_E_USAGE, "%s: pi_command[%zu] %s is in none of its trees; Pi could not start", w, i, a);
	}
	const char *m = json_string_value(models);
	if (!m || !clean_absolute(m) || !value_ok(m, PATH_MAX / 4))
		return jig_err(e, JIG_E_USAGE, "%s: client pi needs pi_models: the normalised absolute path of Pi's models.json", w);
	if (!in_trees(m, trees))
		return jig_err(e, JIG_E_USAGE, "%s: pi_models %s is in none of its trees; Pi could not read it", w, m);
	return 0;
}

static int check_env(json_t *env, const char *w, struct jig_error *e)
{
	if (env && (!json_is_object(env) || json_object_size(env) > JIG_AGENT_MAX_ENV))
		return jig_err(e, JIG_E_USAGE, "%s: env must be an object of at most %d variables", w, JIG_AGENT_MAX_ENV);
	const char *k;
	json_t *v;
	json_object_foreach(env, k, v) {
		if (!env_name_ok(k) || jig_env_name_is_credential(k))
			return jig_err(e, JIG_E_USAGE,
				       "%s: env \"%.64s\": %s", w, k,
				       jig_env_name_is_credential(k) ? "looks like a credential; give it as \"credential\" (never in a Plan)"
								      : "must be of [A-Z0-9_]");
		if (!json_is_string(v) || !value_ok(json_string_value(v), VALUE_MAX))
			return jig_err(e, JIG_E_USAGE, "%s: env \"%s\": the value must be printable text of at most %d bytes", w, k, VALUE_MAX);
	}
	return 0;
}

static int opt_name(json_t *o, const char *key, const char *w, char **out, struct jig_error *e)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_string(v) || !env_name_ok(json_string_value(v)))
		return jig_err(e, JIG_E_USAGE, "%s: %s must be a variable name of [A-Z0-9_]", w, key);
	return (*out = strdup(json_string_value(v))) ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

/* {"env": NAME, "value": TEXT | "file": PATH}: only the name is identity. */
static int parse_credential(json_t *c, bool secret, const char *w, struct jig_agent_provider *p, struct jig_error *e)
{
	static const char *const keys[] = {"env", "value", "file", NULL};
	char cw[PATH_MAX + 128];
	snprintf(cw, sizeof(cw), "%s: credential", w);
	int r;
	if (!json_is_object(c) || (r = jig_json_only_keys(c, keys, cw, e)) < 0 || (r = opt_name(c, "env", cw, &p->credential_env, e)))
		return json_is_object(c) ? r : jig_err(e, JIG_E_USAGE, "%s: must be an object", cw);
	json_t *val = json_object_get(c, "value"), *file = json_object_get(c, "file");
	if (!p->credential_env || !val == !file || (val && (!json_is_string(val) || !json_string_length(val))) ||
	    (file && (!json_is_string(file) || json_string_value(file)[0] != '/')))
		return jig_err(e, JIG_E_USAGE, "%s: needs \"env\" and exactly one of \"value\" (text) or \"file\" (an absolute path)", cw);
	if (!secret)
		return 0;
	if (file)
		return read_credential_file(json_string_value(file), cw, &p->credential, e);
	if (strlen(json_string_value(val)) != json_string_length(val))
		return jig_err(e, JIG_E_USAGE, "%s: the value is not text", cw);
	return (p->credential = strdup(json_string_value(val))) ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

/* "egress": 1-JIG_POLICY_MAX_CONNECT HOST:PORT strings the policy
 * language accepts, each once; the client's proxy variables are jig's. */
static int check_egress(json_t *eg, json_t *env, const char *w, struct jig_error *e)
{
	if (!eg)
		return 0;
	if (!json_is_array(eg) || json_array_size(eg) == 0 || json_array_size(eg) > JIG_POLICY_MAX_CONNECT)
		return jig_err(e, JIG_E_USAGE, "%s: egress must be an array of 1-%d \"HOST:PORT\" strings", w, JIG_POLICY_MAX_CONNECT);
	size_t i, j;
	json_t *v;
	json_array_foreach(eg, i, v) {
		char host[JIG_POLICY_MAX_ENDPOINT + 1];
		uint16_t port;
		const char *s = json_string_value(v);
		if (!s || jig_endpoint_split(s, host, sizeof(host), &port) < 0)
			return jig_err(e, JIG_E_USAGE, "%s: egress[%zu] \"%.64s\": not HOST:PORT (a DNS name or an IP literal, port 1-65535)",
				       w, i, s ? s : "?");
		for (j = 0; j < i; j++)
			if (strcasecmp(json_string_value(json_array_get(eg, j)), s) == 0)
				return jig_err(e, JIG_E_USAGE, "%s: egress[%zu] \"%.64s\" is listed twice", w, i, s);
	}
	static const char *const proxy_env[] = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
						"all_proxy", "NO_PROXY", "no_proxy", NULL};
	for (const char *const *n = proxy_env; *n; n++)
		if (json_object_get(env, *n))
			return jig_err(e, JIG_E_USAGE, "%s: env \"%s\" is set by jig for egress (its CONNECT relay)", w, *n);
	return 0;
}

static int parse_provider(json_t *o, const char *id, bool secret, const char *what, struct jig_agent_provider *p,
			  struct jig_error *e)
{
	static const char *const keys[] = {"client", "command", "trees", "env", "version", "model_env", "credential", "pi_command", "pi_models",
					   "egress", NULL};
	char w[PATH_MAX + 100];
	snprintf(w, sizeof(w), "%s: provider \"%s\"", what, id);
	const char *client, *version;
	int r;
	if (!json_is_object(o))
		return jig_err(e, JIG_E_USAGE, "%s: must be an object", w);
	if ((r = jig_json_only_keys(o, keys, w, e)) || (r = jig_json_get_string(o, "client", w, &client, e)) ||
	    (r = jig_json_get_string(o, "version", w, &version, e)))
		return r;
	const struct profile *pr = profile_of(client);
	if (!pr)
		return jig_err(e, JIG_E_USAGE,
			       "%s: client \"%.32s\": jig has no qualified profile for it (claude-code, codex, pi, or acp for any ACP client as configured; docs/agents.md)",
			       w, client);
	if (!version[0] || !value_ok(version, JIG_AGENT_VERSION_MAX))
		return jig_err(e, JIG_E_USAGE, "%s: version must be 1-%d printable characters (the version the client reports)", w,
			       JIG_AGENT_VERSION_MAX);
	json_t *cmd = json_object_get(o, "command"), *trees = json_object_get(o, "trees"), *env = json_object_get(o, "env");
	bool pi = pr->pi_args != NULL;
	if ((r = check_command(cmd, trees, w, e)) || (r = check_pi(o, pi, w, e)) || (r = check_env(env, w, e)) ||
	    (r = opt_name(o, "model_env", w, &p->model_env, e)) || (r = check_egress(json_object_get(o, "egress"), env, w, e)))
		return r;
	if (json_object_get(o, "egress") && !(p->egress = json_deep_copy(json_object_get(o, "egress"))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	json_t *cred = json_object_get(o, "credential");
	if (cred && (r = parse_credential(cred, secret, w, p, e)))
		return r;
	const char *cfile = json_string_value(json_object_get(cred, "file"));
	size_t i;
	json_t *tv;
	json_array_foreach(trees, i, tv)
		if (cfile && within(json_string_value(tv), cfile))
			return jig_err(e, JIG_E_USAGE, "%s: trees[%zu] holds the credential file; it never enters the client's scope", w, i);
	if (p->model_env && p->credential_env && strcmp(p->model_env, p->credential_env) == 0)
		return jig_err(e, JIG_E_USAGE, "%s: model_env and the credential's env are the same variable", w);
	if ((p->model_env && json_object_get(env, p->model_env)) || (p->credential_env && json_object_get(env, p->credential_env)))
		return jig_err(e, JIG_E_USAGE, "%s: env sets a variable jig sets (model_env or the credential's)", w);
	json_t *prof_env = pr->env ? json_loads(pr->env, 0, NULL) : json_object();
	const char *k;
	json_t *v;
	json_object_foreach(env, k, v)
		if (json_object_get(prof_env, k)) {
			json_decref(prof_env);
			return jig_err(e, JIG_E_USAGE, "%s: env \"%s\" is set by the %s profile", w, k, client);
		}
	json_decref(prof_env);
	for (const char *const *n = pi_launcher_env; pi && *n; n++)
		if (json_object_get(env, *n) || (p->model_env && strcmp(p->model_env, *n) == 0) ||
		    (p->credential_env && strcmp(p->credential_env, *n) == 0))
			return jig_err(e, JIG_E_USAGE, "%s: %s is set by jig's pi launcher", w, *n);
	if (pi && (!(p->pi_command = json_deep_copy(json_object_get(o, "pi_command"))) ||
		   !(p->pi_models = strdup(json_string_value(json_object_get(o, "pi_models"))))))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	p->profile = profile_json(pr);
	if (pr->env && !p->profile) /* never a client without its profile */
		return jig_err(e, JIG_E_INTERNAL, "%s: jig's %s profile cannot be built", w, client);
	p->command = json_deep_copy(cmd);
	p->trees = json_deep_copy(trees);
	p->env = env ? json_deep_copy(env) : json_object();
	p->id = strdup(id);
	p->client = strdup(client);
	p->version = strdup(version);
	return p->command && p->trees && p->env && p->id && p->client && p->version ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

int jig_agent_provider_get(const char *id, bool secret, struct jig_agent_provider *p, struct jig_error *e)
{
	memset(p, 0, sizeof(*p));
	char what[PATH_MAX + 16];
	jig_autofree char *buf = NULL;
	size_t len = 0;
	int r = jig_config_read("agents.json", CONFIG_MAX, JIG_CONFIG_SECRET, what, sizeof(what), &buf, &len, e);
	if (r == JIG_CONFIG_ABSENT)
		return jig_err(e, JIG_E_USAGE, "agent provider \"%s\": no operator configuration %s; agent providers are configured there", id, what);
	if (r)
		return r;
	json_t *doc = NULL, *providers;
	const char *format;
	static const char *const keys[] = {"format", "providers", NULL};
	if (!(r = jig_json_parse_secret_object(buf, len, what, &doc, e)) && !(r = jig_json_only_keys_edited(doc, keys, what, e)) &&
	    !(r = jig_json_get_string(doc, "format", what, &format, e))) {
		providers = json_object_get(doc, "providers");
		if (strcmp(format, JIG_AGENTS_CONFIG_FORMAT) != 0)
			r = jig_err(e, JIG_E_USAGE, "%s: format \"%.40s\" is not " JIG_AGENTS_CONFIG_FORMAT, what, format);
		else if (!json_is_object(providers))
			r = jig_err(e, JIG_E_USAGE, "%s: needs \"providers\": {ID: {...}}", what);
		else if (!json_object_get(providers, id))
			r = jig_err(e, JIG_E_USAGE, "agent provider \"%s\" is not configured in %s; refused", id, what);
		else
			r = parse_provider(json_object_get(providers, id), id, secret, what, p, e);
	}
	explicit_bzero(buf, len);
	json_decref(doc); /* jansson's copy of an inline credential is freed, not wiped */
	if (r)
		jig_agent_provider_free(p);
	return jig_json_usage(r, e); /* the operator's input */
}

void jig_agent_provider_free(struct jig_agent_provider *p)
{
	if (p->credential) {
		explicit_bzero(p->credential, strlen(p->credential));
		free(p->credential);
	}
	free(p->id);
	free(p->client);
	free(p->version);
	free(p->model_env);
	free(p->credential_env);
	free(p->pi_models);
	json_decref(p->pi_command);
	json_decref(p->command);
	json_decref(p->trees);
	json_decref(p->env);
	json_decref(p->profile);
	json_decref(p->egress);
	memset(p, 0, sizeof(*p));
}

/* The digest of every absolute path of the command that is a regular file
 * (the executable, and a script it is given): the exact client bytes.
 * With all, every element must be a regular file. */
static int command_files(json_t *cmd, bool all, json_t *out, struct jig_error *e)
{
	size_t i;
	json_t *v;
	json_array_foreach(cmd, i, v) {
		const char *path = json_string_value(v);
		if (path[0] != '/')
			continue;
		jig_autoclose int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (i > 0 && !all && errno == ENOENT)
				continue; /* an argument that is not a file */
			return jig_err(e, JIG_E_USAGE, "agent client %s: %s", path, strerror(errno));
		}
		if (!S_ISREG(st.st_mode)) {
			if (i == 0 || all)
				return jig_err(e, JIG_E_USAGE, "agent client %s: not a regular file", path);
			continue;
		}
		unsigned char d[JIG_SHA256_LEN];
		char hex[JIG_SHA256_HEX];
		if (jig_sha256_fd(fd, NULL, d) < 0)
			return jig_err(e, JIG_E_USAGE, "agent client %s: cannot be read", path);
		jig_hex(d, JIG_SHA256_LEN, hex);
		json_array_append_new(out, json_pack("{s:s,s:s}", "path", path, "sha256", hex));
	}
	return 0;
}

int jig_agent_identity(const struct jig_agent_provider *p, const char *model, json_t **out, struct jig_error *e)
{
	json_t *files = json_array();
	int r = files ? command_files(p->command, false, files, e) : jig_err(e, JIG_E_INTERNAL, "out of memory");
	json_t *models = p->pi_models ? json_pack("[s]", p->pi_models) : NULL;
	if (!r && p->pi_command)
		r = command_files(p->pi_command, true, files, e);
	if (!r && models)
		r = command_files(models, true, files, e);
	json_decref(models);
	if (r) {
		json_decref(files);
		return r;
	}
	*out = json_pack("{s:s,s:s,s:O,s:o,s:O,s:O,s:s,s:s,s:s?,s:s?,s:O?,s:O?,s:s?,s:O*}", "provider", p->id, "client", p->client,
			 "command", p->command, "files", files, "trees", p->trees, "env", p->env, "version", p->version, "model",
			 model, "model_env", p->model_env, "credential_env", p->credential_env, "profile", p->profile,
			 "pi_command", p->pi_command, "pi_models", p->pi_models, "egress", p->egress);
	return *out ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

const char *jig_agent_identity_diff(json_t *reviewed, json_t *now, char *buf, size_t cap)
{
	if (json_equal(reviewed, now))
		return NULL;
	static const char *const keys[] = {"provider", "client", "model", "version", "command", "files", "trees", "env",
					   "model_env", "credential_env", "profile", "pi_command", "pi_models", "egress", NULL};
	for (const char *const *k = keys; *k; k++) {
		json_t *a = json_object_get(reviewed, *k), *b = json_object_get(now, *k);
		if ((a || b) && !json_equal(a, b)) {
			if (strcmp(*k, "files") == 0)
				snprintf(buf, cap, "the client's files (executable digest) differ from the reviewed ones");
			else if (strcmp(*k, "version") == 0 || strcmp(*k, "model") == 0)
				snprintf(buf, cap, "its %s is \"%.64s\", reviewed \"%.64s\"", *k,
					 json_string_value(json_object_get(now, *k)) ?: "",
					 json_string_value(json_object_get(reviewed, *k)) ?: "");
			else
				snprintf(buf, cap, "its %s differs from the reviewed one", *k);
			return buf;
		}
	}
	snprintf(buf, cap, "it differs from the reviewed one");
	return buf;
}

int jig_agent_env_fits(const struct jig_agent_provider *p, json_t *scope_env, struct jig_error *e)
{
	const char *k;
	json_t *v;
	json_t *sets[] = {p->env, json_object_get(p->profile, "env")};
	for (size_t i = 0; i < 2; i++)
		json_object_foreach(sets[i], k, v)
			if (json_object_get(scope_env, k))
				return jig_err(e, JIG_E_USAGE, "agent provider \"%s\": env \"%s\" is set by the provider scope", p->id, k);
	const char *named[] = {p->model_env, p->credential_env};
	for (size_t i = 0; i < 2; i++)
		if (named[i] && json_object_get(scope_env, named[i]))
			return jig_err(e, JIG_E_USAGE, "agent provider \"%s\": %s is set by the provider scope", p->id, named[i]);
	return 0;
}
