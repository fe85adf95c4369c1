/* The last-Run entries of run/history.h. */
#include "packet/history.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "packet/record.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json.h"

/* Every Flow's logs out of a record and its children's, recursively: a
 * Flow's own text (which may carry its per-invocation bytes) stays in its
 * packet, never in the project's state (R-S08). */
static void drop_logs(json_t *node)
{
	json_t *kid;
	size_t i;
	json_object_del(node, "logs");
	json_array_foreach(json_object_get(node, "children"), i, kid)
		drop_logs(kid);
}

/* The record without what the packet keeps for itself. */
static json_t *slim(json_t *rec, int cut)
{
	json_t *r = json_deep_copy(rec);
	if (!r)
		return NULL;
	drop_logs(r);
	json_object_del(json_object_get(r, "scope"), "policy");
	json_object_del(r, "verification");
	if (cut >= 1) { /* effects to their stubs, children to their summaries */
		json_t *ev, *stubs = json_array();
		size_t i;
		json_array_foreach(json_object_get(r, "effects"), i, ev)
			json_array_append_new(stubs, jig_record_effect_stub(ev));
		json_object_set_new(r, "effects", stubs);
		json_object_set_new(r, "children_cut", json_integer((json_int_t)json_array_size(json_object_get(r, "children"))));
		json_object_del(r, "children");
	}
	if (cut >= 2)
		json_object_del(r, "effects"), json_object_del(r, "outputs"), json_object_del(r, "inputs");
	return r;
}

static char *entry_text(const struct jig_history_entry *h)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char packet[PATH_MAX + 1] = "", cwd[PATH_MAX];
	if (h->packet && h->packet[0] != '/' && getcwd(cwd, sizeof(cwd)))
		snprintf(packet, sizeof(packet), "%s/%s", cwd, h->packet);
	else if (h->packet)
		snprintf(packet, sizeof(packet), "%s", h->packet);
	for (int cut = 0; cut < 3; cut++) {
		json_t *doc = json_pack("{s:s,s:s,s:I}", "format", JIG_HISTORY_FORMAT, "flow", h->flow, "at_ms",
					(json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		if (doc && h->record) {
			json_object_set_new(doc, "record", slim(h->record, cut));
			json_object_set_new(doc, "packet", json_string(packet));
		}
		if (doc && h->admission)
			json_object_set_new(doc, "admission", json_string(h->admission));
		if (doc && h->admission_why)
			json_object_set_new(doc, "admission_why", json_string(h->admission_why));
		if (doc && h->refusal)
			json_object_set_new(doc, "refusal", json_pack("{s:s,s:i,s:O?}", "error", h->refusal->msg, "exit_status", h->refusal->code,
								      "changes", h->changes));
		char *txt = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
		json_decref(doc);
		if (!txt || strlen(txt) <= JIG_HISTORY_MAX_BYTES)
			return txt;
		free(txt);
	}
	return NULL;
}

void jig_history_note(int statefd, const struct jig_history_entry *h)
{
	if (statefd < 0 || !h->flow || (!h->record && !h->refusal))
		return;
	jig_autoclose int dir = jig_state_subdir(statefd, JIG_HISTORY_DIR, true);
	if (dir < 0)
		return;
	jig_autofree char *txt = entry_text(h);
	char rel[128];
	snprintf(rel, sizeof(rel), "%s.json", h->flow);
	struct jig_error ignored;
	if (txt)
		jig_state_write(dir, rel, txt, strlen(txt), &ignored);
}

int jig_history_load(int statefd, const char *project, const char *flow, json_t **doc, struct jig_error *e)
{
	char rel[128];
	snprintf(rel, sizeof(rel), JIG_HISTORY_DIR "/%s.json", flow);
	jig_autofree char *buf = NULL;
	size_t len;
	*doc = NULL;
	struct jig_error why = {0};
	int r = jig_state_read(statefd, rel, JIG_HISTORY_MAX_BYTES, "last Run", &buf, &len, &why);
	if (r == -JIG_E_USAGE)
		return jig_err(e, JIG_E_USAGE, "flow %s has no Run kept in %s/.jig (jig run %s keeps its last one); or give jig why a packet",
			       flow, project, flow);
	if (!r && !(r = jig_json_parse_object(buf, len, "last Run", doc, &why)) &&
	    strcmp(json_string_value(json_object_get(*doc, "format")) ?: "", JIG_HISTORY_FORMAT) != 0)
		r = jig_err(&why, JIG_E_INTEGRITY, "not a %s entry", JIG_HISTORY_FORMAT);
	if (r) { /* ignored: the next jig run FLOW replaces it */
		json_decref(*doc);
		*doc = NULL;
		return jig_err(e, JIG_E_USAGE,
			       "flow %s has no usable Run kept in %s/.jig (%s/.jig/%s: %.300s; ignored, the next jig run %s replaces it); or give jig why a packet",
			       flow, project, project, rel, why.msg, flow);
	}
	return 0;
}
