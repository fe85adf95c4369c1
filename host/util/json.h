/* Strict JSON input: size-capped, duplicate keys rejected, unknown keys
 * rejected, types exact. */
#ifndef JIG_UTIL_JSON_H
#define JIG_UTIL_JSON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

/* Parses exactly one JSON object from buf (no trailing bytes). */
int jig_json_parse_object(const char *buf, size_t len, const char *what, json_t **out,
			  struct jig_error *e);
/* The same for a file that holds secrets: a syntax error names the line
 * and column only, never the bytes there. */
int jig_json_parse_secret_object(const char *buf, size_t len, const char *what, json_t **out, struct jig_error *e);
/* Every key of obj must be in allowed (NULL-terminated). */
int jig_json_only_keys(json_t *obj, const char *const *allowed, const char *what,
		       struct jig_error *e);
/* The same for a file people edit (jig.json, flow.json, agents.json,
 * npm.json; decision 158): also "$schema", the JSON Schema an editor
 * validates it with, a string of at most JIG_SCHEMA_REF_MAX bytes
 * (limits.h) that jig never reads or follows. */
int jig_json_only_keys_edited(json_t *obj, const char *const *allowed, const char *what, struct jig_error *e);
int jig_json_get_string(json_t *obj, const char *key, const char *what, const char **out,
			struct jig_error *e);
/* A JSON integer in [min, max]; reals and strings are refused. */
int jig_json_get_uint(json_t *obj, const char *key, const char *what, uint64_t min, uint64_t max,
		      uint64_t *out, struct jig_error *e);
int jig_json_get_array(json_t *obj, const char *key, const char *what, size_t max, json_t **out,
		       struct jig_error *e);

/* The readers above (and util/fileio.h's) refuse with JIG_E_INTEGRITY,
 * right for jig's own files; where the bytes are a project's or the
 * operator's input, the refusal is usage: returns r, that code turned
 * into JIG_E_USAGE. */
int jig_json_usage(int r, struct jig_error *e);
/* Prints v as indented JSON with sorted keys for a terminal or a pipe:
 * exact (every string round-trips), and pure ASCII with DEL escaped too, so
 * no string inside can put a control byte on the operator's terminal. */
void jig_json_print(FILE *f, json_t *v);

/* Canonical bytes: sorted keys, compact, no floats expected. Caller frees. */
char *jig_json_canonical(json_t *v);

#endif
