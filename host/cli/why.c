/* jig why [PACKET|FLOW]: a Run's refusals and failures explained (the
 * table is run/why.c): from a packet's record, or from the project's last
 * Run of FLOW (packet/history.h), or of the Flow run last. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../flow/project.h"
#include "../packet/history.h"
#include "../packet/record.h"
#include "../packet/why.h"
#include "../util/cleanup.h"
#include "../state/state.h"
#include "../util/fileio.h"
#include "commands.h"

#define USAGE "usage: jig why [PACKET|FLOW] [--json] [--project DIR]"

/* A packet directory's record (private, well-formed; its files are jig
 * inspect's to check). */
static int packet_record(const char *packet, json_t **rec, struct jig_error *e)
{
	jig_autoclose int pfd = open(packet, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", packet, errno == ENOTDIR || errno == ELOOP ? "not a packet directory" : strerror(errno));
	int r = jig_record_check_private(pfd, e);
	if (!r)
		r = jig_record_load(pfd, packet, rec, e);
	return r;
}

/* <project>/.jig through the state store: the caller's own, 0700 (it is
 * never created here). */
static int open_state(const char *project, struct jig_error *e)
{
	jig_autoclose int root = open(project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return jig_err(e, JIG_E_USAGE, "%s: %s", project, strerror(errno));
	int fd = jig_state_project_dir(root, project, false, e);
	if (fd == -JIG_E_USAGE || fd == -JIG_E_INTERNAL)
		return jig_err(e, JIG_E_USAGE, "%s: no Run kept here (%s); jig why explains a Run of this project or a packet", project, e->msg);
	if (fd < 0)
		return jig_err(e, JIG_E_USAGE, "%s", e->msg);
	return fd;
}

static bool is_entry(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* The Flow whose last Run is the latest (no FLOW given). */
static int latest(int statefd, const char *project, json_t **doc, struct jig_error *e)
{
	jig_autoclose int dir = jig_state_subdir(statefd, JIG_HISTORY_DIR, false);
	size_t n = 0;
	jig_name *names = dir >= 0 ? jig_dir_names(dir, is_entry, JIG_MAX_FLOWS * 4, &n) : NULL;
	json_int_t best = -1;
	for (size_t i = 0; i < n; i++) {
		names[i][strlen(names[i]) - 5] = '\0';
		json_t *d = NULL;
		struct jig_error ignored;
		if (jig_valid_name(names[i]) && jig_history_load(statefd, project, names[i], &d, &ignored) == 0 &&
		    json_integer_value(json_object_get(d, "at_ms")) > best) {
			best = json_integer_value(json_object_get(d, "at_ms"));
			json_decref(*doc);
			*doc = json_incref(d);
		}
		json_decref(d);
	}
	free(names);
	return *doc ? 0 : jig_err(e, JIG_E_USAGE, "%s: no Run kept yet (jig run keeps each Flow's last one); or give jig why a packet", project);
}

/* No Run of FLOW kept: a name the project lacks says so, with its Flows
 * (the one "no such Flow" refusal); the project's own error is not this
 * command's, so an unopenable project keeps e as it is. */
static void unknown_flow(const char *project, const char *flow, struct jig_error *e)
{
	struct jig_project p;
	struct jig_error ignored;
	if (jig_project_open(project, &p, &ignored) < 0)
		return;
	if (!jig_project_flow(&p, flow))
		jig_cli_known_flows(&p, flow, e);
	jig_project_close(&p);
}

/* PACKET has a '/' or is not a Flow name; a Flow name is its last Run,
 * unless none is kept and a directory of that name is there. */
static int load(const char *what, const char *project, json_t **doc, const char **source, struct jig_error *e)
{
	struct stat st;
	char rec[PATH_MAX];
	bool dir = what && snprintf(rec, sizeof(rec), "%s/record.json", what) < (int)sizeof(rec) && lstat(rec, &st) == 0; /* a packet here */
	*source = "packet";
	if (what && (strchr(what, '/') || !jig_valid_name(what)))
		return packet_record(what, doc, e);
	jig_autoclose int statefd = open_state(project, e);
	if (statefd < 0)
		return dir ? packet_record(what, doc, e) : statefd;
	*source = "last-run";
	int r = what ? jig_history_load(statefd, project, what, doc, e) : latest(statefd, project, doc, e);
	if (r < 0 && dir) {
		*source = "packet";
		r = packet_record(what, doc, e);
	} else if (r < 0 && what)
		unknown_flow(project, what, e);
	return r;
}

int jig_cmd_why(int argc, char **argv)
{
	const char *what = NULL;
	struct jig_cli_args args = {.cmd = "why", .usage = USAGE, .positional = &what};
	if (jig_cli_parse(argc, argv, &args))
		return JIG_E_USAGE;
	const char *project = args.project;
	int json = args.json;
	struct jig_error e = {0};
	json_t *doc = NULL;
	const char *source = NULL;
	if (load(what, project, &doc, &source, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	json_t *out = jig_why_doc(doc, source, strcmp(source, "packet") == 0 ? what : NULL);
	json_decref(doc);
	if (!out) {
		jig_err(&e, JIG_E_INTERNAL, "out of memory");
		jig_cli_fail(json, &e);
		return e.code;
	}
	if (json)
		jig_cli_print_json(out);
	else
		jig_why_print(stdout, out);
	json_decref(out);
	return 0;
}
