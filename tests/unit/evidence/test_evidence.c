/* Negative evidence (issue 34, must-show 5 and 6; docs/session-evidence.md):
 * the suite derived from a mapping, the probe's answers parsed strictly,
 * the redacted summary schema-checked and hunted for canaries and
 * credential names; and the probe itself, run outside any scope. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "evidence/evidence.h"

#define CANARY "canary-7f3a9c2e11d4"
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char *env_fixture[] = {"HOME=/home/op", "PATH=/usr/bin", "OPENAI_API_KEY=" CANARY, "MY_SERVICE_TOKEN=tok-1234567",
			      "JIG_EVIDENCE_CANARY=configured-canary-42", "SHORT_KEY=ab", NULL};

static json_t *schema(void)
{
	json_error_t je;
	json_t *s = json_load_file(JIG_SOURCE_DIR "/policy/session-evidence.schema.json", 0, &je);
	assert_non_null(s);
	return s;
}

static void build(struct jig_evidence_suite *s, bool rw)
{
	static const char *const siblings[] = {"/srv/repos/other", "/srv/worktrees/x/feature"};
	static const char *const markers[] = {"/tmp/.jig-evidence-x"};
	static const char *const priv[] = {"/home/op/.ssh", "/home/op/.config/gh"};
	static const unsigned ports[] = {1234}, decoys[] = {1235, 41000, 1234};
	static const char *const connect[] = {"api.example.com:443"};
	struct jig_evidence_inputs in = {.worktree = "/srv/repos/mine", .worktree_rw = rw, .siblings = siblings,
					 .n_siblings = 2, .tmpdir = "/run/user/1000/jig/sessions/a/tmp",
					 .decoy_tmpdir = "/run/user/1000/jig/sessions/b/tmp", .markers = markers, .n_markers = 1,
					 .private_dirs = priv, .n_private_dirs = 2, .loopback = ports, .n_loopback = 1,
					 .decoy_ports = decoys, .n_decoy_ports = 3, .proxy = "127.0.0.1:3128",
					 .connect = connect, .n_connect = 1, .caller_env = env_fixture};
	struct jig_error e = {0};
	assert_int_equal(jig_evidence_suite_build(s, &in, &e), 0);
}

static const struct jig_evidence_check *find(const struct jig_evidence_suite *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].id, id))
			return &s->c[i];
	return NULL;
}

static void credential_names(void **state)
{
	(void)state;
	const char *yes[] = {"OPENAI_API_KEY", "GH_TOKEN", "SSH_AUTH_SOCK", "aws_secret_access_key", "DB_PASSWORD",
			     "MY_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "npm_config__authToken"};
	const char *no[] = {"HOME", "PATH", "KEYBOARD", "policy_sha256", "worktree_mode", "TERM", "evidence"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		assert_true(jig_evidence_credential_name(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_false(jig_evidence_credential_name(no[i], strlen(no[i])));
}

/* The suite follows the mapping: rw only when mapped so; every named
 * neighbour, decoy and private directory denied; every credential-like
 * variable of the caller (and the fixed raw names) absent, named only by a
 * digest; granted ports allowed, decoys denied; the proxy's exact target
 * allowed and its neighbours refused. */
static void suite_from_mapping(void **state)
{
	(void)state;
	struct jig_evidence_suite s;
	build(&s, false);
	assert_true(find(&s, "worktree.read")->expect_allow);
	assert_false(find(&s, "worktree.write")->expect_allow);
	assert_false(find(&s, "sibling.1.read")->expect_allow);
	assert_false(find(&s, "sibling.2.read")->expect_allow);
	assert_true(find(&s, "sibling.1.read")->vacuous); /* not on this host */
	assert_true(find(&s, "tmpdir.exact")->expect_allow);
	assert_false(find(&s, "tmpdir.other.read")->expect_allow);
	assert_false(find(&s, "tmpdir.other.write")->expect_allow);
	assert_false(find(&s, "marker.1.read")->expect_allow);
	assert_false(find(&s, "private.2.read")->expect_allow);
	assert_true(find(&s, "loopback.1234.tcp")->expect_allow);
	assert_false(find(&s, "loopback.1235.tcp")->expect_allow);
	assert_false(find(&s, "loopback.41000.tcp")->expect_allow);
	assert_true(find(&s, "connect.1")->expect_allow);
	assert_false(find(&s, "connect.1.other-port")->expect_allow);
	assert_false(find(&s, "connect.other-host")->expect_allow);
	size_t env = 0, present = 0;
	for (size_t i = 0; i < s.n; i++) {
		assert_null(strstr(s.c[i].id, "api_key"));
		assert_null(strstr(s.c[i].id, "token"));
		if (!strcmp(s.c[i].kind, "env")) {
			env++;
			present += !s.c[i].vacuous;
			assert_false(s.c[i].expect_allow);
		}
	}
	/* 6 fixed names + MY_SERVICE_TOKEN, JIG_EVIDENCE_CANARY, SHORT_KEY */
	assert_int_equal(env, 9);
	assert_int_equal(present, 4);
	char **argv = jig_evidence_argv(&s, "/.jig/probe");
	assert_string_equal(argv[0], "/.jig/probe");
	assert_string_equal(argv[1], "read:allow:worktree.read:/srv/repos/mine");
	assert_string_equal(argv[2], "write:deny:worktree.write:/srv/repos/mine");
	jig_evidence_argv_free(argv);
	jig_evidence_suite_free(&s);
	build(&s, true);
	assert_true(find(&s, "worktree.write")->expect_allow);
	jig_evidence_suite_free(&s);
}

