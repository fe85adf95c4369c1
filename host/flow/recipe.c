/* Markdown recipes at review: the front matter and the grants. */
#include "flow/recipe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "flow/project.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

bool jig_recipe_is(const char *entry)
{
	size_t n = strlen(entry), k = strlen(JIG_RECIPE_SUFFIX);
	return n > k && strcmp(entry + n - k, JIG_RECIPE_SUFFIX) == 0;
}

/* The YAML mapping between the fences: scalar values and sequences of
 * scalars only (no nesting, alias, anchor or tag), each key once. */
enum { BEFORE, KEY, VALUE, SEQ, AFTER };

static int yaml_event(yaml_event_t *ev, int *state, json_t *doc, json_t **seq, char **key, const char *what,
		      struct jig_error *e)
{
	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		return *state == BEFORE ? 0 : jig_err(e, JIG_E_USAGE, "%s: the front matter must be one YAML document", what);
	case YAML_DOCUMENT_END_EVENT:
		return 0;
	case YAML_MAPPING_START_EVENT:
		if (*state != BEFORE || ev->data.mapping_start.anchor || ev->data.mapping_start.tag)
			break;
		*state = KEY;
		return 0;
	case YAML_MAPPING_END_EVENT:
		*state = AFTER;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
		if (*state != VALUE || ev->data.sequence_start.anchor || ev->data.sequence_start.tag)
			break;
		*seq = json_array();
		*state = SEQ;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
		json_object_set_new(doc, *key, *seq);
		*seq = NULL;
		*state = KEY;
		return 0;
	case YAML_SCALAR_EVENT: {
		const char *v = (const char *)ev->data.scalar.value;
		if (ev->data.scalar.anchor || ev->data.scalar.tag || strlen(v) != ev->data.scalar.length)
			break;
		if (*state == KEY) {
			if (json_object_get(doc, v))
				return jig_err(e, JIG_E_USAGE, "%s: front matter key \"%.64s\" is given twice", what, v);
			free(*key);
			if (!(*key = strdup(v)))
				return jig_err(e, JIG_E_INTERNAL, "out of memory");
			*state = VALUE;
		} else if (*state == VALUE) {
			json_object_set_new(doc, *key, json_string(v));
			*state = KEY;
		} else if (*state == SEQ && json_array_size(*seq) < JIG_MAX_DECLARED)
			json_array_append_new(*seq, json_string(v));
		else
			break;
		return 0;
	}
	default:
		break;
	}
	return jig_err(e, JIG_E_USAGE,
		       "%s: the front matter must be a YAML mapping of texts and lists of texts (at most %d), without nesting, anchors, aliases or tags",
		       what, JIG_MAX_DECLARED);
}

static int parse_yaml(const char *text, size_t len, const char *what, json_t *doc, struct jig_error *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	if (!yaml_parser_initialize(&p))
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	int state = BEFORE, r = 0;
	json_t *seq = NULL;
	char *key = NULL;
	for (bool end = false; !r && !end;) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = jig_err(e, JIG_E_USAGE, "%s: the front matter is not YAML: %s (line %zu)", what,
				    p.problem ? p.problem : "unreadable", (size_t)p.problem_mark.line + 2);
			break;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		r = yaml_event(&ev, &state, doc, &seq, &key, what, e);
		yaml_event_delete(&ev);
	}
	if (!r && state != AFTER)
		r = jig_err(e, JIG_E_USAGE, "%s: the front matter must be a YAML mapping (name, outputs, agent, ...)", what);
	json_decref(seq);
	free(key);
	yaml_parser_delete(&p);
	return r;
}

