/* jig inspect PACKET: show a published packet after checking its files
 * against its record (every listed file present with its size and SHA-256,
 * nothing unlisted, no links or special files). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../flow/tree.h"
#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "commands.h"

#define RECORD_MAX (4 << 20)

static int verify_files(int pfd, json_t *outputs, struct jig_error *e)
{
	jig_autoclose int files = openat(pfd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (files < 0)
		return jig_err(e, JIG_E_INTEGRITY, "packet: files/: %s", strerror(errno));
	/* Re-hash what is there with the same bounded walk the publisher used,
	 * into a scratch list (copies go to a private temporary directory). */
	char tmpl[] = "/tmp/jig-inspect-XXXXXX";
	if (!mkdtemp(tmpl))
		return jig_err(e, JIG_E_INTERNAL, "mkdtemp: %s", strerror(errno));
	jig_autoclose int tfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	json_t *seen = json_array();
	struct jig_tree_limits l = {.what = "packet file", .max_files = 64, .max_entries = 256, .max_bytes = 16u << 20,
				    .reject_sparse = true};
	struct jig_tree_stats st = {.list = seen};
	int r = tfd < 0 ? jig_err(e, JIG_E_INTERNAL, "%s: %s", tmpl, strerror(errno)) : jig_tree_copy(files, "", tfd, &l, &st, e);
	jig_remove_tree(AT_FDCWD, tmpl);
	if (r) {
		json_decref(seen);
		char msg[sizeof(e->msg)];
		snprintf(msg, sizeof(msg), "%s", e->msg);
		return jig_err(e, JIG_E_INTEGRITY, "packet: %s", msg);
	}
	if (json_array_size(seen) != json_array_size(outputs))
		r = jig_err(e, JIG_E_INTEGRITY, "packet: files/ holds %zu files, the record lists %zu", json_array_size(seen),
			    json_array_size(outputs));
	for (size_t i = 0; !r && i < json_array_size(outputs); i++) {
		json_t *o = json_array_get(outputs, i);
		const char *path = json_string_value(json_object_get(o, "path"));
		bool found = false;
		for (size_t k = 0; path && k < json_array_size(seen); k++) {
			json_t *s = json_array_get(seen, k);
			if (strcmp(json_string_value(json_object_get(s, "path")), path) == 0) {
				found = json_equal(json_object_get(s, "sha256"), json_object_get(o, "sha256")) &&
					json_equal(json_object_get(s, "size"), json_object_get(o, "size"));
				break;
			}
		}
		if (!found)
			r = jig_err(e, JIG_E_INTEGRITY, "packet: %s is missing or differs from the record", path ? path : "?");
	}
	json_decref(seen);
	return r;
}

/* A string field of obj, shown inert: the record is the Flow's as much as
 * jig's (a Flow's error text and logs, its file names), and a packet may
 * have been edited by anyone since. */
static void put_field(const char *before, json_t *obj, const char *key, const char *after)
{
	fputs(before, stdout);
	jig_text_put(stdout, json_string_value(json_object_get(obj, key)));
	fputs(after, stdout);
}

