#include "json.h"
#include "limits.h"

#include <stdlib.h>
#include <string.h>

int jig_json_parse_object(const char *buf, size_t len, const char *what, json_t **out,
			  struct jig_error *e)
{
	json_error_t je;
	json_t *v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return jig_err(e, JIG_E_INTEGRITY, "%s: not valid JSON (line %d: %s)", what, je.line,
			       je.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return jig_err(e, JIG_E_INTEGRITY, "%s: expected a JSON object", what);
	}
	*out = v;
	return 0;
}

int jig_json_parse_secret_object(const char *buf, size_t len, const char *what, json_t **out, struct jig_error *e)
{
	json_error_t je;
	json_t *v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!v) /* jansson's text quotes the bytes near the fault: never shown here */
		return jig_err(e, JIG_E_INTEGRITY, "%s: not valid JSON (line %d, column %d)", what, je.line, je.column);
	if (!json_is_object(v)) {
		json_decref(v);
		return jig_err(e, JIG_E_INTEGRITY, "%s: expected a JSON object", what);
	}
	*out = v;
	return 0;
}

/* A key of obj that is neither allowed nor also (when not NULL) refuses. */
static int only_keys(json_t *obj, const char *const *allowed, const char *also, const char *what, struct jig_error *e)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		(void)val;
		const char *const *a = allowed;
		while (*a && strcmp(*a, key) != 0)
			a++;
		if (!*a && !(also && strcmp(key, also) == 0))
			return jig_err(e, JIG_E_INTEGRITY, "%s: unknown key \"%s\"", what, key);
	}
	return 0;
}

int jig_json_only_keys(json_t *obj, const char *const *allowed, const char *what,
		       struct jig_error *e)
{
	return only_keys(obj, allowed, NULL, what, e);
}

int jig_json_only_keys_edited(json_t *obj, const char *const *allowed, const char *what, struct jig_error *e)
{
	json_t *ref = json_object_get(obj, "$schema");
	if (ref && (!json_is_string(ref) || json_string_length(ref) > JIG_SCHEMA_REF_MAX))
		return jig_err(e, JIG_E_INTEGRITY, "%s: \"$schema\" must be a string of at most %d bytes (for editors; jig never reads it)",
			       what, JIG_SCHEMA_REF_MAX);
	return only_keys(obj, allowed, "$schema", what, e);
}

int jig_json_get_string(json_t *obj, const char *key, const char *what, const char **out,
			struct jig_error *e)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_string(v))
		return jig_err(e, JIG_E_INTEGRITY, "%s: \"%s\" must be a string", what, key);
	/* jansson rejects embedded NULs on load, so strlen is the length. */
	*out = json_string_value(v);
	return 0;
}

int jig_json_get_uint(json_t *obj, const char *key, const char *what, uint64_t min, uint64_t max,
		      uint64_t *out, struct jig_error *e)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) < min || (uint64_t)json_integer_value(v) > max)
		return jig_err(e, JIG_E_INTEGRITY,
			       "%s: \"%s\" must be an integer from %llu to %llu", what, key,
			       (unsigned long long)min, (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int jig_json_get_array(json_t *obj, const char *key, const char *what, size_t max, json_t **out,
		       struct jig_error *e)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_array(v))
		return jig_err(e, JIG_E_INTEGRITY, "%s: \"%s\" must be an array", what, key);
	if (json_array_size(v) > max)
		return jig_err(e, JIG_E_INTEGRITY, "%s: \"%s\" has more than %zu entries", what, key,
			       max);
	*out = v;
	return 0;
}

char *jig_json_canonical(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

void jig_json_print(FILE *f, json_t *v)
{
	char *txt = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!txt)
		return;
	/* JSON_ENSURE_ASCII escapes everything but DEL; JSON syntax has no
	 * DEL outside strings, so each one is inside a string. */
	for (const char *p = txt; *p; p++) {
		if (*p == 0x7f)
			fputs("\\u007f", f);
		else
			fputc(*p, f);
	}
	fputc('\n', f);
	free(txt);
}

int jig_json_usage(int r, struct jig_error *e)
{
	if (r < 0 && e && e->code == JIG_E_INTEGRITY) {
		e->code = JIG_E_USAGE;
		return -JIG_E_USAGE;
	}
	return r;
}
