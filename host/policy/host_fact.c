/* Host facts composition read, observed and observed again. */
#include "policy/host_fact.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static json_int_t ns(struct timespec t)
{
	return (json_int_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

json_t *jig_host_fact_stat(const char *path, const struct stat *st, int err)
{
	if (!st)
		return json_pack("{s:s,s:i}", "stat", path, "errno", err);
	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "stat", path, "dev", (json_int_t)st->st_dev, "ino",
			 (json_int_t)st->st_ino, "mode", (json_int_t)st->st_mode, "uid", (json_int_t)st->st_uid, "size",
			 (json_int_t)st->st_size, "mtime_ns", ns(st->st_mtim), "ctime_ns", ns(st->st_ctim));
}

json_t *jig_host_fact_realpath(const char *path, const char *resolved, int err)
{
	if (!resolved)
		return json_pack("{s:s,s:i}", "realpath", path, "errno", err);
	return json_pack("{s:s,s:s}", "realpath", path, "is", resolved);
}

void jig_host_fact_note(json_t *noted, json_t *fact)
{
	size_t i;
	json_t *had;
	bool known = false;
	json_array_foreach(noted, i, had)
		known |= json_equal(had, fact);
	if (noted && fact && !known)
		json_array_append(noted, fact);
	json_decref(fact);
}

int jig_host_fact_stat_noted(json_t *noted, const char *path, struct stat *st)
{
	int rc = stat(path, st), err = errno;
	jig_host_fact_note(noted, jig_host_fact_stat(path, rc == 0 ? st : NULL, err));
	errno = err;
	return rc;
}

/* The same observation as composition's: stat follows links (a bind
 * source is bound from where it leads), realpath resolves them. */
static json_t *observe(const json_t *fact)
{
	const char *path = json_string_value(json_object_get(fact, "stat"));
	if (path && path[0] == '/') {
		struct stat st;
		int rc = stat(path, &st);
		return jig_host_fact_stat(path, rc == 0 ? &st : NULL, errno);
	}
	path = json_string_value(json_object_get(fact, "realpath"));
	if (path && path[0] == '/') {
		char real[PATH_MAX];
		const char *r = realpath(path, real);
		return jig_host_fact_realpath(path, r, errno);
	}
	return NULL;
}

bool jig_host_fact_holds(const json_t *fact)
{
	json_t *now = json_is_object(fact) ? observe(fact) : NULL;
	bool same = now && json_equal(now, (json_t *)fact);
	json_decref(now);
	return same;
}