static long long int_field(json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

static void print_record(const char *packet, json_t *rec, json_t *outputs)
{
	json_t *t = json_object_get(rec, "termination");
	fputs("packet ", stdout);
	jig_text_put(stdout, packet);
	put_field(": flow ", rec, "flow", " ");
	put_field("", rec, "status", "");
	if (json_string_length(json_object_get(rec, "error")))
		put_field(": ", rec, "error", "");
	put_field("\n  plan ", rec, "plan_sha256", "\n");
	put_field("  package ", rec, "package_sha256", "\n");
	put_field("  termination ", t, "outcome", "");
	printf(", exit %lld, signal %lld%s, wall %lld ms, peak memory %lld bytes, cleanup %s\n", int_field(t, "exit_status"),
	       int_field(t, "signal"), json_is_true(json_object_get(t, "core_dumped")) ? " (core dumped)" : "",
	       int_field(t, "wall_ms"), int_field(t, "memory_peak_bytes"),
	       json_is_true(json_object_get(t, "cleanup_confirmed")) ? "confirmed" : "NOT confirmed");
	size_t i;
	json_t *o;
	json_array_foreach(outputs, i, o) {
		put_field("  file ", o, "path", "");
		printf("  %lld bytes", int_field(o, "size"));
		put_field("  sha256 ", o, "sha256", "  verified\n");
	}
	json_array_foreach(json_object_get(rec, "effects"), i, o) {
		put_field("  http ", o, "route", " ");
		put_field("", o, "outcome", "");
		if (json_is_integer(json_object_get(o, "status")))
			printf(" status %lld", int_field(o, "status"));
		if (json_string_length(json_object_get(o, "error")))
			put_field(": ", o, "error", "");
		fputc('\n', stdout);
	}
	json_array_foreach(json_object_get(rec, "logs"), i, o) {
		fputs("  log ", stdout);
		jig_text_put(stdout, json_string_value(o));
		fputc('\n', stdout);
	}
}

int jig_cmd_inspect(int argc, char **argv)
{
	const char *packet = NULL, *verification = NULL;
	int json = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--verification") == 0 && i + 1 < argc)
			verification = argv[++i];
		else if (!packet && argv[i][0] != '-')
			packet = argv[i];
		else {
			fprintf(stderr, "usage: jig inspect PACKET [--json] [--verification cached|strict|fast]\n");
			return JIG_E_USAGE;
		}
	}
	if (!packet) {
		fprintf(stderr, "usage: jig inspect PACKET [--json] [--verification cached|strict|fast]\n");
		return JIG_E_USAGE;
	}
	struct jig_error e = {0};
	struct jig_verifier v;
	if (jig_verifier_init(&v, verification, JIG_VERIFY_CACHED, &e) < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	/* The installed tools first: an inspection also checks them. */
	struct jig_snapshot s;
	int sr = jig_cli_open_snapshot(&s, json);
	if (sr)
		return sr;
	sr = jig_cli_verify_installation(&s, &v, NULL, &e);
	jig_verifier_finish(&v);
	jig_snapshot_close(&s);
	if (sr < 0) {
		jig_cli_fail(json, &e);
		return e.code;
	}
	jig_autoclose int pfd = open(packet, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		jig_err(&e, JIG_E_USAGE, "%s: %s", packet, strerror(errno));
		jig_cli_fail(json, &e);
		return e.code;
	}
	jig_autofree char *buf = NULL;
	size_t len;
	struct stat st;
	json_t *rec = NULL;
	int r = jig_read_file_at(pfd, "record.json", RECORD_MAX, "record.json", &buf, &len, &st, &e);
	if (!r)
		r = jig_json_parse_object(buf, len, "record.json", &rec, &e);
	const char *format = rec ? json_string_value(json_object_get(rec, "format")) : NULL;
	if (!r && (!format || strcmp(format, "jig-run-record/1") != 0))
		r = jig_err(&e, JIG_E_INTEGRITY, "%s: not a jig packet (record format)", packet);
	json_t *outputs = rec ? json_object_get(rec, "outputs") : NULL;
	if (!r && !json_is_array(outputs))
		r = jig_err(&e, JIG_E_INTEGRITY, "%s: record has no outputs list", packet);
	if (!r)
		r = verify_files(pfd, outputs, &e);
	if (r) {
		char msg[sizeof(e.msg)];
		snprintf(msg, sizeof(msg), "%s", e.msg);
		jig_err(&e, JIG_E_INTEGRITY, "%s: %s", packet, msg);
		jig_cli_fail(json, &e);
		json_decref(rec);
		return e.code;
	}
	if (json) {
		json_t *doc = json_pack("{s:s,s:b,s:O,s:o}", "schema", "jig-inspect/1", "verified", 1, "record", rec,
					"verification", jig_verifier_json(&v));
		jig_cli_print_json(doc);
		json_decref(doc);
	} else
		print_record(packet, rec, outputs);
	json_decref(rec);
	return 0;
}
