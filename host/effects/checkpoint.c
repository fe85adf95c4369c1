#include "effects/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/limits.h"
#include "util/cleanup.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/json.h"

#define NEXT_FILE "checkpoint.next"

static char *refuse(char *why, size_t cap, const char *fmt, const char *arg)
{
	snprintf(why, cap, fmt, arg);
	return NULL;
}

/* {"op":"checkpoint","files"?:{PATH:TEXT},"state"?:JSON}. */
char *jig_checkpoint_encode(json_t *msg, unsigned save, size_t *len, char *why, size_t cap)
{
	*len = 0;
	const char *key;
	json_t *v, *files = json_object_get(msg, "files"), *state = json_object_get(msg, "state");
	json_object_foreach(msg, key, v) if (strcmp(key, "op") && strcmp(key, "files") && strcmp(key, "state"))
		return refuse(why, cap, "unknown field \"%.64s\" (a checkpoint is {files, state})", key);
	if (files && !json_is_object(files))
		return refuse(why, cap, "%sfiles must be an object of path: text", "");
	if (json_object_size(files) > JIG_CHECKPOINT_MAX_FILES) {
		snprintf(why, cap, "more than %d files", JIG_CHECKPOINT_MAX_FILES);
		return NULL;
	}
	size_t text = 0;
	json_object_foreach(files, key, v) {
		if (strlen(key) > JIG_CHECKPOINT_MAX_PATH || !jig_path_is_normal_relative(key))
			return refuse(why, cap, "file \"%.64s\" is not a normalised relative path of at most 255 bytes", key);
		if (!json_is_string(v))
			return refuse(why, cap, "file %.64s: its content must be text (a string)", key);
		text += json_string_length(v);
	}
	if (text > JIG_CHECKPOINT_MAX_TEXT) {
		snprintf(why, cap, "its files hold %zu bytes; at most %u together", text, JIG_CHECKPOINT_MAX_TEXT);
		return NULL;
	}
	/* The cap is on the aggregate the Flow chose: {files, state}. */
	json_t *agg = json_pack("{s:o,s:o}", "files", files ? json_incref(files) : json_object(), "state",
				state ? json_incref(state) : json_null());
	char *canon = agg ? json_dumps(agg, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	size_t n = canon ? strlen(canon) : 0;
	free(canon);
	if (!canon) {
		json_decref(agg);
		return refuse(why, cap, "%sjig could not encode it", "");
	}
	if (n > JIG_CHECKPOINT_MAX_BYTES) {
		json_decref(agg);
		snprintf(why, cap, "the aggregate is %zu bytes of canonical JSON; at most %u", n, JIG_CHECKPOINT_MAX_BYTES);
		return NULL;
	}
	json_object_set_new(agg, "format", json_string(JIG_CHECKPOINT_FORMAT));
	json_object_set_new(agg, "save", json_integer(save));
	char *out = json_dumps(agg, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(agg);
	if (!out)
		return refuse(why, cap, "%sjig could not encode it", "");
	*len = strlen(out);
	return out;
}

/* checkpoint.next, then renamed over checkpoint.json: the accepted one is
 * replaced whole or not at all. */
static int store(int rundir, const char *buf, size_t len, struct jig_error *e)
{
	unlinkat(rundir, NEXT_FILE, 0);
	if (jig_write_file_at(rundir, NEXT_FILE, buf, len, 0600, e) < 0)
		return -1;
	JIG_FAULT_POINT("checkpoint save");
	if (renameat(rundir, NEXT_FILE, rundir, JIG_CHECKPOINT_FILE) < 0)
		return jig_err(e, JIG_E_INTERNAL, "cannot accept the checkpoint: %s", strerror(errno));
	return 0;
}

void jig_checkpoint_effect(struct jig_checkpoint_env *env, json_t *op, json_t **reply, json_t **evidence)
{
	unsigned save = ++env->saves;
	char why[256] = "";
	size_t len = 0;
	char *buf = NULL;
	struct jig_error e = {0};
	if (save > JIG_CHECKPOINT_MAX_SAVES)
		snprintf(why, sizeof(why), "more than %d saves in one Run", JIG_CHECKPOINT_MAX_SAVES);
	else if ((buf = jig_checkpoint_encode(op, save, &len, why, sizeof(why))) && store(env->rundir, buf, len, &e) < 0)
		snprintf(why, sizeof(why), "%.200s", e.msg);
	if (!buf || why[0]) {
		*reply = json_pack("{s:s,s:b,s:s}", "op", "checkpoint", "ok", 0, "error", why);
		*evidence = json_pack("{s:s,s:I,s:s,s:s}", "effect", "checkpoint", "save", (json_int_t)save, "outcome", "refused",
				      "error", why);
		free(buf);
		return;
	}
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(buf, len, d);
	jig_hex(d, sizeof(d), hex);
	free(buf);
	*reply = json_pack("{s:s,s:b,s:I,s:I,s:s}", "op", "checkpoint", "ok", 1, "save", (json_int_t)save, "bytes",
			   (json_int_t)len, "sha256", hex);
	*evidence = json_pack("{s:s,s:I,s:s,s:I,s:s}", "effect", "checkpoint", "save", (json_int_t)save, "outcome", "accepted",
			      "bytes", (json_int_t)len, "sha256", hex);
}

int jig_checkpoint_publish(int rundir, int stagefd, json_t **part, struct jig_error *e)
{
	*part = NULL;
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	struct jig_error ignored;
	if (jig_read_file_at(rundir, JIG_CHECKPOINT_FILE, JIG_CHECKPOINT_MAX_BYTES + 4096, "checkpoint", &buf, &len, &st,
			     &ignored) < 0) {
		*part = json_pack("{s:s,s:i}", "progress", "interrupted", "save", 0);
		return 0; /* none was accepted */
	}
	json_t *agg = NULL;
	if (jig_json_parse_object(buf, len, "the accepted checkpoint", &agg, e) < 0)
		return -1;
	json_t *paths = json_array();
	const char *key;
	json_t *v;
	json_object_foreach(json_object_get(agg, "files"), key, v) json_array_append_new(paths, json_string(key));
	unsigned char d[JIG_SHA256_LEN];
	char hex[JIG_SHA256_HEX];
	jig_sha256(buf, len, d);
	jig_hex(d, sizeof(d), hex);
	*part = json_pack("{s:s,s:O,s:I,s:s,s:s,s:o}", "progress", "interrupted", "save", json_object_get(agg, "save"), "bytes",
			  (json_int_t)len, "sha256", hex, "file", JIG_CHECKPOINT_FILE, "files", paths);
	json_decref(agg);
	if (!*part || jig_write_file_at(stagefd, JIG_CHECKPOINT_FILE, buf, len, 0444, e) < 0) {
		json_decref(*part);
		*part = NULL;
		return e->msg[0] ? -1 : jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	return 0;
}
