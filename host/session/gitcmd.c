/* The session's `git` command policy: see gitcmd.h. */
#include "session/gitcmd.h"

#include <ctype.h>
#include <string.h>

#include "util/json.h"

int jig_git_policy_parse(const char *buf, size_t len, struct jig_git_policy *p, struct jig_error *e)
{
	static const char *const keys[] = {"format", "about", "network", "refused", "subcommands", NULL};
	json_t *root = NULL;
	struct jig_error inner = {0};
	p->doc = NULL;
	if (jig_json_parse_object(buf, len, "git command policy", &root, &inner) < 0 ||
	    jig_json_only_keys(root, keys, "git command policy", &inner) < 0) {
		json_decref(root);
		return jig_err(e, JIG_E_INTEGRITY, "%s", inner.msg);
	}
	const char *fmt = json_string_value(json_object_get(root, "format")), *k;
	json_t *subs = json_object_get(root, "subcommands"), *net = json_object_get(root, "network"),
	       *refused = json_object_get(root, "refused"), *v, *o;
	int r = 0;
	if (!fmt || strcmp(fmt, JIG_GIT_POLICY_FORMAT) != 0)
		r = jig_err(e, JIG_E_INTEGRITY, "git command policy: format is not %s", JIG_GIT_POLICY_FORMAT);
	else if (!json_is_object(subs) || !json_is_array(net) || !json_is_object(refused))
		r = jig_err(e, JIG_E_INTEGRITY, "git command policy: needs \"subcommands\" and \"refused\" objects and a \"network\" array");
	json_object_foreach(r ? NULL : refused, k, v)
		if (!r && (!json_is_string(v) || strncmp(k, "--", 2) != 0))
			r = jig_err(e, JIG_E_INTEGRITY, "git command policy: refused.%s: a long option and its reason", k);
	size_t i;
	json_array_foreach(r ? NULL : net, i, v)
		if (!r && (!json_is_string(v) || !json_object_get(subs, json_string_value(v))))
			r = jig_err(e, JIG_E_INTEGRITY, "git command policy: network[%zu]: a subcommand of \"subcommands\"", i);
	json_object_foreach(r ? NULL : subs, k, v) {
		static const char *const skeys[] = {"operands", "options", NULL};
		if (!r && (!json_is_object(v) || jig_json_only_keys(v, skeys, k, &inner) < 0 ||
			   !json_is_boolean(json_object_get(v, "operands")) || !json_is_array(json_object_get(v, "options"))))
			r = jig_err(e, JIG_E_INTEGRITY, "git command policy: subcommands.%s: {\"operands\": bool, \"options\": [...]}", k);
		json_array_foreach(r ? NULL : json_object_get(v, "options"), i, o)
			if (!r && (!json_is_string(o) || json_string_value(o)[0] != '-'))
				r = jig_err(e, JIG_E_INTEGRITY, "git command policy: subcommands.%s.options[%zu]: an option", k, i);
	}
	if (r)
		json_decref(root);
	else
		p->doc = root;
	return r;
}

void jig_git_policy_free(struct jig_git_policy *p)
{
	json_decref(p->doc);
	p->doc = NULL;
}

enum takes { FLAG, VALUE, OPTIONAL };

/* The spec of option name (without any "=V") in opts, or -1: none. */
static int spec_of(const json_t *opts, const char *name, size_t n, enum takes *t)
{
	size_t i;
	json_t *o;
	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);
		if (strncmp(s, name, n) != 0)
			continue;
		const char *rest = s + n;
		if (strcmp(rest, "") == 0)
			*t = FLAG;
		else if (strcmp(rest, "=") == 0)
			*t = VALUE;
		else if (strcmp(rest, "=?") == 0 || strcmp(rest, "?") == 0)
			*t = OPTIONAL;
		else
			continue;
		return 0;
	}
	return -1;
}

static bool has_spec(const json_t *opts, const char *s)
{
	size_t i;
	json_t *o;
	json_array_foreach(opts, i, o) if (strcmp(json_string_value(o), s) == 0) return true;
	return false;
}

/* A transport helper named in an argument: <transport>::<address>. */
static bool helper_transport(const char *a, bool network)
{
	if (strncmp(a, "ext::", 5) == 0 || strncmp(a, "fd::", 4) == 0)
		return true;
	const char *c = strstr(a, "::");
	if (!network || !c || c == a)
		return false;
	for (const char *p = a; p < c; p++)
		if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' && *p != '.')
			return false;
	return true;
}

/* An absolute path or a ".." component: a path Git would read outside the
 * worktree (`git diff A B` with a path outside compares files, as if
 * --no-index). */
static bool outside_path(const char *a)
{
	if (a[0] == '/')
		return true;
	for (const char *c = a; (c = strstr(c, "..")) != NULL; c += 2)
		if ((c == a || c[-1] == '/') && (c[2] == '/' || c[2] == '\0'))
			return true;
	return false;
}

static int refuse_opt(const json_t *refused, const char *sub, const char *a, size_t n, struct jig_error *e)
{
	char name[64];
	snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), a);
	const char *why = json_string_value(json_object_get(refused, name));
	if (why)
		return jig_err(e, JIG_E_USAGE, "git %s %s: refused in a session (%s)", sub, name, why);
	return jig_err(e, JIG_E_USAGE, "git %s %.64s: an option a session's git may not use", sub, name);
}

