/* Scope policy, the network grant (issue 34, docs/scope-policy.md):
 *
 *   "none" | "host" |
 *   {"loopback": ["127.0.0.1:PORT", ...], "connect": ["HOST:PORT", ...], "proxy": "127.0.0.1:PORT"}
 *
 * An object is a private network namespace (as "none") in which each
 * loopback entry answers and is relayed by jig to the host's same address
 * and port, and in which jig's CONNECT relay listens at proxy, allowing
 * CONNECT to exactly the connect entries (a name-and-port rule, not an IP
 * firewall). Strict: ports 1-65535 without leading zeros, 127.0.0.1 only
 * for loopback and proxy, HOST a DNS name or an IP literal, each entry
 * once, proxy iff connect is non-empty and never also a loopback entry.
 * Canonical: both lists present and sorted, hosts in lower case, proxy only
 * with connect entries; an object granting nothing is refused ("none"). */
#include "policy/scope_policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

#define LOOPBACK_HOST "127.0.0.1"

/* "PORT": 1-65535 in decimal, no sign, no leading zero. */
static bool parse_port(const char *s, uint16_t *port)
{
	if (!*s || *s == '0' || strlen(s) > 5)
		return false;
	unsigned long v = 0;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (unsigned long)(*c - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* A DNS name in lower case: labels of [a-z0-9-], 1-63 bytes, no hyphen
 * at either end, at most 253 bytes, the last label not all digits (which
 * a resolver would read as a number). */
static bool valid_dns_name(const char *h)
{
	size_t len = strlen(h), label = 0;
	bool digits = true;
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = h[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || h[i - 1] == '-')
				return false;
			if (c == '\0')
				return !digits;
			label = 0;
			digits = true;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') || (label == 0 && c == '-'))
			return false;
		digits &= c >= '0' && c <= '9';
		label++;
	}
	return false;
}

/* An IP literal exactly as inet_ntop prints it ("[...]" for IPv6). */
static bool valid_ip_literal(const char *h)
{
	unsigned char a[16];
	char back[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(h);
	if (n > 2 && h[0] == '[' && h[n - 1] == ']') {
		char in[INET6_ADDRSTRLEN + 1];
		if (n - 2 >= sizeof(in))
			return false;
		memcpy(in, h + 1, n - 2);
		in[n - 2] = '\0';
		return inet_pton(AF_INET6, in, a) == 1 && inet_ntop(AF_INET6, a, back, sizeof(back)) &&
		       strcmp(back, in) == 0;
	}
	return inet_pton(AF_INET, h, a) == 1 && inet_ntop(AF_INET, a, back, sizeof(back)) && strcmp(back, h) == 0;
}

int jig_endpoint_split(const char *s, char *host, size_t cap, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : 0;
	if (!colon || n == 0 || n >= cap || strlen(s) > JIG_POLICY_MAX_ENDPOINT || !parse_port(colon + 1, port))
		return -1;
	for (size_t i = 0; i < n; i++)
		host[i] = (char)tolower((unsigned char)s[i]);
	host[n] = '\0';
	if (strchr(host, ':') && host[0] != '[')
		return -1; /* an IPv6 literal is bracketed */
	return valid_ip_literal(host) || valid_dns_name(host) ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* One list of endpoints, checked and canonical (lower case, sorted, each
 * once) into *out. loopback: only 127.0.0.1. */
static int endpoint_list(json_t *net, const char *key, bool loopback, size_t max, json_t **out, struct jig_error *e)
{
	json_t *arr = json_object_get(net, key);
	if (!arr)
		arr = json_array();
	else
		json_incref(arr);
	int r = 0;
	size_t n = json_array_size(arr);
	json_t **v = calloc(n + 1, sizeof(*v));
	if (!json_is_array(arr))
		r = jig_err(e, JIG_E_USAGE, "scope policy: network.%s: must be an array of \"%s\" strings", key,
			    loopback ? "127.0.0.1:PORT" : "HOST:PORT");
	else if (n > max)
		r = jig_err(e, JIG_E_USAGE, "scope policy: network.%s: %zu entries; at most %zu", key, n, max);
	else if (!v)
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; !r && i < n; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		char host[JIG_POLICY_MAX_ENDPOINT + 1];
		uint16_t port;
		if (!s || jig_endpoint_split(s, host, sizeof(host), &port) < 0)
			r = jig_err(e, JIG_E_USAGE, "scope policy: network.%s[%zu] \"%s\": not %s (port 1-65535)", key, i,
				    s ? s : "?", loopback ? "127.0.0.1:PORT" : "HOST:PORT, HOST a DNS name or an IP literal");
		else if (loopback && strcmp(host, LOOPBACK_HOST) != 0)
			r = jig_err(e, JIG_E_USAGE, "scope policy: network.%s[%zu] \"%s\": only 127.0.0.1 is relayed today", key, i, s);
		else if (!(v[i] = json_sprintf("%s:%u", host, (unsigned)port)))
			r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	if (!r)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 1; !r && i < n; i++)
		if (strcmp(json_string_value(v[i]), json_string_value(v[i - 1])) == 0)
			r = jig_err(e, JIG_E_USAGE, "scope policy: network.%s: \"%s\" is listed twice", key, json_string_value(v[i]));
	*out = r ? NULL : json_array();
	for (size_t i = 0; v && i < n; i++)
		if (v[i] && *out)
			json_array_append(*out, v[i]);
	for (size_t i = 0; v && i < n; i++)
		json_decref(v[i]);
	free(v);
	json_decref(arr);
	return r;
}

static int network_object(json_t *net, json_t **out, struct jig_error *e)
{
	static const char *const keys[] = {"loopback", "connect", "proxy", NULL};
	json_t *lo = NULL, *co = NULL;
	const char *proxy = NULL;
	int r = jig_json_only_keys(net, keys, "scope policy: network", e);
	if (!r && json_object_get(net, "proxy") && (r = jig_json_get_string(net, "proxy", "scope policy: network", &proxy, e)))
		return r;
	if (r || (r = endpoint_list(net, "loopback", true, JIG_POLICY_MAX_LOOPBACK, &lo, e)) ||
	    (r = endpoint_list(net, "connect", false, JIG_POLICY_MAX_CONNECT, &co, e)))
		goto out;
	char host[JIG_POLICY_MAX_ENDPOINT + 1];
	uint16_t port;
	if (json_array_size(lo) == 0 && json_array_size(co) == 0)
		r = jig_err(e, JIG_E_USAGE, "scope policy: network: an object grants loopback or connect entries; with none, say \"none\"");
	else if (json_array_size(co) && !proxy)
		r = jig_err(e, JIG_E_USAGE, "scope policy: network: connect entries need a \"proxy\" (127.0.0.1:PORT) where the scope reaches jig's CONNECT relay");
	else if (proxy && !json_array_size(co))
		r = jig_err(e, JIG_E_USAGE, "scope policy: network.proxy \"%s\": only with connect entries", proxy);
	else if (proxy && (jig_endpoint_split(proxy, host, sizeof(host), &port) < 0 || strcmp(host, LOOPBACK_HOST) != 0))
		r = jig_err(e, JIG_E_USAGE, "scope policy: network.proxy \"%s\": not 127.0.0.1:PORT (port 1-65535)", proxy);
	for (size_t i = 0; !r && proxy && i < json_array_size(lo); i++)
		if (strcmp(json_string_value(json_array_get(lo, i)), proxy) == 0)
			r = jig_err(e, JIG_E_USAGE, "scope policy: network.proxy \"%s\": is also a loopback entry; choose another port", proxy);
	if (!r && !(*out = json_pack("{s:O,s:O}", "loopback", lo, "connect", co)))
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
	if (!r && proxy && json_object_set_new(*out, "proxy", json_sprintf(LOOPBACK_HOST ":%u", (unsigned)port)))
		r = jig_err(e, JIG_E_INTERNAL, "out of memory");
out:
	json_decref(lo);
	json_decref(co);
	return r;
}

int jig_scope_network_parse(json_t *root, json_t **out, struct jig_error *e)
{
	*out = NULL;
	json_t *net = json_object_get(root, "network");
	const char *s = json_string_value(net);
	if (json_is_object(net))
		return network_object(net, out, e);
	if (!s)
		return jig_err(e, JIG_E_USAGE, "scope policy: \"network\" must be \"none\", \"host\" or an object {\"loopback\", \"connect\", \"proxy\"}");
	if (strcmp(s, "none") != 0 && strcmp(s, "host") != 0)
		return jig_err(e, JIG_E_USAGE, "scope policy: network \"%s\": must be \"none\" (private namespace), \"host\" or an object {\"loopback\", \"connect\", \"proxy\"}", s);
	*out = json_incref(net);
	return 0;
}

static int add_listener(struct jig_scope_policy *p, const char *ep)
{
	char host[JIG_POLICY_MAX_ENDPOINT + 1];
	uint16_t port;
	if (jig_endpoint_split(ep, host, sizeof(host), &port) < 0)
		return -1;
	p->listeners[p->n_listeners++] = (struct jig_scope_listener){.ipv4 = 0x7f000001u, .port = port};
	return 0;
}

int jig_scope_network_lower(struct jig_scope_policy *p, struct jig_error *e)
{
	json_t *net = json_object_get(p->doc, "network");
	if (json_is_string(net)) {
		p->network = strcmp(json_string_value(net), "host") == 0 ? JIG_NET_HOST : JIG_NET_NONE;
		return 0;
	}
	json_t *lo = json_object_get(net, "loopback"), *co = json_object_get(net, "connect");
	const char *proxy = json_string_value(json_object_get(net, "proxy"));
	p->network = JIG_NET_NONE;
	p->n_loopback = json_array_size(lo);
	p->n_connect = json_array_size(co);
	p->listeners = calloc(p->n_loopback + 1, sizeof(*p->listeners));
	p->connect = calloc(p->n_connect + 1, sizeof(*p->connect));
	if (!p->listeners || !p->connect)
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < p->n_loopback; i++)
		if (add_listener(p, json_string_value(json_array_get(lo, i))) < 0)
			return jig_err(e, JIG_E_INTERNAL, "network.loopback[%zu]: not an endpoint", i);
	for (size_t i = 0; i < p->n_connect; i++)
		p->connect[i] = json_string_value(json_array_get(co, i));
	if (proxy && add_listener(p, proxy) < 0)
		return jig_err(e, JIG_E_INTERNAL, "network.proxy: not an endpoint");
	p->proxy = proxy;
	return 0;
}
