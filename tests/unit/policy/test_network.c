/* Exact network grants (issue 34, R-P11): the policy language's "network"
 * object (every refusal, the canonical form, the permission plan, the
 * struct jig_scope it describes) and the CONNECT relay's request parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/scope_policy.h"
#include "sandbox/door.h"
#include "sandbox/netrelay.h"
#include "util/netaddr.h"

#define POLICY(net) "{\"format\":\"jig-scope-policy/1\",\"scope\":\"t\",\"binds\":[],\"tmpfs\":[]," \
	"\"symlinks\":[],\"env\":{},\"descriptors\":[],\"cwd\":\"/\",\"network\":" net "," \
	"\"limits\":{\"memory_bytes\":67108864,\"tasks\":16,\"cpu_quota_us\":100000,\"wall_ms\":60000}}"

static int parse(const char *text, struct jig_scope_policy *p, struct jig_error *e)
{
	memset(e, 0, sizeof(*e));
	return jig_scope_policy_parse(text, strlen(text), NULL, 0, p, e);
}

/* text is refused with a message containing want. */
static void refused(const char *text, const char *want)
{
	struct jig_scope_policy p;
	struct jig_error e;
	int r = parse(text, &p, &e);
	if (r == 0 || !strstr(e.msg, want))
		fail_msg("%s: got %d \"%s\", wanted \"%s\"", text, r, e.msg, want);
	assert_null(strchr(e.msg, '\n'));
}

static void every_refusal(void **state)
{
	(void)state;
	refused(POLICY("\"lan\""), "must be \"none\"");
	refused(POLICY("7"), "must be \"none\", \"host\" or an object");
	refused(POLICY("{}"), "with none, say \"none\"");
	refused(POLICY("{\"loopback\":[],\"connect\":[]}"), "with none, say \"none\"");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:1234\"],\"udp\":[]}"), "udp");
	refused(POLICY("{\"loopback\":\"127.0.0.1:1234\"}"), "network.loopback: must be an array");
	refused(POLICY("{\"loopback\":[1234]}"), "network.loopback[0] \"?\"");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:0\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:65536\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:01234\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:+80\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.1\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:\"]}"), "not 127.0.0.1:PORT");
	refused(POLICY("{\"loopback\":[\"127.0.0.2:1234\"]}"), "only 127.0.0.1 is relayed today");
	refused(POLICY("{\"loopback\":[\"localhost:1234\"]}"), "only 127.0.0.1 is relayed today");
	refused(POLICY("{\"loopback\":[\"0.0.0.0:1234\"]}"), "only 127.0.0.1 is relayed today");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:1234\",\"127.0.0.1:1234\"]}"), "\"127.0.0.1:1234\" is listed twice");
	refused(POLICY("{\"connect\":[\"models.example.com:443\"]}"), "need a \"proxy\"");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:1234\"],\"proxy\":\"127.0.0.1:3128\"}"), "only with connect entries");
	refused(POLICY("{\"connect\":[\"a.example:443\"],\"proxy\":\"10.0.0.1:3128\"}"), "network.proxy \"10.0.0.1:3128\": not 127.0.0.1:PORT");
	refused(POLICY("{\"connect\":[\"a.example:443\"],\"proxy\":3128}"), "proxy");
	refused(POLICY("{\"loopback\":[\"127.0.0.1:3128\"],\"connect\":[\"a.example:443\"],\"proxy\":\"127.0.0.1:3128\"}"),
		"is also a loopback entry");
	refused(POLICY("{\"connect\":[\"a.example:443\",\"A.EXAMPLE:443\"],\"proxy\":\"127.0.0.1:3128\"}"), "listed twice");
	static const char *const bad_hosts[] = {"exa mple.com:443", "-a.example:443", "a-.example:443", "a..example:443",
						".a.example:443", "a.example.:443", "a_b.example:443", "*.example:443",
						"a.example:443/x", "user@a.example:443", "1.2.3:443", "010.1.1.1:443",
						"256.1.1.1:443", "::1:443", "[::1]x:443", "[::ffff:1.2.3.4:443", "[1::0:1]:443",
						":443", "a.example:https", "a.example:-1", "a.123:443", NULL};
	for (const char *const *h = bad_hosts; *h; h++) {
		char text[1024];
		snprintf(text, sizeof(text), POLICY("{\"connect\":[\"%s\"],\"proxy\":\"127.0.0.1:3128\"}"), *h);
		refused(text, "not HOST:PORT");
	}
	char big[2048], list[1800] = "";
	for (int i = 0; i <= JIG_POLICY_MAX_LOOPBACK; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"127.0.0.1:%d\"", i ? "," : "", 2000 + i);
	snprintf(big, sizeof(big), POLICY("{\"loopback\":[%s]}"), list);
	refused(big, "entries; at most 16");
	char label[80];
	memset(label, 'a', 64);
	label[64] = '\0';
	snprintf(big, sizeof(big), POLICY("{\"connect\":[\"%s.example:443\"],\"proxy\":\"127.0.0.1:3128\"}"), label);
	refused(big, "not HOST:PORT");
}