static void answer_all(struct jig_evidence_suite *s, const char *flip)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	for (size_t i = 0; i < s->n; i++) {
		bool allow = s->c[i].expect_allow ^ (flip && !strcmp(flip, s->c[i].id));
		fprintf(f, "{\"id\":\"%s\",\"kind\":\"%s\",\"expected\":\"%s\",\"actual\":\"%s\",\"pass\":true,\"why\":\"\"}\n",
			s->c[i].id, s->c[i].kind, s->c[i].expect_allow ? "allow" : "deny", allow ? "allow" : "deny");
	}
	fprintf(f, "{\"done\":%zu}\n", s->n);
	fclose(f);
	struct jig_error e = {0};
	assert_int_equal(jig_evidence_parse(s, buf, len, &e), 0);
	free(buf);
}

static void parse_strict(void **state)
{
	(void)state;
	struct jig_evidence_suite s;
	struct jig_error e = {0};
	build(&s, false);
	answer_all(&s, NULL);
	assert_int_equal(jig_evidence_failed(&s), 0);
	jig_evidence_suite_free(&s);

	/* over-granting: one denial answered "allow" fails that check */
	build(&s, false);
	answer_all(&s, "sibling.1.read");
	assert_int_equal(jig_evidence_failed(&s), 1);
	assert_false(jig_evidence_check_passed(find(&s, "sibling.1.read")));
	jig_evidence_suite_free(&s);

	/* unanswered checks are missing, never passed */
	build(&s, false);
	const char *one = "noise from somewhere\n{\"id\":\"worktree.read\",\"expected\":\"allow\",\"actual\":\"allow\"}\n";
	assert_int_equal(jig_evidence_parse(&s, one, strlen(one), &e), 0);
	assert_int_equal(jig_evidence_failed(&s), s.n - 1);
	assert_int_equal(find(&s, "worktree.write")->actual, JIG_EV_MISSING);
	/* a repeated answer, an id the suite did not ask, a changed expectation */
	assert_int_equal(jig_evidence_parse(&s, one, strlen(one), &e), -JIG_E_INTEGRITY);
	const char *stray = "{\"id\":\"made.up\",\"expected\":\"deny\",\"actual\":\"deny\"}";
	assert_int_equal(jig_evidence_parse(&s, stray, strlen(stray), &e), -JIG_E_INTEGRITY);
	const char *flip = "{\"id\":\"sibling.1.read\",\"expected\":\"allow\",\"actual\":\"allow\"}";
	assert_int_equal(jig_evidence_parse(&s, flip, strlen(flip), &e), -JIG_E_INTEGRITY);
	const char *shape = "{\"id\":7}";
	assert_int_equal(jig_evidence_parse(&s, shape, strlen(shape), &e), -JIG_E_INTEGRITY);
	jig_evidence_suite_free(&s);
}

static json_t *summary_of(struct jig_evidence_suite *s, const char *repository)
{
	static const char *const names[] = {"suite.json", "probe.jsonl"};
	static const char *const sums[] = {HEX64, HEX64};
	static const unsigned long bytes[] = {100, 200};
	struct jig_evidence_meta m = {.run = "20261205T140000Z-0011223344556677", .repository = repository,
				      .policy_sha256 = HEX64, .probe_policy_sha256 = HEX64, .snapshot_sha256 = HEX64,
				      .started = "2026-12-05T14:00:00Z", .finished = "2026-12-05T14:00:09Z",
				      .raw_names = names, .raw_sha256 = sums, .raw_bytes = bytes, .n_raw = 2};
	m.git = json_pack("{s:s, s:[s], s:[s]}", "scope_policy_sha256", HEX64, "ssh_hosts", "fixture 127.0.0.1:22022", "https_hosts",
			  "forge 127.0.0.1:8443");
	json_t *j = jig_evidence_summary(s, &m);
	json_decref(m.git);
	assert_non_null(j);
	/* the git scope and hosts are listed (decision 294) */
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(j, "git"), "https_hosts"), 0)),
			    "forge 127.0.0.1:8443");
	return j;
}

