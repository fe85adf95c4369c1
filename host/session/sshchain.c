/* The session's SSH chain: see sshchain.h. */
#include "session/sshchain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/session_policy.h" /* JIG_GIT_PROXY, JIG_GIT_CONNECT */
#include "session/places.h"
#include "util/crypto.h"

int jig_ssh_url_alias(const char *u, char *out, size_t cap)
{
	if (strncmp(u, "ssh://", 6) != 0)
		return -1;
	const char *h = u + 6, *at = strchr(h, '@'), *slash = strchr(h, '/');
	if (!slash)
		return -1;
	if (at && at < slash) {
		if (at == h || strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789._-") != (size_t)(at - h))
			return -1;
		h = at + 1;
	}
	size_t n = (size_t)(slash - h);
	if (n == 0 || n > 32 || n >= cap || strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n || h[0] == '-' || h[0] == '_')
		return -1;
	if (!slash[1] || strpbrk(slash, " \t\r\n"))
		return -1;
	memcpy(out, h, n);
	out[n] = '\0';
	return 0;
}

bool jig_ssh_url(const char *u)
{
	if (strncmp(u, "ssh://", 6) == 0 || strncmp(u, "git+ssh://", 10) == 0 || strncmp(u, "ssh+git://", 10) == 0)
		return true;
	if (strstr(u, "://")) /* another scheme's URL: "https:" is not scp-like host:path */
		return false;
	const char *colon = strchr(u, ':'), *slash = strchr(u, '/');
	return colon && colon != u && (!slash || colon < slash) && u[0] != '/';
}

static void b64(const unsigned char *in, size_t n, char *out, bool pad)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		if (i + 1 < n || pad)
			out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		if (i + 2 < n || pad)
			out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

static bool get_u32(const unsigned char *b, size_t len, size_t *at, uint32_t *v)
{
	if (len - *at < 4 || *at > len)
		return false;
	*v = (uint32_t)b[*at] << 24 | (uint32_t)b[*at + 1] << 16 | (uint32_t)b[*at + 2] << 8 | b[*at + 3];
	*at += 4;
	return true;
}

int jig_ssh_agent_match(const unsigned char *b, size_t len, const json_t *fingerprints, char *pubs, size_t cap)
{
	size_t at = 1, o = 0;
	uint32_t n;
	int hit = 0;
	if (len < 1 || b[0] != 12 /* SSH2_AGENT_IDENTITIES_ANSWER */ || !get_u32(b, len, &at, &n) || n > 1024)
		return -1;
	if (pubs && cap)
		pubs[0] = '\0';
	for (uint32_t k = 0; k < n; k++) {
		uint32_t bl, cl, tl;
		if (!get_u32(b, len, &at, &bl) || bl > len - at)
			return -1;
		const unsigned char *blob = b + at;
		at += bl;
		if (!get_u32(b, len, &at, &cl) || cl > len - at)
			return -1;
		at += cl;
		unsigned char d[JIG_SHA256_LEN];
		char fp[64] = "SHA256:";
		jig_sha256(blob, bl, d);
		b64(d, sizeof(d), fp + 7, false);
		size_t i, t = 0;
		json_t *v;
		bool ok = false;
		json_array_foreach(fingerprints, i, v) ok |= json_is_string(v) && strcmp(json_string_value(v), fp) == 0;
		if (!ok)
			continue;
		hit++;
		/* The key's type is the blob's first string. */
		if (!pubs || !get_u32(blob, bl, &t, &tl) || tl > bl - t || tl > 64 || o + tl + 2 + (bl + 2) / 3 * 4 + 2 > cap)
			continue;
		memcpy(pubs + o, blob + t, tl);
		o += tl;
		pubs[o++] = ' ';
		b64(blob, bl, pubs + o, true);
		o += strlen(pubs + o);
		pubs[o++] = '\n';
		pubs[o] = '\0';
	}
	return at == len ? hit : -1;
}

static bool full_io(int fd, void *buf, size_t n, bool wr)
{
	for (size_t d = 0; d < n;) {
		ssize_t k = wr ? write(fd, (char *)buf + d, n - d) : read(fd, (char *)buf + d, n - d);
		if (k <= 0 && !(k < 0 && errno == EINTR))
			return false;
		if (k > 0)
			d += (size_t)k;
	}
	return true;
}

/* The agent's answer to REQUEST_IDENTITIES into *out (malloc'd). */
static const char *ask_agent(const char *sock, unsigned char **out, size_t *len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path))
		return "its path is too long for a socket";
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 5};
	if (fd < 0)
		return strerror(errno);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;
		close(fd);
		return err == ECONNREFUSED ? "no agent answers there (a stale socket)" : strerror(err);
	}
	unsigned char req[5] = {0, 0, 0, 1, 11 /* SSH2_AGENTC_REQUEST_IDENTITIES */}, hdr[4];
	const char *why = NULL;
	uint32_t n = 0;
	/* send, never SIGPIPE: an agent that hung up is an answer, not jig's end */
	if (send(fd, req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req) || !full_io(fd, hdr, 4, false))
		why = "the agent did not answer";
	else if ((n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3]) == 0 ||
		 n > JIG_SSH_MAX_AGENT_REPLY)
		why = "the agent's answer is empty or too large";
	else if (!(*out = malloc(n)))
		why = "out of memory";
	else if (!full_io(fd, *out, n, false)) {
		why = "the agent's answer was cut short";
		free(*out);
		*out = NULL;
	}
	*len = n;
	close(fd);
	return why;
}

