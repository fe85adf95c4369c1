/* The operator's configuration fails closed (issue 44, R-E06): only ENOENT
 * for the directory or the file is "no configuration"; any other failure
 * to open or read either is a refusal naming the file and the error, in
 * jig_config_read and in its callers (http.json: a request is never sent
 * without the operator's binding; agents.json; the session map is read from
 * the account by host/session/places.c, decision 215). One owner
 * and mode rule by secrecy. Runs as root: EACCES is the shell tests'
 * (deps.config_dir_unreadable, review.refuse_agent_config_unreadable,
 * session.map_unreadable); here ENOTDIR, ELOOP, EMFILE and a link to
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/agent_config.h"
#include "config/config.h"
#include "effects/bindings.h"

static char home[64], cfg[128];

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(home, sizeof(home), "/tmp/jig-config-test.XXXXXX");
	assert_non_null(mkdtemp(home));
	setenv("XDG_CONFIG_HOME", home, 1);
	snprintf(cfg, sizeof(cfg), "%s/jig", home);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", home);
	return 0;
}

/* put NAME MODE TEXT: cfg/NAME, the caller's (root's), mode MODE. */
static void put(const char *name, mode_t mode, const char *text)
{
	char p[256];
	mkdir(cfg, 0700);
	snprintf(p, sizeof(p), "%s/%s", cfg, name);
	unlink(p);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static int rd(const char *name, enum jig_config_secrecy s, struct jig_error *e)
{
	char what[512], *buf = NULL;
	size_t len = 0;
	int r = jig_config_read(name, 4096, s, what, sizeof(what), &buf, &len, e);
	if (r == 0) {
		assert_non_null(buf);
		assert_string_equal(buf, "{}");
	} else
		assert_null(buf);
	free(buf);
	return r;
}

/* refused: r < 0, exit 2, one line naming the file and containing want. */
static void refused(int r, const struct jig_error *e, const char *name, const char *want)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", cfg, name);
	if (r >= 0)
		fail_msg("not refused (%d), expected /%s/", r, want);
	assert_int_equal(e->code, JIG_E_USAGE);
	if (!strstr(e->msg, path) || !strstr(e->msg, want) || strchr(e->msg, '\n'))
		fail_msg("message: %s (expected %s and /%s/)", e->msg, path, want);
}

static void absent_only_on_enoent(void **state)
{
	(void)state;
	struct jig_error e = {0};
	assert_int_equal(rd("npm.json", JIG_CONFIG_NAMES, &e), JIG_CONFIG_ABSENT); /* no directory */
	mkdir(cfg, 0700);
	assert_int_equal(rd("npm.json", JIG_CONFIG_NAMES, &e), JIG_CONFIG_ABSENT); /* no file */
	put("npm.json", 0644, "{}");
	assert_int_equal(rd("npm.json", JIG_CONFIG_NAMES, &e), 0);
	/* No HOME and no XDG_CONFIG_HOME: no configuration directory at all. */
	char *h = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	assert_int_equal(rd("npm.json", JIG_CONFIG_NAMES, &e), JIG_CONFIG_ABSENT);
	setenv("XDG_CONFIG_HOME", home, 1);
	if (h)
		setenv("HOME", h, 1);
	free(h);
}

static void directory_not_a_directory(void **state)
{
	(void)state;
	struct jig_error e = {0};
	sh("touch '%s/jig'", home); /* ENOTDIR */
	refused(rd("npm.json", JIG_CONFIG_NAMES, &e), &e, "npm.json", "Not a directory: cannot read the operator configuration");
}

static void directory_link_to_nothing(void **state)
{
	(void)state;
	struct jig_error e = {0};
	sh("ln -s '%s/unmounted/dotfiles' '%s/jig'", home); /* an unmounted dotfiles mount */
	refused(rd("npm.json", JIG_CONFIG_NAMES, &e), &e, "npm.json", "is a symbolic link to nothing");
	/* A link to a real directory is the operator's choice. */
	sh("mkdir -p '%s/real' && rm '%s/jig' && ln -s real '%s/jig'", home);
	put("npm.json", 0644, "{}");
	assert_int_equal(rd("npm.json", JIG_CONFIG_NAMES, &e), 0);
}