/* A canary in the environment never reaches the summary: the suite names
 * variables by digest only, and the summary is checked before it exists. */
static void canary_absent(void **state)
{
	(void)state;
	struct jig_evidence_suite s;
	struct jig_error e = {0};
	build(&s, false);
	answer_all(&s, "sibling.2.read");
	const char **can = jig_evidence_canaries(env_fixture);
	assert_string_equal(can[0], CANARY);
	assert_string_equal(can[1], "tok-1234567");
	assert_string_equal(can[2], "configured-canary-42");
	assert_null(can[3]); /* SHORT_KEY's "ab" is too short to hunt (decision 149) */
	json_t *sum = summary_of(&s, "mine"), *sch = schema();
	char *bytes = NULL;
	assert_int_equal(jig_evidence_summary_bytes(sum, sch, can, &bytes, &e), 0);
	assert_null(strstr(bytes, CANARY));
	assert_null(strstr(bytes, "OPENAI"));
	assert_non_null(strstr(bytes, "\"result\":\"fail\""));
	assert_non_null(strstr(bytes, "\"format\":\"jig-session-evidence/1\""));
	/* the raw suite names the variables (it is 0600 raw evidence), never their values */
	json_t *raw = jig_evidence_suite_json(&s);
	char *rawtext = json_dumps(raw, 0);
	assert_non_null(strstr(rawtext, "OPENAI_API_KEY"));
	assert_null(strstr(rawtext, CANARY));
	free(rawtext);
	json_decref(raw);
	free(bytes);
	json_decref(sum);
	json_decref(sch);
	free(can);
	jig_evidence_suite_free(&s);
}

/* A deliberately leaking fixture: a check result carrying the canary, a
 * credential name, or the configured canary makes generation fail, and
 * the error never repeats the canary. */
static void leak_fails(void **state)
{
	(void)state;
	const char **can = jig_evidence_canaries(env_fixture);
	json_t *sch = schema();
	const char *leaks[] = {CANARY, "env.openai_api_key", "x.configured-canary-42", "gh_token.read"};
	for (size_t i = 0; i < sizeof(leaks) / sizeof(*leaks); i++) {
		struct jig_evidence_suite s;
		struct jig_error e = {0};
		build(&s, false);
		snprintf(s.c[0].id, sizeof(s.c[0].id), "%s", leaks[i]);
		json_t *sum = summary_of(&s, "mine");
		char *bytes = (char *)1;
		assert_int_equal(jig_evidence_summary_bytes(sum, sch, can, &bytes, &e), -JIG_E_INTEGRITY);
		assert_null(bytes);
		assert_null(strstr(e.msg, CANARY));
		assert_non_null(strstr(e.msg, "nothing was written"));
		json_decref(sum);
		jig_evidence_suite_free(&s);
	}
	/* the repository id is the map's: a credential-looking one is refused too */
	struct jig_evidence_suite s;
	struct jig_error e = {0};
	build(&s, false);
	json_t *sum = summary_of(&s, "deploy-secrets");
	char *bytes = NULL;
	assert_int_equal(jig_evidence_summary_bytes(sum, sch, can, &bytes, &e), -JIG_E_INTEGRITY);
	json_decref(sum);
	jig_evidence_suite_free(&s);
	json_decref(sch);
	free(can);
}

static void schema_refuses(void **state)
{
	(void)state;
	struct jig_evidence_suite s;
	build(&s, false);
	answer_all(&s, NULL);
	json_t *sch = schema();
	const char *const *none = NULL;
	struct {
		const char *key;
		json_t *value;
	} bad[] = {
		{"format", json_string("jig-session-evidence/2")},
		{"result", json_string("maybe")},
		{"policy_sha256", json_string("abc")},
		{"raw_output", json_string("x")},
		{"checks", json_array()},
		{"started", json_integer(5)},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		json_t *sum = summary_of(&s, "mine");
		json_object_set_new(sum, bad[i].key, bad[i].value);
		char *bytes = NULL;
		struct jig_error e = {0};
		assert_int_equal(jig_evidence_summary_bytes(sum, sch, none, &bytes, &e), -JIG_E_INTERNAL);
		assert_non_null(strstr(e.msg, "does not match jig-session-evidence/1"));
		assert_null(bytes);
		json_decref(sum);
	}
	json_t *sum = summary_of(&s, "mine");
	json_object_del(sum, "evidence");
	char *bytes = NULL;
	struct jig_error e = {0};
	assert_int_equal(jig_evidence_summary_bytes(sum, sch, none, &bytes, &e), -JIG_E_INTERNAL);
	json_decref(sum);
	/* a check carrying raw output */
	sum = summary_of(&s, "mine");
	json_object_set_new(json_array_get(json_object_get(sum, "checks"), 0), "why", json_string("EACCES"));
	assert_int_equal(jig_evidence_summary_bytes(sum, sch, none, &bytes, &e), -JIG_E_INTERNAL);
	json_decref(sum);
	json_decref(sch);
	jig_evidence_suite_free(&s);
}

