/* The session's HTTPS chain: see httpschain.h. */
#include "session/httpschain.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/places.h"

int jig_https_url(const char *u, char *host, size_t cap, long *port)
{
	if (strncmp(u, "https://", 8) != 0)
		return -1;
	const char *h = u + 8, *slash = strchr(h, '/'), *end;
	if (!slash || strpbrk(u, " \t\r\n@?#\\") || !slash[1])
		return -1;
	if (h[0] == '[') { /* an IPv6 literal */
		const char *rb = memchr(h, ']', (size_t)(slash - h));
		if (!rb)
			return -1;
		end = rb + 1;
	} else
		for (end = h; end < slash && *end != ':'; end++)
			;
	size_t n = (size_t)(end - h);
	if (n == 0 || n >= cap || (h[0] != '[' && strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") < n))
		return -1;
	*port = 443;
	if (end < slash) {
		if (*end != ':' || end + 1 == slash || strspn(end + 1, "0123456789") != (size_t)(slash - end - 1) || slash - end > 6)
			return -1;
		*port = strtol(end + 1, NULL, 10);
		if (*port < 1 || *port > 65535)
			return -1;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	return 0;
}

const char *jig_https_host_of(json_t *hosts, const char *u)
{
	char host[300];
	long port;
	if (jig_https_url(u, host, sizeof(host), &port) < 0)
		return NULL;
	const char *alias;
	json_t *h;
	json_object_foreach(hosts, alias, h) {
		const char *mh = json_string_value(json_object_get(h, "host"));
		if (mh && strcasecmp(mh, host) == 0 && json_integer_value(json_object_get(h, "port")) == port)
			return alias;
	}
	return NULL;
}

int jig_https_host_check(const char *alias, json_t *h, json_t *repositories, struct jig_error *e)
{
	const char *cred = json_string_value(json_object_get(h, "credential"));
	int r = jig_session_operator_file("HTTPS", alias, "CA file", json_string_value(json_object_get(h, "ca_file")), false, repositories, e);
	return r || !cred ? r : jig_session_operator_file("HTTPS", alias, "credential file", cred, true, repositories, e);
}

int jig_https_chain_check(json_t *map_doc, json_t *repo, const char *context, struct jig_error *e)
{
	json_t *hosts = json_object_get(json_object_get(json_object_get(map_doc, "contexts"), context), "https_hosts"), *v;
	size_t i;
	int r = 0;
	json_array_foreach(json_object_get(repo, "git_remotes"), i, v) {
		const char *alias = jig_https_host_of(hosts, json_string_value(v));
		if (!alias || r)
			continue;
		r = jig_https_host_check(alias, json_object_get(hosts, alias), json_object_get(map_doc, "repositories"), e);
	}
	return r;
}
