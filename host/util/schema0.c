#include "util/schema0.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const type_names[] = {"object", "array", "string", "integer", "number", "boolean", "null", NULL};
static const char *const keywords[] = {"type", "required", "properties", "additionalProperties", "enum", "minLength",
				      "maxLength", "minItems", "maxItems", "items", "minimum", "maximum", NULL};

static bool known(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static int bad(struct jig_error *e, const char *at, const char *why)
{
	return jig_err(e, JIG_E_USAGE, "Schema/0 at \"%s\": %s", at[0] ? at : "/", why);
}

static bool nonneg_int(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int check(json_t *s, const char *at, int depth, struct jig_error *e)
{
	if (depth > JIG_SCHEMA0_MAX_DEPTH)
		return bad(e, at, "nested deeper than 16 levels");
	if (!json_is_object(s))
		return bad(e, at, "a schema is a JSON object");
	const char *k;
	json_t *v;
	json_object_foreach(s, k, v) {
		char sub[512];
		if (!known(keywords, k)) {
			snprintf(sub, sizeof(sub), "unknown keyword \"%s\" (Schema/0 is a small subset; see docs/schema0.md)", k);
			return bad(e, at, sub);
		}
		if (strcmp(k, "type") == 0) {
			bool ok = json_is_string(v) && known(type_names, json_string_value(v));
			if (json_is_array(v) && json_array_size(v) > 0) {
				ok = true;
				for (size_t i = 0; i < json_array_size(v); i++)
					ok &= json_is_string(json_array_get(v, i)) && known(type_names, json_string_value(json_array_get(v, i)));
			}
			if (!ok)
				return bad(e, at, "\"type\" must name object, array, string, integer, number, boolean or null (or list them)");
		} else if (strcmp(k, "required") == 0) {
			if (!json_is_array(v))
				return bad(e, at, "\"required\" must be an array of names");
			for (size_t i = 0; i < json_array_size(v); i++)
				if (!json_is_string(json_array_get(v, i)))
					return bad(e, at, "\"required\" must be an array of names");
		} else if (strcmp(k, "properties") == 0) {
			if (!json_is_object(v))
				return bad(e, at, "\"properties\" must be an object of schemas");
			const char *pk;
			json_t *pv;
			json_object_foreach(v, pk, pv) {
				snprintf(sub, sizeof(sub), "%s/properties/%s", at, pk);
				int r = check(pv, sub, depth + 1, e);
				if (r)
					return r;
			}
		} else if (strcmp(k, "additionalProperties") == 0) {
			if (!json_is_boolean(v))
				return bad(e, at, "\"additionalProperties\" must be true or false");
		} else if (strcmp(k, "enum") == 0) {
			if (!json_is_array(v) || json_array_size(v) == 0)
				return bad(e, at, "\"enum\" must be a non-empty array");
			for (size_t i = 0; i < json_array_size(v); i++) {
				json_t *x = json_array_get(v, i);
				if (json_is_object(x) || json_is_array(x))
					return bad(e, at, "\"enum\" lists scalars only");
			}
		} else if (strcmp(k, "items") == 0) {
			snprintf(sub, sizeof(sub), "%s/items", at);
			int r = check(v, sub, depth + 1, e);
			if (r)
				return r;
		} else if (strcmp(k, "minimum") == 0 || strcmp(k, "maximum") == 0) {
			if (!json_is_integer(v))
				return bad(e, at, "\"minimum\" and \"maximum\" must be integers");
		} else if (!nonneg_int(v)) {
			snprintf(sub, sizeof(sub), "\"%s\" must be a non-negative integer", k);
			return bad(e, at, sub);
		}
	}
	return 0;
}

int jig_schema0_check(json_t *schema, struct jig_error *e)
{
	return check(schema, "", 0, e);
}

static bool is_type(json_t *v, const char *t)
{
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "array") == 0)
		return json_is_array(v);
	if (strcmp(t, "string") == 0)
		return json_is_string(v);
	if (strcmp(t, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	return json_is_null(v);
}

/* Characters, not bytes: UTF-8 continuation bytes are not counted. */
static size_t utf8_length(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* A number against an integer bound, exactly: -1, 0 or 1 as v is below,
 * at or above b. An integer is jansson's int64, exact. A number with a
 * fraction or an exponent is the double its text reads as (the nearest,
 * as JSON.parse reads it), compared with b without rounding either:
 * its whole part (exact below 2^63) and the sign of what is left. What the
 * text said beyond the double is not seen: a text within half an ulp of a
 * bound reads as the bound (docs/schema0.md, decision 299). */
static int cmp_bound(json_t *v, json_int_t b)
{
	if (json_is_integer(v))
		return json_integer_value(v) < b ? -1 : json_integer_value(v) > b;
	double d = json_real_value(v);
	if (d >= 9223372036854775808.0) /* 2^63: above every bound */
		return 1;
	if (d < -9223372036854775808.0)
		return -1;
	json_int_t t = (json_int_t)d; /* toward zero: exact, its whole part */
	if (t != b)
		return t < b ? -1 : 1;
	double whole = (double)t; /* exact: d's whole part is a double */
	return d > whole ? 1 : d < whole ? -1 : 0;
}

static int fail(struct jig_error *e, const char *at, const char *why)
{
	return jig_err(e, JIG_E_USAGE, "the body does not match its Schema/0 at \"%s\": %s", at[0] ? at : "/", why);
}

static int validate(json_t *s, json_t *v, const char *at, struct jig_error *e)
{
	json_t *t = json_object_get(s, "type");
	if (t) {
		bool ok = false;
		if (json_is_string(t))
			ok = is_type(v, json_string_value(t));
		for (size_t i = 0; json_is_array(t) && i < json_array_size(t); i++)
			ok |= is_type(v, json_string_value(json_array_get(t, i)));
		if (!ok)
			return fail(e, at, "wrong type");
	}
	json_t *en = json_object_get(s, "enum");
	if (en) {
		bool ok = false;
		for (size_t i = 0; i < json_array_size(en); i++)
			ok |= json_equal(json_array_get(en, i), v);
		if (!ok)
			return fail(e, at, "not one of the enumerated values");
	}
	if (json_is_string(v)) {
		size_t n = utf8_length(json_string_value(v), json_string_length(v));
		json_t *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
		if ((mn && n < (size_t)json_integer_value(mn)) || (mx && n > (size_t)json_integer_value(mx)))
			return fail(e, at, "string length out of range");
	}
	if (json_is_number(v)) {
		json_t *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
		if ((mn && cmp_bound(v, json_integer_value(mn)) < 0) || (mx && cmp_bound(v, json_integer_value(mx)) > 0))
			return fail(e, at, json_is_integer(v) ? "integer out of range" : "number out of range");
	}
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		json_t *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
		if ((mn && n < (size_t)json_integer_value(mn)) || (mx && n > (size_t)json_integer_value(mx)))
			return fail(e, at, "number of items out of range");
		json_t *items = json_object_get(s, "items");
		for (size_t i = 0; items && i < n; i++) {
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%zu", at, i);
			int r = validate(items, json_array_get(v, i), sub, e);
			if (r)
				return r;
		}
	}
	if (json_is_object(v)) {
		json_t *req = json_object_get(s, "required"), *props = json_object_get(s, "properties");
		for (size_t i = 0; req && i < json_array_size(req); i++) {
			const char *name = json_string_value(json_array_get(req, i));
			if (!json_object_get(v, name)) {
				char why[300];
				snprintf(why, sizeof(why), "missing required \"%s\"", name);
				return fail(e, at, why);
			}
		}
		bool closed = json_is_false(json_object_get(s, "additionalProperties"));
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			json_t *ps = props ? json_object_get(props, k) : NULL;
			char sub[512];
			snprintf(sub, sizeof(sub), "%s/%s", at, k);
			if (!ps && closed)
				return fail(e, sub, "property not allowed (additionalProperties is false)");
			if (ps) {
				int r = validate(ps, x, sub, e);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

int jig_schema0_validate(json_t *schema, json_t *value, struct jig_error *e)
{
	return validate(schema, value, "", e);
}