static void canonical_and_lowered(void **state)
{
	(void)state;
	struct jig_scope_policy a, b;
	struct jig_error e;
	assert_int_equal(parse(POLICY("{\"proxy\":\"127.0.0.1:3128\",\"connect\":[\"Models.Example.COM:443\",\"[2001:db8::1]:8443\",\"10.0.0.2:80\"],"
				      "\"loopback\":[\"127.0.0.1:1235\",\"127.0.0.1:1234\"]}"), &a, &e), 0);
	assert_int_equal(parse(POLICY("{\"loopback\":[\"127.0.0.1:1234\",\"127.0.0.1:1235\"],\"connect\":[\"10.0.0.2:80\",\"models.example.com:443\","
				      "\"[2001:db8::1]:8443\"],\"proxy\":\"127.0.0.1:3128\"}"), &b, &e), 0);
	assert_string_equal(a.canonical, b.canonical);
	assert_string_equal(a.sha256, b.sha256);
	assert_non_null(strstr(a.canonical, "\"network\":{\"connect\":[\"10.0.0.2:80\",\"[2001:db8::1]:8443\",\"models.example.com:443\"],"
					    "\"loopback\":[\"127.0.0.1:1234\",\"127.0.0.1:1235\"],\"proxy\":\"127.0.0.1:3128\"}"));
	assert_int_equal(a.network, JIG_NET_NONE);
	assert_int_equal(a.n_loopback, 2);
	assert_int_equal(a.n_listeners, 3);
	assert_int_equal(a.listeners[0].port, 1234);
	assert_int_equal(a.listeners[1].port, 1235);
	assert_int_equal(a.listeners[2].port, 3128);
	assert_int_equal(a.listeners[2].ipv4, 0x7f000001u);
	assert_int_equal(a.n_connect, 3);
	assert_string_equal(a.connect[2], "models.example.com:443");
	assert_string_equal(a.proxy, "127.0.0.1:3128");
	/* A different endpoint is a different policy. */
	struct jig_scope_policy c;
	assert_int_equal(parse(POLICY("{\"loopback\":[\"127.0.0.1:1234\"]}"), &c, &e), 0);
	assert_string_not_equal(c.sha256, a.sha256);
	assert_non_null(strstr(c.canonical, "\"network\":{\"connect\":[],\"loopback\":[\"127.0.0.1:1234\"]}"));
	assert_null(c.proxy);
	/* Re-parsing the canonical form gives the same bytes. */
	struct jig_scope_policy d;
	assert_int_equal(parse(a.canonical, &d, &e), 0);
	assert_string_equal(d.canonical, a.canonical);
	/* The one struct jig_scope: listeners and the relay's hook. */
	struct jig_scope sc;
	const char *argv[] = {"/bin/x", NULL};
	struct jig_scope_launch l = {.init_fd = 7, .argv = argv, .abort_fd = -1};
	assert_true(jig_scope_describe(&a, &l, &sc, &e) < 0); /* no relay: refused */
	int ctx;
	l.listen_ready = (void (*)(void *, uint32_t, int))1;
	l.listen_ctx = &ctx;
	assert_int_equal(jig_scope_describe(&a, &l, &sc, &e), 0);
	assert_int_equal(sc.n_listeners, 3);
	assert_int_equal(sc.network, JIG_NET_NONE);
	assert_ptr_equal(sc.listen_ctx, &ctx);
	/* "none" and "host" describe no listener. */
	struct jig_scope_policy n;
	assert_int_equal(parse(POLICY("\"none\""), &n, &e), 0);
	assert_int_equal(jig_scope_describe(&n, &l, &sc, &e), 0);
	assert_int_equal(sc.n_listeners, 0);
	assert_null(sc.listen_ready);
	jig_scope_policy_free(&n);
	jig_scope_policy_free(&a);
	jig_scope_policy_free(&b);
	jig_scope_policy_free(&c);
	jig_scope_policy_free(&d);
}