int jig_ssh_agent_check(const char *context, const char *sock, const char *alias, const json_t *fingerprints,
			json_t *repositories, char *pubs, size_t cap, struct jig_error *e)
{
	struct stat st;
	char dir[PATH_MAX];
	const char *why = NULL;
	snprintf(dir, sizeof(dir), "%s", sock);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	if (lstat(sock, &st) < 0)
		why = errno == ENOENT ? "missing: no agent was started there" : strerror(errno);
	else if (S_ISLNK(st.st_mode))
		why = "a symbolic link (never followed)";
	else if (!S_ISSOCK(st.st_mode))
		why = "not a socket";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	if (why)
		return jig_err(e, JIG_E_USAGE, "session: the %s context's ssh agent %s: %s; refused", context, sock, why);
	int r = jig_session_trusted_dirs(dir, "session: the ssh agent's directory", e);
	if (!r)
		r = jig_session_outside_repositories(repositories, NULL, sock, "session: the ssh agent", e);
	if (r)
		return r;
	unsigned char *reply = NULL;
	size_t len = 0;
	if ((why = ask_agent(sock, &reply, &len)))
		return jig_err(e, JIG_E_USAGE, "session: the %s context's ssh agent %s: %s; refused", context, sock, why);
	char none[1];
	int hit = jig_ssh_agent_match(reply, len, fingerprints, pubs ? pubs : none, pubs ? cap : 0);
	free(reply);
	if (hit < 0)
		return jig_err(e, JIG_E_USAGE, "session: the %s context's ssh agent %s: a malformed answer; refused", context, sock);
	if (hit == 0)
		return jig_err(e, JIG_E_USAGE, "session: the %s context's ssh agent %s holds none of the keys approved for %s (contexts.%s.ssh_hosts.%s.fingerprints); refused",
			       context, sock, alias, context, alias);
	return 0;
}

