/* The session's SSH chain, its pure parts (issue 45, decisions 235-237):
 * the map's ssh:// remote shape and its alias, the agent's answer to
 * REQUEST_IDENTITIES read as untrusted bytes (fingerprints compared, the
 * approved keys' public lines written, a malformed answer refused), and
 * jig's ssh configuration (nothing of the user's, strict host keys, the
 * agent only with the approved keys, jig's connect helper the only proxy,
 * no local command). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/session_policy.h"
#include "session/httpschain.h"
#include "session/sshchain.h"

static void url_alias(void **state)
{
	(void)state;
	char a[64];
	assert_int_equal(jig_ssh_url_alias("ssh://git@fixture/srv/r.git", a, sizeof(a)), 0);
	assert_string_equal(a, "fixture");
	assert_int_equal(jig_ssh_url_alias("ssh://work-gh/org/r.git", a, sizeof(a)), 0);
	assert_string_equal(a, "work-gh");
	static const char *const bad[] = {"ssh://git@fixture:2222/r.git", /* a port: the map's */
					  "git@fixture:r.git",		  /* scp form */
					  "ssh://git@127.0.0.1/r.git",	  /* a host, not an alias */
					  "ssh://git@Fixture/r.git",	  "ssh://fixture", "ssh://fixture/",
					  "ssh://a b@fixture/r", "ssh://git@fixture/r .git", "ssh://-oProxyCommand=x/r",
					  "git+ssh://git@fixture/r.git", "https://fixture/r.git", NULL};
	for (const char *const *b = bad; *b; b++)
		assert_int_equal(jig_ssh_url_alias(*b, a, sizeof(a)), -1);
	assert_true(jig_ssh_url("git@host:r.git"));
	assert_true(jig_ssh_url("ssh+git://host/r"));
	assert_false(jig_ssh_url("https://host/r"));
	assert_false(jig_ssh_url("/srv/r.git"));
}

static size_t put32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16), b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
	return 4;
}

/* A real ed25519 key (ssh-keygen), its blob and fingerprint. */
static const char pub_b64[] = "AAAAC3NzaC1lZDI1NTE5AAAAIBT47coN5A/nQcNlveS2b36Ro2S4blQc4BZD86WjFlEb";
static const char fp[] = "SHA256:vLrxoZgmwFrGRi1q9hfff5j9qTj5T32/b6btreZlW20";

static size_t blob(unsigned char *out)
{
	static const unsigned char key[32] = {0x14, 0xf8, 0xed, 0xca, 0x0d, 0xe4, 0x0f, 0xe7, 0x41, 0xc3, 0x65, 0xbd, 0xe4, 0xb6, 0x6f, 0x7e,
					      0x91, 0xa3, 0x64, 0xb8, 0x6e, 0x54, 0x1c, 0xe0, 0x16, 0x43, 0xf3, 0xa5, 0xa3, 0x16, 0x51, 0x1b};
	size_t n = put32(out, 11);
	memcpy(out + n, "ssh-ed25519", 11);
	n += 11;
	n += put32(out + n, 32);
	memcpy(out + n, key, 32);
	return n + 32;
}

static size_t answer(unsigned char *b, int keys)
{
	unsigned char k[64];
	size_t kl = blob(k), n = 0;
	b[n++] = 12;
	n += put32(b + n, (uint32_t)keys);
	for (int i = 0; i < keys; i++) {
		n += put32(b + n, (uint32_t)kl);
		memcpy(b + n, k, kl);
		n += kl;
		n += put32(b + n, 7);
		memcpy(b + n, "comment", 7);
		n += 7;
	}
	return n;
}