/* One subcommand's arguments from argv[i]. */
static int check_args(const struct jig_git_policy *p, const char *sub, int argc, const char *const *argv, int i,
		      struct jig_git_checked *out, struct jig_error *e)
{
	json_t *sc = json_object_get(json_object_get(p->doc, "subcommands"), sub);
	json_t *opts = json_object_get(sc, "options"), *refused = json_object_get(p->doc, "refused");
	bool operands = json_is_true(json_object_get(sc, "operands")), dashdash = false;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (helper_transport(a, out->network))
			return jig_err(e, JIG_E_USAGE, "git %s: the transport of \"%.64s\" is refused in a session (ext:: and fd:: run programs; remotes are the map's)",
				       sub, a);
		if (dashdash || a[0] != '-' || strcmp(a, "-") == 0) {
			if (!operands)
				return jig_err(e, JIG_E_USAGE, "git %s: takes no operand in a session (\"%.64s\")", sub, a);
			if (out->network && !out->remote) {
				out->remote = a;
				continue;
			}
			if (outside_path(a))
				return jig_err(e, JIG_E_USAGE, "git %s: \"%.64s\" names a path outside the worktree; refused in a session", sub, a);
			continue;
		}
		if (strcmp(a, "--") == 0) {
			dashdash = true;
			continue;
		}
		enum takes t;
		if (a[1] == '-') {
			size_t n = strcspn(a, "=");
			if (spec_of(opts, a, n, &t) < 0 || (t == FLAG && a[n]))
				return refuse_opt(refused, sub, a, n, e);
			if (t == VALUE && !a[n] && ++i >= argc)
				return jig_err(e, JIG_E_USAGE, "git %s %.64s: needs a value", sub, a);
			continue;
		}
		if (isdigit((unsigned char)a[1]) && strspn(a + 1, "0123456789") == strlen(a + 1) && has_spec(opts, "-<number>"))
			continue;
		/* A cluster of short options: each a flag, until one takes a value. */
		for (const char *c = a + 1; *c; c++) {
			char one[3] = {'-', *c, '\0'};
			if (spec_of(opts, one, 2, &t) < 0)
				return refuse_opt(refused, sub, one, 2, e);
			if (t == FLAG)
				continue;
			if (t == VALUE && !c[1] && ++i >= argc)
				return jig_err(e, JIG_E_USAGE, "git %s %s: needs a value", sub, one);
			break;
		}
	}
	return 0;
}

int jig_git_check(const struct jig_git_policy *p, int argc, const char *const *argv, struct jig_git_checked *out,
		  struct jig_error *e)
{
	memset(out, 0, sizeof(*out));
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-C") == 0) {
			if (++i >= argc || !argv[i][0])
				return jig_err(e, JIG_E_USAGE, "git -C: needs a directory");
			if (out->cdir)
				return jig_err(e, JIG_E_USAGE, "git -C: at most once in a session");
			out->cdir = argv[i];
		} else if (strcmp(a, "--no-pager") == 0 || strcmp(a, "-P") == 0)
			continue;
		else if (strcmp(a, "--version") == 0 && i + 1 == argc) {
			out->sub = -1;
			return 0;
		} else if (strcmp(a, "-c") == 0 || strncmp(a, "--config-env", 12) == 0 || strncmp(a, "-c", 2) == 0)
			return jig_err(e, JIG_E_USAGE, "git %.*s: configuration on the command line is refused in a session (Git's configuration is jig's)",
				       (int)strcspn(a, "="), a);
		else if (strncmp(a, "--exec-path", 11) == 0)
			return jig_err(e, JIG_E_USAGE, "git --exec-path: refused in a session (the Git programs are jig's pinned ones)");
		else if (strncmp(a, "--git-dir", 9) == 0 || strncmp(a, "--work-tree", 11) == 0 || strncmp(a, "--namespace", 11) == 0 ||
			 strcmp(a, "--bare") == 0 || strncmp(a, "--super-prefix", 14) == 0)
			return jig_err(e, JIG_E_USAGE, "git %.*s: refused in a session (the repository is the session's worktree)",
				       (int)strcspn(a, "="), a);
		else
			return jig_err(e, JIG_E_USAGE, "git %.64s: a global option a session's git may not use", a);
	}
	if (i >= argc)
		return jig_err(e, JIG_E_USAGE, "git: a subcommand is needed");
	const char *sub = argv[i];
	if (!json_object_get(json_object_get(p->doc, "subcommands"), sub))
		return jig_err(e, JIG_E_USAGE, "git %.64s: not a subcommand a session may run (aliases are not honoured; `jig session --dry-run` lists the policy)",
			       sub);
	out->sub = i;
	size_t k;
	json_t *v;
	json_array_foreach(json_object_get(p->doc, "network"), k, v) out->network |= strcmp(json_string_value(v), sub) == 0;
	return check_args(p, sub, argc, argv, i + 1, out, e);
}

bool jig_git_remote_approved(const json_t *approved, const char *url)
{
	size_t i;
	json_t *v;
	json_array_foreach(approved, i, v) if (json_is_string(v) && strcmp(json_string_value(v), url) == 0) return true;
	return false;
}