static void file_link_or_not_regular(void **state)
{
	(void)state;
	struct jig_error e = {0};
	put("real.json", 0600, "{}");
	sh("ln -s real.json '%s/jig/npm.json' && mkdir '%s/jig/http.json'", home);
	refused(rd("npm.json", JIG_CONFIG_NAMES, &e), &e, "npm.json", "is a symbolic link");
	refused(rd("http.json", JIG_CONFIG_SECRET, &e), &e, "http.json", "not a regular file");
}

/* EMFILE: no descriptor left for the directory. */
static int out_of_descriptors(const char *name, enum jig_config_secrecy s, struct jig_error *e, struct rlimit *old)
{
	assert_int_equal(getrlimit(RLIMIT_NOFILE, old), 0);
	int top = dup(0);
	assert_true(top >= 0);
	close(top);
	struct rlimit lim = {.rlim_cur = (rlim_t)top, .rlim_max = old->rlim_max};
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	return name ? rd(name, s, e) : 0;
}

static void too_many_open_files(void **state)
{
	(void)state;
	struct jig_error e = {0};
	struct rlimit old;
	put("npm.json", 0644, "{}");
	int r = out_of_descriptors("npm.json", JIG_CONFIG_NAMES, &e, &old);
	setrlimit(RLIMIT_NOFILE, &old);
	refused(r, &e, "npm.json", "Too many open files: cannot read the operator configuration; fix its permissions or remove it");
}

static void one_rule_by_secrecy(void **state)
{
	(void)state;
	struct jig_error e = {0};
	static const struct {
		mode_t mode;
		int names, secret;
	} t[] = {{0600, 0, 0}, {0400, 0, 0}, {0644, 0, -1}, {0640, 0, -1}, {0604, 0, -1},
		 {0664, -1, -1}, {0646, -1, -1}, {0666, -1, -1}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		put("x.json", t[i].mode, "{}");
		if (t[i].names)
			refused(rd("x.json", JIG_CONFIG_NAMES, &e), &e, "x.json", "must be yours and not writable by others");
		else
			assert_int_equal(rd("x.json", JIG_CONFIG_NAMES, &e), 0);
		if (t[i].secret)
			refused(rd("x.json", JIG_CONFIG_SECRET, &e), &e, "x.json", "must be yours and mode 0600 with one link");
		else
			assert_int_equal(rd("x.json", JIG_CONFIG_SECRET, &e), 0);
	}
	/* Another's file, a second link. */
	put("x.json", 0600, "{}");
	sh("chown 65534 '%s/jig/x.json'", home);
	refused(rd("x.json", JIG_CONFIG_NAMES, &e), &e, "x.json", "must be yours");
	refused(rd("x.json", JIG_CONFIG_SECRET, &e), &e, "x.json", "must be yours");
	put("x.json", 0600, "{}");
	sh("ln '%s/jig/x.json' '%s/x-link'", home);
	refused(rd("x.json", JIG_CONFIG_SECRET, &e), &e, "x.json", "one link");
}

