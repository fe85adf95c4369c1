/* jig inspect PACKET: show a published packet after checking that it is
 * still private (owner-only modes, decision 121) and its files against its
 * record (every listed file present with its size and SHA-256, nothing
 * unlisted, no links or special files); with --display web, also in
 * a browser (docs/display.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fileio.h"
#include "../util/json.h"
#include "../display/display.h"
#include "../packet/record.h"
#include "../packet/why.h"
#include "commands.h"

/* --display web: the packet's view served until the page closes it, a
 * signal or the display's time limit. The link goes to the terminal only. */
static int present(const struct jig_snapshot *s, int pfd, json_t *rec, struct jig_error *e)
{
	json_t *view = NULL;
	struct jig_display_artifact *arts = NULL;
	size_t n = 0;
	struct jig_display *d = NULL;
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	char head[1024];
	jig_why_headline(rec, NULL, head, sizeof(head)); /* the first line jig inspect printed */
	int r = jig_display_packet(pfd, rec, head, &view, &arts, &n, e);
	if (!r)
		r = jig_display_open(&d, s, arts, n, e);
	else
		jig_display_artifacts_free(arts, n);
	if (!r)
		r = jig_display_publish(d, view, e);
	else
		json_decref(view);
	if (!r) {
		char link[128];
		jig_display_link(d, link, sizeof(link));
		printf("display: %s\n  read-only; close it from the page or with Ctrl-C (at most %llu min)\n", link,
		       (unsigned long long)(JIG_DISPLAY_MAX_WAIT_MS / 60000));
		fflush(stdout);
		explicit_bzero(link, sizeof(link));
		const char *why = jig_display_wait(d, JIG_DISPLAY_MAX_WAIT_MS);
		printf("display: closed (%s)\n", why);
	}
	jig_display_close(d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static int show(const struct jig_snapshot *s, const char *packet, int json, bool display, struct jig_verifier *v,
		struct jig_error *e)
{
	jig_autoclose int pfd = open(packet, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		jig_err(e, JIG_E_USAGE, "%s: %s", packet, strerror(errno));
		jig_cli_fail(json, e);
		return e->code;
	}
	json_t *rec = NULL;
	int r = jig_record_check_private(pfd, e); /* decision 121 */
	if (!r)
		r = jig_record_load(pfd, packet, &rec, e);
	if (!r)
		r = jig_record_verify_files(pfd, rec, e);
	if (r) {
		jig_err_prefix(e, JIG_E_INTEGRITY, "%s: ", packet);
		jig_cli_fail(json, e);
		json_decref(rec);
		return e->code;
	}
	if (json) {
		json_t *doc = json_pack("{s:s,s:b,s:O,s:o}", "schema", JIG_INSPECT_SCHEMA, "verified", 1, "record", rec,
					"verification", jig_verifier_json(v));
		jig_cli_print_json(doc);
		json_decref(doc);
	} else
		jig_record_print(stdout, packet, rec);
	if (display && (r = present(s, pfd, rec, e)) != 0)
		jig_cli_fail(json, e);
	json_decref(rec);
	return r ? e->code : 0;
}

int jig_cmd_inspect(int argc, char **argv)
{
	const char *packet = NULL, *verification = NULL, *display = NULL;
	int json = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--display") == 0 && i + 1 < argc)
			display = argv[++i];
		else if (strcmp(argv[i], "--verification") == 0 && i + 1 < argc)
			verification = argv[++i];
		else if (!packet && argv[i][0] != '-')
			packet = argv[i];
		else {
			return jig_cli_usage(argc, argv, "unknown argument \"%s\"; usage: jig inspect PACKET [--json] [--verification cached|strict|fast] [--display web]", argv[i]);
		}
	}
	if (!packet) {
		return jig_cli_usage(argc, argv, "usage: jig inspect PACKET [--json] [--verification cached|strict|fast] [--display web]");
	}
	if (display && strcmp(display, "web") != 0)
		return jig_cli_usage(argc, argv, "--display \"%s\": the one display is \"web\"", display);
	if (display && json)
		return jig_cli_usage(argc, argv, "--display web shows the packet in a browser, --json prints it: choose one");
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
	sr = jig_cli_verify_installation(&s, &v, &e);
	jig_verifier_finish(&v);
	if (sr < 0) {
		jig_snapshot_close(&s);
		jig_cli_fail(json, &e);
		return e.code;
	}
	sr = show(&s, packet, json, display != NULL, &v, &e);
	jig_snapshot_close(&s);
	return sr;
}