/* The probe, run directly (no scope): each kind answers as the host is. */
static char *run_probe(char **argv)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv(JIG_PROBE, argv);
		_exit(127);
	}
	close(p[1]);
	char *out = NULL;
	size_t len = 0;
	char buf[4096];
	ssize_t n;
	FILE *f = open_memstream(&out, &len);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return out;
}

static int listener(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A stand-in for jig's CONNECT relay: 200 for exactly ok.example:443, 403
 * for anything else, n requests then exit. */
static pid_t fake_proxy(int fd, int n)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	for (int i = 0; i < n; i++) {
		int c = accept(fd, NULL, NULL);
		char req[1024] = {0};
		ssize_t got = read(c, req, sizeof(req) - 1);
		const char *ans = got > 0 && !strncmp(req, "CONNECT ok.example:443 ", 23) ? "HTTP/1.1 200 Connection established\r\n\r\n"
											 : "HTTP/1.1 403 Forbidden\r\n\r\n";
		if (write(c, ans, strlen(ans)) < 0)
			_exit(1);
		close(c);
	}
	_exit(0);
}

static void probe_answers(void **state)
{
	(void)state;
	char dir[] = "/tmp/jig-probe-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	unsigned open_port, closed_port;
	int l = listener(&open_port), c = listener(&closed_port);
	close(c); /* nothing listens there now */
	unsigned proxy_port;
	int pl = listener(&proxy_port);
	pid_t proxy = fake_proxy(pl, 3);
	char proxy_addr[32];
	snprintf(proxy_addr, sizeof(proxy_addr), "127.0.0.1:%u", proxy_port);
	const char *const targets[] = {"ok.example:443"};
	struct jig_evidence_suite s = {0};
	char tmp[64], pattern[64];
	snprintf(tmp, sizeof(tmp), "%s/0a1b", dir); /* a session id's shape */
	snprintf(pattern, sizeof(pattern), "%s/*", dir);
	assert_int_equal(mkdir(tmp, 0700), 0);
	struct jig_evidence_inputs in = {.worktree = dir, .worktree_rw = true, .tmpdir = pattern,
					 .loopback = &open_port, .n_loopback = 1, .decoy_ports = &closed_port,
					 .n_decoy_ports = 1, .caller_env = env_fixture,
					 .proxy = proxy_addr, .connect = targets, .n_connect = 1};
	const char *const gone[] = {"/nonexistent/jig-probe"};
	in.siblings = gone;
	in.n_siblings = 1;
	struct jig_error e = {0};
	setenv("TMPDIR", tmp, 1);
	assert_int_equal(jig_evidence_suite_build(&s, &in, &e), 0);
	for (size_t i = 0; i < s.n; i++)
		if (!strcmp(s.c[i].kind, "env"))
			unsetenv(s.c[i].arg); /* absent here, whatever the test runner's environment holds */
	char **argv = jig_evidence_argv(&s, JIG_PROBE);
	char *out = run_probe(argv);
	assert_int_equal(jig_evidence_parse(&s, out, strlen(out), &e), 0);
	for (size_t i = 0; i < s.n; i++)
		if (!jig_evidence_check_passed(&s.c[i]))
			fail_msg("%s: actual %d (%s)", s.c[i].id, s.c[i].actual, s.c[i].why);
	assert_non_null(strstr(out, "{\"done\":"));
	assert_non_null(find(&s, "connect.1"));
	assert_non_null(find(&s, "connect.other-host"));
	int pst;
	waitpid(proxy, &pst, 0);
	assert_true(WIFEXITED(pst) && WEXITSTATUS(pst) == 0);
	close(pl);
	assert_null(strstr(out, CANARY)); /* no value is ever printed */
	free(out);
	jig_evidence_argv_free(argv);
	/* a writable worktree that was expected read-only fails; so does a malformed check */
	char *bad[] = {JIG_PROBE, NULL, "nonsense", NULL};
	char spec[4200];
	snprintf(spec, sizeof(spec), "write:deny:worktree.write:%s", dir);
	bad[1] = spec;
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		execv(JIG_PROBE, bad);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_int_equal(WEXITSTATUS(st), 2);
	jig_evidence_suite_free(&s);
	close(l);
	rmdir(tmp);
	rmdir(dir);
}