/* The callers: unreadable is a refusal, never "nothing configured". */
static void http_json_unreadable_refuses(void **state)
{
	(void)state;
	struct jig_http_binding b;
	struct jig_error e = {0};
	assert_int_equal(jig_http_binding_get("f", "r", "https://x.example/", &b, &e), 0); /* absent: no binding */
	assert_null(b.bearer);
	sh("touch '%s/jig'", home);
	refused(jig_http_binding_get("f", "r", "https://x.example/", &b, &e), &e, "http.json", "Not a directory");
	sh("rm '%s/jig'", home);
	put("http.json", 0600, "{\"format\": \"jig-http-config/1\", \"bindings\": [{\"flow\": \"f\", \"route\": \"r\", "
			      "\"url\": \"https://x.example/\", \"revoked\": true}]}");
	assert_true(jig_http_binding_get("f", "r", "https://x.example/", &b, &e) < 0); /* revoked */
	struct rlimit old;
	out_of_descriptors(NULL, JIG_CONFIG_SECRET, &e, &old);
	int r = jig_http_binding_get("f", "r", "https://x.example/", &b, &e);
	setrlimit(RLIMIT_NOFILE, &old);
	refused(r, &e, "http.json", "Too many open files"); /* the revoked route stays revoked */
	put("http.json", 0644, "{\"format\": \"jig-http-config/1\"}");
	refused(jig_http_binding_get("f", "r", "https://x.example/", &b, &e), &e, "http.json", "mode 0600");
}

static void agents_json_unreadable_refuses(void **state)
{
	(void)state;
	struct jig_agent_provider p;
	struct jig_error e = {0};
	assert_true(jig_agent_provider_get("fake", false, &p, &e) < 0);
	if (!strstr(e.msg, "no operator configuration") || !strstr(e.msg, "agents.json"))
		fail_msg("absent: %s", e.msg);
	sh("touch '%s/jig'", home);
	refused(jig_agent_provider_get("fake", false, &p, &e), &e, "agents.json", "Not a directory: cannot read the operator configuration");
	sh("rm '%s/jig'", home);
	put("agents.json", 0640, "{}");
	refused(jig_agent_provider_get("fake", false, &p, &e), &e, "agents.json", "mode 0600");
}

/* The one rule (decision 341), each value and each refusal, on a stat:
 * the configuration directory's files, the repository map and the files
 * the map names all pass their st here. */
static void rule_by_enum(void **state)
{
	(void)state;
	struct stat st = {.st_uid = geteuid(), .st_mode = S_IFREG | 0600, .st_nlink = 1};
	for (int s = JIG_CONFIG_NAMES; s <= JIG_CONFIG_SECRET; s++)
		assert_null(jig_config_refusal(&st, s));
	st.st_mode = S_IFREG | 0644;
	assert_null(jig_config_refusal(&st, JIG_CONFIG_NAMES));
	assert_string_equal(jig_config_refusal(&st, JIG_CONFIG_PRIVATE), "readable or writable by others (chmod 600)");
	assert_string_equal(jig_config_refusal(&st, JIG_CONFIG_SECRET), "readable or writable by others (chmod 600)");
	st.st_mode = S_IFREG | 0620;
	assert_string_equal(jig_config_refusal(&st, JIG_CONFIG_NAMES), "writable by others (chmod go-w)");
	st.st_mode = S_IFREG | 0602;
	assert_string_equal(jig_config_refusal(&st, JIG_CONFIG_NAMES), "writable by others (chmod go-w)");
	st.st_mode = S_IFREG | 0600;
	st.st_nlink = 2;
	assert_null(jig_config_refusal(&st, JIG_CONFIG_NAMES));
	assert_null(jig_config_refusal(&st, JIG_CONFIG_PRIVATE));
	assert_string_equal(jig_config_refusal(&st, JIG_CONFIG_SECRET), "more than one link");
	st.st_nlink = 1;
	st.st_uid = geteuid() + 1;
	for (int s = JIG_CONFIG_NAMES; s <= JIG_CONFIG_SECRET; s++)
		assert_string_equal(jig_config_refusal(&st, s), "not yours");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(absent_only_on_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(directory_not_a_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(directory_link_to_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(file_link_or_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(too_many_open_files, setup, teardown),
		cmocka_unit_test_setup_teardown(one_rule_by_secrecy, setup, teardown),
		cmocka_unit_test(rule_by_enum),
		cmocka_unit_test_setup_teardown(http_json_unreadable_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(agents_json_unreadable_refuses, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