static void agent_match(void **state)
{
	(void)state;
	unsigned char b[512];
	char pubs[1024];
	json_t *ok = json_pack("[s]", fp), *other = json_pack("[s]", "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	size_t n = answer(b, 1);
	assert_int_equal(jig_ssh_agent_match(b, n, ok, pubs, sizeof(pubs)), 1);
	char want[256];
	snprintf(want, sizeof(want), "ssh-ed25519 %s\n", pub_b64);
	assert_string_equal(pubs, want);
	assert_int_equal(jig_ssh_agent_match(b, n, other, pubs, sizeof(pubs)), 0);
	assert_string_equal(pubs, "");
	assert_int_equal(jig_ssh_agent_match(b, answer(b, 0), ok, pubs, sizeof(pubs)), 0);
	/* Malformed: cut short, trailing bytes, another message, a count beyond the bytes. */
	n = answer(b, 2);
	assert_int_equal(jig_ssh_agent_match(b, n - 1, ok, pubs, sizeof(pubs)), -1);
	assert_int_equal(jig_ssh_agent_match(b, n + 1, ok, pubs, sizeof(pubs)), -1);
	b[0] = 5; /* SSH_AGENT_FAILURE */
	assert_int_equal(jig_ssh_agent_match(b, n, ok, pubs, sizeof(pubs)), -1);
	b[0] = 12;
	put32(b + 1, 0xffffffffu);
	assert_int_equal(jig_ssh_agent_match(b, n, ok, pubs, sizeof(pubs)), -1);
	put32(b + 1, 2);
	put32(b + 5, 0x7fffffffu); /* a blob longer than the answer */
	assert_int_equal(jig_ssh_agent_match(b, n, ok, pubs, sizeof(pubs)), -1);
	json_decref(ok);
	json_decref(other);
}

static void config_text(void **state)
{
	(void)state;
	json_t *hosts = json_pack("{s:{s:s,s:i},s:{s:s,s:i}}", "fixture", "host", "127.0.0.1", "port", 22022, "v6", "host", "[2001:db8::1]", "port", 22);
	char out[8192];
	assert_int_equal(jig_ssh_config_text(hosts, out, sizeof(out)), 0);
	static const char *const want[] = {"Host fixture\n  HostName 127.0.0.1\n  Port 22022\n  UserKnownHostsFile /.jig/ssh-known-hosts/fixture\n  IdentityFile /.jig/ssh/fixture.pub\n"
					   "  ProxyCommand /.jig/connect/jig-connect 127.0.0.1:3128 127.0.0.1:22022\n",
					   "HostName 2001:db8::1\n", "ProxyCommand /.jig/connect/jig-connect 127.0.0.1:3128 [2001:db8::1]:22\n", "StrictHostKeyChecking yes", "GlobalKnownHostsFile /dev/null", "IdentitiesOnly yes",
					   "IdentityAgent /.jig/ssh-agent", "BatchMode yes", "ProxyCommand none", "ProxyJump none",
					   "PermitLocalCommand no", "ForwardAgent no", NULL};
	for (const char *const *w = want; *w; w++)
		assert_non_null(strstr(out, *w));
	assert_null(strstr(out, "Include"));
	assert_int_equal(jig_ssh_config_text(hosts, out, 64), -1);
	json_decref(hosts);
}

/* An SSH request's git scope (decisions 236, 310): exactly its host's
 * HOST:PORT through jig's CONNECT relay, jig's ssh directory, the known_hosts and the agent read-only, ssh
 * allowed; any other request: no network, file only. */
static void ssh_scope_composed(void **state)
{
	(void)state;
	FILE *fp = fopen(JIG_SOURCE_DIR "/policy/catalog.json", "rb");
	assert_non_null(fp);
	static char cat[1 << 20];
	size_t n = fread(cat, 1, sizeof(cat), fp);
	fclose(fp);
	struct jig_catalog c;
	struct jig_error e = {0};
	assert_int_equal(jig_catalog_parse(cat, n, &c, &e), 0);
	const struct jig_scope_bind ro[] = {{"/home/op/.local/state/jig/sessions/x/ssh", JIG_SSH_DIR_TARGET},
					    {"/home/op/.ssh/agent-personal.sock", JIG_SSH_AGENT_TARGET},
					    {"/home/op/.ssh/known_hosts", JIG_SSH_KNOWN_HOSTS_TARGET "/fixture"}};
	json_t *net = json_pack("{s:[s],s:s}", "connect", "git.example.test:22022", "proxy", JIG_GIT_PROXY);
	/* a snapshot with jig's ssh ProxyCommand's directory (bound by path) */
	char snap[] = "/tmp/jig-snap.XXXXXX", dir[64];
	assert_non_null(mkdtemp(snap));
	snprintf(dir, sizeof(dir), "%s/libexec", snap);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/libexec/connect", snap);
	assert_int_equal(mkdir(dir, 0700), 0);
	struct jig_session_git_facts f = {.name = JIG_SESSION_GIT_KIND, .snapshot_dir = snap, .home = "/home/op",
					  .worktree = "/srv/repo", .git_dir = "/srv/repo/.git", .rw = true, .cwd = "/srv/repo",
					  .network = net, .ro = ro, .n_ro = 3, .ssh = true};
	struct jig_scope_template t;
	if (jig_session_git_compose(&c, &f, &t, &e) < 0)
		fail_msg("compose: %s", e.msg);
	const char *out = t.policy.canonical;
	assert_non_null(strstr(out, "\"connect\":[\"git.example.test:22022\"]"));
	assert_non_null(strstr(out, "\"loopback\":[]"));
	assert_non_null(strstr(out, "\"proxy\":\"127.0.0.1:3128\""));
	assert_non_null(strstr(out, "\"GIT_ALLOW_PROTOCOL\":\"file:ssh\""));
	for (size_t i = 0; i < 3; i++) {
		char want[300];
		snprintf(want, sizeof(want), "{\"source\":\"%s\",\"target\":\"%s\"}", ro[i].source, ro[i].target);
		if (!strstr(out, want))
			fail_msg("no read-only bind %s in %s", want, out);
	}
	jig_scope_template_free(&t);
	f.network = NULL, f.ro = NULL, f.n_ro = 0, f.ssh = false;
	assert_int_equal(jig_session_git_compose(&c, &f, &t, &e), 0);
	assert_non_null(strstr(t.policy.canonical, "\"network\":\"none\""));
	assert_non_null(strstr(t.policy.canonical, "\"GIT_ALLOW_PROTOCOL\":\"file\""));
	assert_null(strstr(t.policy.canonical, "/.jig/ssh"));
	jig_scope_template_free(&t);
	json_decref(net);
	jig_catalog_free(&c);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/libexec", snap);
	rmdir(dir);
	rmdir(snap);
}

/* The HTTPS chain's pure parts (decisions 290-291): the map's https://
 * URL shape (no user information, query or fragment; the port 443 when
 * absent), the host of a context it reaches, and jig's git configuration
 * for the scope's environment (verification on, no proxy, the host's CA,
 * the credential by a helper that names only the bound file). */
static void https_url_and_env(void **state)
{
	(void)state;
	char h[300];
	long port;
	assert_int_equal(jig_https_url("https://127.0.0.1:8443/repo.git", h, sizeof(h), &port), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(port, 8443);
	assert_int_equal(jig_https_url("https://git.example.com/o/r.git", h, sizeof(h), &port), 0);
	assert_int_equal(port, 443);
	assert_int_equal(jig_https_url("https://[::1]:9/r", h, sizeof(h), &port), 0);
	assert_string_equal(h, "[::1]");
	static const char *const bad[] = {"http://127.0.0.1:8443/r.git", "https://u:p@127.0.0.1:8443/r.git",
					  "https://127.0.0.1:8443/r.git?x", "https://127.0.0.1:8443/r#f", "https://127.0.0.1:0/r",
					  "https://127.0.0.1:65536/r", "https://127.0.0.1:/r", "https://127.0.0.1:8443",
					  "https://127.0.0.1:8443/", "https:///r", "https://a b/r", "https://h_x/r", NULL};
	for (const char *const *b = bad; *b; b++)
		if (jig_https_url(*b, h, sizeof(h), &port) != -1)
			fail_msg("accepted %s", *b);
	json_t *hosts = json_pack("{s:{s:s,s:i,s:s,s:s},s:{s:s,s:i,s:s}}", "fixture", "host", "127.0.0.1", "port", 8443, "ca_file",
				  "/home/op/ca.pem", "credential", "/home/op/cred", "other", "host", "Git.Example.com", "port", 443,
				  "ca_file", "/home/op/ca2.pem");
	assert_string_equal(jig_https_host_of(hosts, "https://127.0.0.1:8443/r.git"), "fixture");
	assert_string_equal(jig_https_host_of(hosts, "https://git.example.com/r.git"), "other");
	assert_null(jig_https_host_of(hosts, "https://127.0.0.1:8444/r.git"));
	assert_null(jig_https_host_of(hosts, "https://127.0.0.1/r.git"));
	json_t *env = json_object();
	const char *const aliases[] = {"fixture"};
	assert_int_equal(jig_session_https_git_env(hosts, aliases, 1, env), 0);
	char *txt = json_dumps(env, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(strstr(txt, "\"http.sslVerify\""));
	assert_string_equal(json_string_value(json_object_get(env, "GIT_CONFIG_KEY_2")), "http.proxy");
	assert_string_equal(json_string_value(json_object_get(env, "GIT_CONFIG_VALUE_2")), "http://127.0.0.1:3128");
	assert_non_null(strstr(txt, "\"http.https://127.0.0.1:8443/.sslCAInfo\""));
	assert_non_null(strstr(txt, "\"/.jig/https-ca/fixture\""));
	assert_non_null(strstr(txt, "cat /.jig/https-credential/fixture"));
	assert_null(strstr(txt, "/home/op"));
	/* no CA path: each host trusts its own CA only (decision 311) */
	assert_null(strstr(txt, "sslCAPath"));
	assert_null(strstr(txt, "\"http.sslCAInfo\""));
	assert_string_equal(json_string_value(json_object_get(env, "GIT_CONFIG_COUNT")), "9");
	/* every KEY_i has its VALUE_i, and the count is exact */
	for (int i = 0; i < 9; i++) {
		char k[32], v[32];
		snprintf(k, sizeof(k), "GIT_CONFIG_KEY_%d", i);
		snprintf(v, sizeof(v), "GIT_CONFIG_VALUE_%d", i);
		assert_non_null(json_object_get(env, k));
		assert_non_null(json_object_get(env, v));
	}
	assert_string_equal(json_string_value(json_object_get(env, "GIT_CONFIG_VALUE_1")), "true");
	assert_string_equal(json_string_value(json_object_get(env, "GIT_CONFIG_KEY_1")), "http.sslVerify");
	free(txt);
	json_decref(env);
	json_decref(hosts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(url_alias), cmocka_unit_test(agent_match), cmocka_unit_test(config_text), cmocka_unit_test(ssh_scope_composed), cmocka_unit_test(https_url_and_env)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