int jig_recipe_front_matter(const char *text, size_t len, const char *what, json_t **out, size_t *body_at,
			    struct jig_error *e)
{
	*out = NULL;
	if (memchr(text, 0, len))
		return jig_err(e, JIG_E_USAGE, "%s: a recipe is text; it holds a NUL byte", what);
	json_t *utf8 = json_stringn(text, len); /* jansson's UTF-8 check: the interpreter reads it so */
	if (!utf8)
		return jig_err(e, JIG_E_USAGE, "%s: a recipe is UTF-8 text; it is not", what);
	json_decref(utf8);
	if (len < 4 || memcmp(text, "---\n", 4) != 0)
		return jig_err(e, JIG_E_USAGE, "%s: a recipe starts with its front matter, a line \"---\"", what);
	const char *end = NULL;
	for (const char *s = text + 3; s && s < text + len; s = memchr(s + 1, '\n', (size_t)(text + len - s - 1)))
		if ((size_t)(text + len - s) >= 4 && memcmp(s, "\n---", 4) == 0 && (s + 4 == text + len || s[4] == '\n')) {
			end = s;
			break;
		}
	if (!end || end - text > JIG_RECIPE_FRONT_MAX)
		return jig_err(e, JIG_E_USAGE, "%s: the front matter must end with a line \"---\" within %d bytes", what,
			       JIG_RECIPE_FRONT_MAX);
	json_t *doc = json_object();
	int r = doc ? parse_yaml(text + 4, (size_t)(end + 1 - text - 4), what, doc, e) : jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (r) {
		json_decref(doc);
		return r;
	}
	*out = doc;
	*body_at = (size_t)(end - text) + 4 + (end + 4 < text + len);
	return 0;
}

/* The set of strings list equals v[0..n). */
static bool same_set(json_t *list, char **v, size_t n)
{
	if (json_array_size(list) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		size_t k;
		json_t *x;
		json_array_foreach(list, k, x)
			found |= json_is_string(x) && strcmp(json_string_value(x), v[i]) == 0;
		if (!found)
			return false;
	}
	return true;
}

static bool all_strings(json_t *list)
{
	size_t k;
	json_t *x;
	if (!json_is_array(list))
		return false;
	json_array_foreach(list, k, x)
		if (!json_is_string(x))
			return false;
	return true;
}

/* The recipe's grants: the reserved route, nothing else the interpreter
 * could not use. */
static int check_grants(const struct jig_flow *f, const char *what, struct jig_error *e)
{
	const struct jig_agent_grant *g = jig_flow_agent_grant(f, JIG_RECIPE_ROUTE);
	if (!g)
		return jig_err(e, JIG_E_USAGE,
			       "%s: recipe %s needs the reserved Agent route \"%s\" in \"agents\" (an operator's provider or an API route), the only route its interpreter calls; not admitted",
			       what, f->entry, JIG_RECIPE_ROUTE);
	if (f->n_agents != 1 || f->n_commands || f->n_http > (g->http ? 1u : 0u))
		return jig_err(e, JIG_E_USAGE,
			       "%s: a Markdown Flow may grant only the route \"%s\" (and the http route it sends through); its interpreter uses nothing else",
			       what, JIG_RECIPE_ROUTE);
	if (g->retain_sessions)
		return jig_err(e, JIG_E_USAGE, "%s: agent route \"%s\": retain_sessions is not for the Markdown interpreter", what,
			       JIG_RECIPE_ROUTE);
	return 0;
}

/* One listed resource: a regular file of the package (capture refuses
 * links and other files), not the recipe itself. */