static void plan_shows_endpoints(void **state)
{
	(void)state;
	struct jig_scope_policy p;
	struct jig_error e;
	assert_int_equal(parse(POLICY("{\"loopback\":[\"127.0.0.1:1234\"],\"connect\":[\"models.example.com:443\"],\"proxy\":\"127.0.0.1:3128\"}"),
			       &p, &e), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	jig_scope_plan_print(&p, "", f);
	fclose(f);
	assert_non_null(strstr(text, "loopback 127.0.0.1:1234 -> the host's 127.0.0.1:1234"));
	assert_non_null(strstr(text, "proxy 127.0.0.1:3128: HTTP CONNECT to exactly these HOST:PORT (a name-and-port rule, not an IP firewall)"));
	assert_non_null(strstr(text, "connect models.example.com:443"));
	assert_non_null(strstr(text, "inet only inside the private namespace; no raw sockets"));
	free(text);
	json_t *j = jig_scope_plan_json(&p);
	json_t *net = json_object_get(j, "network");
	assert_string_equal(json_string_value(json_array_get(json_object_get(net, "loopback"), 0)), "127.0.0.1:1234");
	assert_string_equal(json_string_value(json_array_get(json_object_get(net, "connect"), 0)), "models.example.com:443");
	assert_string_equal(json_string_value(json_object_get(net, "proxy")), "127.0.0.1:3128");
	char *dump = json_dumps(json_object_get(j, "denied"), JSON_COMPACT);
	assert_non_null(strstr(dump, "\"sockets_other_than_unix_inet_inet6\",\"raw_sockets\""));
	free(dump);
	json_decref(j);
	jig_scope_policy_free(&p);
	/* Without endpoints: unchanged. */
	assert_int_equal(parse(POLICY("\"none\""), &p, &e), 0);
	f = open_memstream(&text, &len);
	jig_scope_plan_print(&p, "", f);
	fclose(f);
	assert_non_null(strstr(text, "network none (private namespace; no route out, not even to host loopback)"));
	assert_non_null(strstr(text, "socket families beyond unix\n"));
	free(text);
	jig_scope_policy_free(&p);
}

static enum jig_connect_parse cp(const char *s, size_t *head, char *host, uint16_t *port)
{
	return jig_connect_parse(s, strlen(s), head, host, 300, port);
}

static void connect_parser(void **state)
{
	(void)state;
	size_t head;
	char host[300];
	uint16_t port;
	const char *ok = "CONNECT Models.Example.com:443 HTTP/1.1\r\nHost: models.example.com:443\r\nUser-Agent: t\r\n\r\nTLS";
	assert_int_equal(cp(ok, &head, host, &port), JIG_CONNECT_OK);
	assert_int_equal(head, strlen(ok) - 3);
	assert_string_equal(host, "models.example.com");
	assert_int_equal(port, 443);
	assert_int_equal(cp("CONNECT 127.0.0.1:8443 HTTP/1.1\r\n\r\n", &head, host, &port), JIG_CONNECT_OK);
	assert_int_equal(cp("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &head, host, &port), JIG_CONNECT_OK);
	assert_string_equal(host, "[::1]");
	/* More to come. */
	assert_int_equal(cp("", &head, host, &port), JIG_CONNECT_MORE);
	assert_int_equal(cp("CONN", &head, host, &port), JIG_CONNECT_MORE);
	assert_int_equal(cp("CONNECT a.example:443 HTTP/1.1\r", &head, host, &port), JIG_CONNECT_MORE);
	assert_int_equal(cp("CONNECT a.example:443 HTTP/1.1\r\nHost: a\r\n", &head, host, &port), JIG_CONNECT_MORE);
	assert_int_equal(cp("CONNECT a.example:443 HTTP/1.1\r\n\r", &head, host, &port), JIG_CONNECT_MORE);
	/* Refused: not CONNECT, not exactly its form, not a policy endpoint. */
	static const char *const bad[] = {
		"GET http://a.example/ HTTP/1.1\r\n\r\n", "connect a.example:443 HTTP/1.1\r\n\r\n", "\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.0\r\n\r\n", "CONNECT a.example:443  HTTP/1.1\r\n\r\n",
		"CONNECT  a.example:443 HTTP/1.1\r\n\r\n", "CONNECT a.example:443 HTTP/1.1\n\n",
		"CONNECT a.example:443 HTTP/1.1\r\nX: a\rb\r\n\r\n", "CONNECT a.example:443 HTTP/1.1\r\nX: \x01\r\n\r\n",
		"CONNECT a.example HTTP/1.1\r\n\r\n", "CONNECT a.example:0 HTTP/1.1\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.1 x\r\n\r\n", "CONNECT http://a.example:443 HTTP/1.1\r\n\r\n",
		"CONNECT a.example:443\r\n\r\n", "CONNECT HTTP/1.1\r\n\r\n", "CONNECT a.exa\tmple:443 HTTP/1.1\r\n\r\n",
		"CONNECT a.example:443 HTTP/1.1\r\nX: \xc3\xa9\r\n\r\n", NULL};
	for (const char *const *b = bad; *b; b++)
		if (cp(*b, &head, host, &port) != JIG_CONNECT_BAD)
			fail_msg("accepted: %s", *b);
	assert_int_equal(jig_connect_parse("CONNECT a.example:443 HTTP/1.1\r\n\0\r\n", 36, &head, host, 300, &port), JIG_CONNECT_BAD);
	/* Too large: no end of head within the cap. */
	size_t n = JIG_NETRELAY_CONNECT_MAX_HEADER + 10;
	char *big = malloc(n + 1);
	snprintf(big, n + 1, "CONNECT a.example:443 HTTP/1.1\r\nX: ");
	memset(big + strlen(big), 'a', n - strlen(big));
	big[n] = '\0';
	assert_int_equal(jig_connect_parse(big, JIG_NETRELAY_CONNECT_MAX_HEADER, &head, host, 300, &port), JIG_CONNECT_TOO_LARGE);
	assert_int_equal(jig_connect_parse(big, n, &head, host, 300, &port), JIG_CONNECT_TOO_LARGE);
	assert_int_equal(jig_connect_parse(big, JIG_NETRELAY_CONNECT_MAX_HEADER - 1, &head, host, 300, &port), JIG_CONNECT_MORE);
	free(big);
}

/* A module built before ABI 1.6 is never asked to launch endpoints. */
static int launched;
static int fake_launch(void *state, const struct jig_scope *sc, struct jig_scope_result *out)
{
	(void)state;
	(void)sc;
	(void)out;
	launched++;
	return JIG_MOD_OK;
}

static void old_module_refused(void **state)
{
	(void)state;
	struct jig_sandbox_ops ops = {.struct_size = sizeof(ops), .launch = fake_launch};
	struct jig_module desc = {.abi_major = 1, .abi_minor = 5, .ops = &ops};
	struct jig_sandbox sb = {.ops = &ops};
	sb.h.desc = &desc;
	struct jig_scope_listener l = {.ipv4 = 0x7f000001u, .port = 1234};
	struct jig_scope sc = {.struct_size = sizeof(sc), .listeners = &l, .n_listeners = 1};
	struct jig_scope_result res;
	launched = 0;
	assert_int_equal(jig_sandbox_launch(&sb, &sc, &res), JIG_MOD_EINVAL);
	assert_int_equal(launched, 0);
	assert_non_null(strstr(res.error, "cannot create a scope's network endpoints; they need ABI 1.6"));
	sc.n_listeners = 0; /* nothing of 1.6 asked: launched as before */
	assert_int_equal(jig_sandbox_launch(&sb, &sc, &res), JIG_MOD_OK);
	desc.abi_minor = 6;
	sc.n_listeners = 1;
	assert_int_equal(jig_sandbox_launch(&sb, &sc, &res), JIG_MOD_OK);
	assert_int_equal(launched, 2);
}

/* The relay itself, in this process's own network namespace: the
 * "scope's" listening sockets are ours on ephemeral ports; the granted
 * host endpoint is an echo server on another. */
static int listen_any(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	assert_true(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 128) == 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void *echo_server(void *arg)
{
	int lfd = *(int *)arg;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			return NULL;
		char buf[256] = "echo:";
		size_t n = 5;
		ssize_t k;
		while (n < sizeof(buf) && (k = read(c, buf + n, sizeof(buf) - n)) > 0)
			n += (size_t)k;
		(void)!write(c, buf, n);
		close(c);
	}
}

static int dial_port(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Sends req (then, when tail, half-closes), reads everything back. */
static void exchange(int fd, const char *req, bool half_close, char *out, size_t cap)
{
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	if (half_close)
		shutdown(fd, SHUT_WR);
	size_t n = 0;
	ssize_t k;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n + 1 < cap && poll(&p, 1, 5000) == 1 && (k = read(fd, out + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(fd);
}

static void relay_loopback_and_connect(void **state)
{
	(void)state;
	uint16_t host_port, lo_port, proxy_port;
	int host = listen_any(&host_port);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, echo_server, &host), 0);
	char text[1024];
	snprintf(text, sizeof(text),
		 POLICY("{\"loopback\":[\"127.0.0.1:%u\"],\"connect\":[\"127.0.0.1:%u\",\"localhost:%u\"],\"proxy\":\"127.0.0.1:3128\"}"),
		 host_port, host_port, host_port);
	struct jig_scope_policy p;
	struct jig_error e;
	assert_int_equal(parse(text, &p, &e), 0);
	struct jig_netrelay *r;
	assert_int_equal(jig_netrelay_start(&p, &r, &e), 0);
	jig_netrelay_listen_ready(r, 0, listen_any(&lo_port));
	jig_netrelay_listen_ready(r, 1, listen_any(&proxy_port));
	char out[20000];
	/* loopback: relayed both ways to the host's endpoint */
	exchange(dial_port(lo_port), "hello", true, out, sizeof(out));
	assert_string_equal(out, "echo:hello");
	/* the proxy: exactly the granted destination */
	snprintf(text, sizeof(text), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: x\r\n\r\nearly", host_port);
	exchange(dial_port(proxy_port), text, true, out, sizeof(out));
	assert_string_equal(out, "HTTP/1.1 200 Connection established\r\n\r\necho:early");
	/* a granted name that resolves to this host is refused, one line
	 * (decision 218); the exact address the policy wrote is dialled */
	snprintf(text, sizeof(text), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", host_port);
	exchange(dial_port(proxy_port), text, false, out, sizeof(out));
	if (!strstr(out, "HTTP/1.1 403 Forbidden: the granted name resolves to a refused address (loopback)\r\n"))
		fail_msg("CONNECT localhost: %s", out);
	snprintf(text, sizeof(text), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", lo_port);
	exchange(dial_port(proxy_port), text, false, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 403 Forbidden\r\n"));
	exchange(dial_port(proxy_port), "GET / HTTP/1.1\r\n\r\n", false, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 400 Bad Request\r\n"));
	char *big = calloc(1, 9000);
	memset(big, 'a', 8999);
	memcpy(big, "CONNECT a.example:443 HTTP/1.1\r\nX: ", 35);
	exchange(dial_port(proxy_port), big, false, out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 431 "));
	free(big);
	/* the cap: beyond JIG_NETRELAY_MAX_CONNS, closed unanswered */
	int idle[JIG_NETRELAY_MAX_CONNS];
	for (int i = 0; i < JIG_NETRELAY_MAX_CONNS; i++)
		idle[i] = dial_port(proxy_port);
	usleep(300000);
	snprintf(text, sizeof(text), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", host_port);
	exchange(dial_port(proxy_port), text, true, out, sizeof(out));
	assert_string_equal(out, "");
	for (int i = 1; i < JIG_NETRELAY_MAX_CONNS; i++)
		close(idle[i]);
	exchange(idle[0], text, true, out, sizeof(out));
	assert_string_equal(out, "HTTP/1.1 200 Connection established\r\n\r\necho:");
	/* a second socket for the same endpoint is not taken */
	uint16_t extra;
	jig_netrelay_listen_ready(r, 0, listen_any(&extra));
	jig_netrelay_stop(r);
	shutdown(host, SHUT_RDWR);
	pthread_join(th, NULL);
	close(host);
	jig_scope_policy_free(&p);
}

/* What a granted remote name may not resolve to (decision 218). */
static bool local(const char *s)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1)
		a4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1)
		a6->sin6_family = AF_INET6;
	else
		fail_msg("%s: not an address", s);
	return jig_addr_local((struct sockaddr *)&ss) != NULL;
}

static void relay_address_check(void **state)
{
	(void)state;
	static const char *const refused_addrs[] = {"127.0.0.1", "127.255.0.9", "0.0.0.0", "0.1.2.3", "169.254.169.254",
						    "::1", "::", "fe80::1", "febf::1", "::ffff:127.0.0.1", "::ffff:0.0.0.0",
						    "::ffff:169.254.1.1", "::127.0.0.1", "::8.8.8.8", "64:ff9b::7f00:1"};
	static const char *const remote[] = {"192.0.2.1", "8.8.8.8", "10.0.0.1", "126.255.255.255", "128.0.0.1",
					     "169.253.0.1", "2001:db8::1", "::ffff:8.8.8.8", "fec0::1", "64:ff9b::808:808"};
	for (size_t i = 0; i < sizeof(refused_addrs) / sizeof(refused_addrs[0]); i++)
		if (!local(refused_addrs[i]))
			fail_msg("%s: not refused", refused_addrs[i]);
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if (local(remote[i]))
			fail_msg("%s: refused", remote[i]);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_string_equal(jig_addr_local((struct sockaddr *)&a), "loopback");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(every_refusal), cmocka_unit_test(canonical_and_lowered),
					   cmocka_unit_test(plan_shows_endpoints), cmocka_unit_test(connect_parser),
					   cmocka_unit_test(old_module_refused), cmocka_unit_test(relay_address_check),
					   cmocka_unit_test(relay_loopback_and_connect)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