int jig_ssh_config_text(json_t *hosts, char *out, size_t cap)
{
	size_t o = 0;
	const char *alias;
	json_t *h;
	o += (size_t)snprintf(out, cap, "# jig's ssh configuration for the session's git (decision 236); nothing else is read\n");
	json_object_foreach(hosts, alias, h) {
		if (o >= cap)
			return -1;
		const char *host = json_string_value(json_object_get(h, "host"));
		int hn = (int)strlen(host);
		if (host[0] == '[') /* an IPv6 literal: ssh's HostName is unbracketed */
			host++, hn -= 2;
		o += (size_t)snprintf(out + o, cap - o,
				      "Host %s\n  HostName %.*s\n  Port %lld\n  UserKnownHostsFile " JIG_SSH_KNOWN_HOSTS_TARGET "/%s\n"
				      "  IdentityFile " JIG_SSH_DIR_TARGET "/%s.pub\n"
				      "  ProxyCommand " JIG_GIT_CONNECT " " JIG_GIT_PROXY " %s:%lld\n",
				      alias, hn, host, (long long)json_integer_value(json_object_get(h, "port")), alias, alias,
				      json_string_value(json_object_get(h, "host")), (long long)json_integer_value(json_object_get(h, "port")));
	}
	if (o < cap)
		o += (size_t)snprintf(out + o, cap - o,
				      "Host *\n  StrictHostKeyChecking yes\n  GlobalKnownHostsFile /dev/null\n  CheckHostIP no\n  UpdateHostKeys no\n"
				      "  IdentitiesOnly yes\n  IdentityAgent " JIG_SSH_AGENT_TARGET "\n  BatchMode yes\n  PasswordAuthentication no\n"
				      "  KbdInteractiveAuthentication no\n  HostbasedAuthentication no\n  ForwardAgent no\n  ForwardX11 no\n"
				      "  ClearAllForwardings yes\n  PermitLocalCommand no\n  ProxyCommand none\n  ProxyJump none\n"
				      "  ControlMaster no\n  ControlPath none\n  CanonicalizeHostname no\n  SendEnv GIT_PROTOCOL\n");
	return o < cap ? 0 : -1;
}

static int write_file(const char *dir, const char *name, const char *text, struct jig_error *e)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && full_io(fd, (void *)text, strlen(text), true);
	if (fd >= 0)
		close(fd);
	return ok ? 0 : jig_err(e, JIG_E_HOST, "session: %s: %s", p, strerror(errno));
}

void jig_ssh_chain_remove(const char *dir)
{
	DIR *d = dir[0] ? opendir(dir) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	if (dir[0])
		rmdir(dir);
}

int jig_ssh_chain_start(struct jig_ssh_chain *c, json_t *map_doc, json_t *repo, const char *context, const char *dir,
			struct jig_error *e)
{
	json_t *ctx = json_object_get(json_object_get(map_doc, "contexts"), context), *v;
	*c = (struct jig_ssh_chain){.context = context, .agent = json_string_value(json_object_get(ctx, "ssh_agent")),
				    .hosts = json_object_get(ctx, "ssh_hosts"), .repositories = json_object_get(map_doc, "repositories")};
	json_t *used = json_object();
	size_t i;
	json_array_foreach(json_object_get(repo, "git_remotes"), i, v) {
		char alias[64];
		if (jig_ssh_url_alias(json_string_value(v), alias, sizeof(alias)) == 0)
			json_object_set(used, alias, json_object_get(c->hosts, alias));
	}
	int r = 0;
	if (json_object_size(used) == 0) {
		json_decref(used);
		return 0;
	}
	static char pubs[16][8192];
	const char *alias;
	json_t *h;
	size_t k = 0;
	json_object_foreach(used, alias, h) {
		if (!r && !(r = jig_session_operator_file("SSH", alias, "known_hosts", json_string_value(json_object_get(h, "known_hosts")), false, c->repositories, e)))
			r = jig_ssh_agent_check(context, c->agent, alias, json_object_get(h, "fingerprints"), c->repositories, pubs[k],
						sizeof(pubs[k]), e);
		k++;
	}
	if (!dir) { /* the check alone (jig_session_prepare: a dry run refuses as the launch would) */
		json_decref(used);
		return r;
	}
	char *conf = malloc(1u << 16);
	if (!r && (!conf || jig_ssh_config_text(used, conf, 1u << 16) < 0))
		r = jig_err(e, JIG_E_INTERNAL, "session: jig's ssh configuration does not fit");
	if (!r && (mkdir(dir, 0700) < 0 || snprintf(c->dir, sizeof(c->dir), "%s", dir) >= (int)sizeof(c->dir)))
		r = jig_err(e, JIG_E_HOST, "session: jig's ssh directory %s: %s", dir, strerror(errno));
	if (!r)
		r = write_file(c->dir, "config", conf, e);
	k = 0;
	json_object_foreach(r ? NULL : used, alias, h) {
		char name[64];
		snprintf(name, sizeof(name), "%s.pub", alias);
		if (!r)
			r = write_file(c->dir, name, pubs[k], e);
		k++;
	}
	free(conf);
	json_decref(used);
	if (r) {
		jig_ssh_chain_remove(c->dir);
		c->dir[0] = '\0';
	}
	return r;
}