static int check_resource(int pkgfd, const struct jig_flow *f, const char *res, const char *what, struct jig_error *e)
{
	if (!jig_path_is_normal_relative(res) || strcmp(res, f->entry) == 0)
		return jig_err(e, JIG_E_USAGE, "%s: resource \"%.200s\" must be a normalised relative path of the package other than the recipe",
			       what, res);
	jig_autoclose int fd = jig_open_beneath(pkgfd, res, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return jig_err(e, JIG_E_USAGE, "%s: resource %s is not a regular file of the package", what, res);
	return 0;
}

static int check_front(int pkgfd, struct jig_flow *f, json_t *fm, const char *what, struct jig_error *e)
{
	static const char *const keys[] = {"name", "inputs", "outputs", "agent", "allowed-tools", "resources", NULL};
	int r = jig_json_usage(jig_json_only_keys(fm, keys, what, e), e);
	if (r)
		return r;
	const char *name = json_string_value(json_object_get(fm, "name")), *agent = json_string_value(json_object_get(fm, "agent"));
	json_t *in = json_object_get(fm, "inputs"), *out = json_object_get(fm, "outputs"), *res = json_object_get(fm, "resources");
	json_t *tools = json_object_get(fm, "allowed-tools");
	if (!name || strcmp(name, f->name) != 0)
		return jig_err(e, JIG_E_USAGE, "%s: the recipe's name must be the Flow's, \"%s\"", what, f->name);
	if (!agent)
		return jig_err(e, JIG_E_USAGE, "%s: the recipe must name its Agent route: \"agent: %s\"", what, JIG_RECIPE_ROUTE);
	if (strcmp(agent, JIG_RECIPE_ROUTE) != 0)
		return jig_err(e, JIG_E_USAGE, "%s: the recipe names Agent route \"%.64s\"; the bundled interpreter calls only the reserved route \"%s\"",
			       what, agent, JIG_RECIPE_ROUTE);
	if ((in && (!all_strings(in) || !same_set(in, f->inputs, f->n_inputs))) || (!in && f->n_inputs))
		return jig_err(e, JIG_E_USAGE, "%s: the recipe's inputs must be flow.json's inputs", what);
	if (!all_strings(out) || !same_set(out, f->outputs, f->n_outputs) || !f->n_outputs)
		return jig_err(e, JIG_E_USAGE, "%s: the recipe's outputs must be flow.json's outputs (at least one)", what);
	if (tools && (!json_is_string(tools) || json_string_length(tools) > JIG_RECIPE_TOOLS_MAX))
		return jig_err(e, JIG_E_USAGE, "%s: allowed-tools must be one text of at most %d bytes", what, JIG_RECIPE_TOOLS_MAX);
	if (res && (!all_strings(res) || json_array_size(res) > JIG_RECIPE_MAX_RESOURCES))
		return jig_err(e, JIG_E_USAGE, "%s: resources must be a list of at most %d package paths", what, JIG_RECIPE_MAX_RESOURCES);
	size_t k;
	json_t *x;
	json_array_foreach(res, k, x)
		if ((r = check_resource(pkgfd, f, json_string_value(x), what, e)))
			return r;
	f->recipe = json_pack("{s:s,s:s,s:o,s:O*}", "interpreter", JIG_RUNTIME_MARKDOWN, "agent_route", JIG_RECIPE_ROUTE, "resources",
			      res ? json_incref(res) : json_array(), "allowed_tools", tools);
	return f->recipe ? 0 : jig_err(e, JIG_E_INTERNAL, "out of memory");
}

int jig_recipe_check(int pkgfd, struct jig_flow *f, const char *what, struct jig_error *e)
{
	if (!jig_recipe_is(f->entry))
		return jig_flow_agent_grant(f, JIG_RECIPE_ROUTE)
			       ? jig_err(e, JIG_E_USAGE, "%s: Agent route \"%s\" is reserved for the bundled Markdown interpreter (an entry ending in %s)",
					 what, JIG_RECIPE_ROUTE, JIG_RECIPE_SUFFIX)
			       : 0;
	char w[300];
	snprintf(w, sizeof(w), "%s/%s", f->dir, f->entry);
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	int r = check_grants(f, what, e);
	if (r)
		return r;
	if ((r = jig_read_file_at(pkgfd, f->entry, JIG_RECIPE_MAX_BYTES, w, &buf, &len, &st, e)))
		return jig_json_usage(r, e);
	json_t *fm = NULL;
	size_t body;
	if ((r = jig_recipe_front_matter(buf, len, w, &fm, &body, e)))
		return r;
	r = check_front(pkgfd, f, fm, w, e);
	json_decref(fm);
	return r;
}