/* The Git class (decision 214): the checks from the common directory,
 * the nested repository only in rw, jig's own check never given to the
 * probe; the probe's create, rename and nest kinds on a writable tree. */
static void git_checks(void **state)
{
	(void)state;
	static const char *const modules[] = {"/srv/repos/mine/.git/modules/sub"}, *const wts[] = {"/srv/repos/mine/.git/worktrees/w"};
	for (int rw = 0; rw < 2; rw++) {
		struct jig_evidence_inputs in = {.worktree = "/srv/repos/mine", .worktree_rw = rw, .caller_env = env_fixture,
						 .git_common = "/srv/repos/mine/.git", .git_dotgit = "/srv/repos/mine/.git",
						 .git_modules = modules, .n_git_modules = 1, .git_worktrees = wts, .n_git_worktrees = 1,
						 .git_nest = "/srv/repos/mine/.jig-evidence-x"};
		struct jig_evidence_suite s = {0};
		struct jig_error e = {0};
		assert_int_equal(jig_evidence_suite_build(&s, &in, &e), 0);
		static const char *const ids[] = {"git.config.write", "git.hooks.create", "git.commondir.create", "git.info.create",
						  "git.module.1.config.write", "git.module.1.hooks.create", "git.worktree.1.write",
						  "git.dotgit.rename", "git.dotgit.write", NULL};
		for (const char *const *id = ids; *id; id++) {
			const struct jig_evidence_check *c = find(&s, *id);
			assert_non_null(c);
			assert_false(c->expect_allow);
		}
		const struct jig_evidence_check *nest = find(&s, "git.nested.create"), *kept = find(&s, JIG_EVIDENCE_NESTED_KEPT);
		if (rw) {
			assert_true(nest && nest->expect_allow);
			assert_true(kept && !kept->expect_allow);
		} else
			assert_true(!nest && !kept);
		char **argv = jig_evidence_argv(&s, "probe");
		for (size_t i = 0; argv[i]; i++)
			assert_null(strstr(argv[i], JIG_EVIDENCE_NESTED_KEPT));
		jig_evidence_argv_free(argv);
		jig_evidence_suite_free(&s);
	}
	char dir[] = "/tmp/jig-probe-git.XXXXXX", a[300], b[300], c[300], p[100];
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/x", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(a, sizeof(a), "create:allow:g.create:%s/h/i/f", dir);
	snprintf(b, sizeof(b), "rename:allow:g.rename:%s", p);
	snprintf(c, sizeof(c), "nest:allow:g.nest:%s/n", dir);
	char *args[] = {JIG_PROBE, a, b, c, NULL};
	char *out = run_probe(args);
	assert_non_null(strstr(out, "\"id\":\"g.create\",\"kind\":\"create\",\"expected\":\"allow\",\"actual\":\"allow\""));
	assert_non_null(strstr(out, "\"id\":\"g.rename\",\"kind\":\"rename\",\"expected\":\"allow\",\"actual\":\"allow\""));
	assert_non_null(strstr(out, "\"id\":\"g.nest\",\"kind\":\"nest\",\"expected\":\"allow\",\"actual\":\"allow\""));
	free(out);
	struct stat st;
	snprintf(a, sizeof(a), "%s/h", dir);
	assert_int_equal(lstat(a, &st), -1); /* create leaves nothing */
	assert_int_equal(lstat(p, &st), 0);  /* rename puts it back */
	snprintf(a, sizeof(a), "%s/n/.git/config", dir);
	assert_int_equal(lstat(a, &st), 0); /* nest keeps its repository */
	unlink(a);
	snprintf(a, sizeof(a), "%s/n/.git", dir);
	rmdir(a);
	snprintf(a, sizeof(a), "%s/n", dir);
	rmdir(a);
	rmdir(p);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(credential_names), cmocka_unit_test(suite_from_mapping), cmocka_unit_test(parse_strict),
		cmocka_unit_test(canary_absent),    cmocka_unit_test(leak_fails),         cmocka_unit_test(schema_refuses),
		cmocka_unit_test(probe_answers),    cmocka_unit_test(git_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
