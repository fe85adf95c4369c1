/* The session's command broker: see broker.h. */
#include "session/broker.h"

#include <dirent.h>
#include <netdb.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/gitcmd.h"
#include "session/httpschain.h"
#include "session/internal.h"
#include "session/sshchain.h"
#include "policy/scope_argv.h"
#include "sandbox/scope.h"
#include "util/fault.h"
#include "util/fileio.h"
#include "util/netaddr.h"

struct conf {
	struct jig_git_policy policy;
	const char *worktree;
	const json_t *remotes; /* the map's approved git_remotes (may be NULL) */
	const struct jig_session *s; /* the catalog, snapshot and verifier the git scope is composed from */
	const char *const *local; /* the approved remotes that are local paths: bound when git may reach a remote */
	const struct jig_ssh_chain *ssh; /* the context's agent and SSH hosts, jig's ssh directory */
	json_t *https_hosts, *repositories; /* the context's HTTPS hosts, the map's repositories */
	const char *git_copy; /* the pinned git's private copy at the id slot (decision 312) */
	const char *id;	      /* the session's id */
};

/* What an SSH request gets in its git scope (decisions 236, 310): exactly
 * its hosts' HOST:PORT through jig's CONNECT relay, jig's ssh directory, each host's known_hosts and
 * the context's agent socket, read-only. */
#define MAX_SSH 8
struct git_net {
	size_t n; /* SSH hosts the request reaches */
	char alias[MAX_SSH][40];
	json_t *network;
	struct jig_scope_bind ro[3 * MAX_SSH + 2];
	size_t n_ro;
	char kh[MAX_SSH][80];
	/* HTTPS hosts (decision 291): aliases, their CA and credential
	 * targets, jig's git configuration for the scope's environment. */
	size_t nh;
	const char *halias[MAX_SSH];
	char ca[MAX_SSH][80], cred[MAX_SSH][80];
};

/* The request's network (decision 310): jig's CONNECT relay inside the
 * scope, allowing exactly the hosts' HOST:PORT and nothing else. */
static json_t *relay_grants(struct git_net *net)
{
	if (!net->network)
		net->network = json_pack("{s:o,s:s}", "connect", json_array(), "proxy", JIG_GIT_PROXY);
	return json_object_get(net->network, "connect");
}

/* HOST:PORT of the map's host h, granted to the request's relay. */
static void grant(struct git_net *net, json_t *h)
{
	json_array_append_new(relay_grants(net), json_sprintf("%s:%lld", json_string_value(json_object_get(h, "host")),
							      (long long)json_integer_value(json_object_get(h, "port"))));
}

/* Configuration that wins over the repository's (the command line's -c is
 * Git's highest precedence): nothing Git would run on jig's side. */
static const char *const forced[] = {
	"core.hooksPath=/dev/null", "core.fsmonitor=false", "core.sshCommand=false", "credential.helper=",
	"core.askPass=/bin/false", "core.pager=cat", "core.editor=false", "sequence.editor=false",
	"protocol.allow=never", "protocol.file.allow=always",
	"http.followRedirects=false", "submodule.recurse=false", "fetch.recurseSubmodules=false",
	"push.recurseSubmodules=no", "commit.gpgSign=false", "tag.gpgSign=false", "gpg.program=false", NULL};
#define N_FORCED (sizeof(forced) / sizeof(forced[0]) - 1)

static void say(int fd, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0) {
	}
}

/* A host the relay may dial for a request (decision 310): an IP literal is
 * the map's own exact choice (the map refuses this host's and link-local
 * ones but 127.0.0.1); a name is resolved here, outside the scope, and
 * refused with one line when it does not resolve or any answer is this
 * host's, link-local or unspecified (the relay checks its own answer
 * again when it dials). */
static int host_reachable(const char *kind, const char *alias, const char *host, const char *sub, int err)
{
	struct sockaddr_storage lit;
	/* The test-only fault skips this check: the relay's own holds
	 * (session_broker.git_remote). */
	if (jig_addr_literal(host, strlen(host), &lit) == 1 || JIG_FAULT_FAILS("session broker host check"))
		return 0;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int g = getaddrinfo(host, NULL, &hints, &res);
	if (g != 0) {
		say(err, "jig: git %s: %s host %s (%s) does not resolve: %s; refused", sub, kind, alias, host, gai_strerror(g));
		return -1;
	}
	const char *why = NULL;
	for (struct addrinfo *a = res; a && !why; a = a->ai_next)
		why = jig_addr_local(a->ai_addr);
	freeaddrinfo(res);
	if (why) {
		say(err, "jig: git %s: %s host %s (%s) resolves to a refused address (%s): a remote host is never this host; refused", sub, kind,
		    alias, host, why);
		return -1;
	}
	return 0;
}

/* In the request's child: the pinned git with jig's -c, then args, in its
 * own scope (jig_launch, the sandbox module), on the descriptors io. Its
 * exit status, 128+n for a signal, or 126 with one line on io[2]. */
static int git_scoped(const struct conf *c, const char *cwd, const int io[3], const char *const *args, size_t n,
		      const char *const *remotes, const struct git_net *net)
{
	const char *call[2 * N_FORCED + JIG_BROKER_MAX_ARGS + 3], *argv[2 * N_FORCED + JIG_BROKER_MAX_ARGS + 10];
	size_t k = 0;
	bool ssh = net && net->n, https = net && net->nh;
	for (size_t i = 0; i < N_FORCED; i++) {
		/* An HTTPS request's helpers are reset in its environment, then
		 * jig's added (decision 291): a later -c reset would drop them. */
		if (https && strcmp(forced[i], "credential.helper=") == 0)
			continue;
		call[k++] = "-c";
		/* jig's ssh, with jig's configuration, only for a checked SSH request */
		call[k++] = ssh && strcmp(forced[i], "core.sshCommand=false") == 0 ? "core.sshCommand=" JIG_SSH_COMMAND : forced[i];
	}
	if (ssh) {
		call[k++] = "-c";
		call[k++] = "protocol.ssh.allow=always";
	}
	for (size_t i = 0; i < n && k < sizeof(call) / sizeof(call[0]); i++)
		call[k++] = args[i];
	/* One name: the Plan's git scope is this one (its cgroup is below a
	 * per-launch jig-<pid>-<n> directory, so requests never collide). */
	const char *name = JIG_SESSION_GIT_KIND;
	struct jig_scope_template t;
	struct jig_sandbox sb;
	struct jig_error e = {0};
	const struct jig_session *ss = c->s;
	struct jig_session_git_facts gf = {.name = name, .snapshot_dir = ss->snap.dirpath, .home = jig_caller_home(),
					   .worktree = ss->w.worktree, .git_dir = ss->w.common_dir, .rw = ss->w.rw, .cwd = cwd,
					   .remotes = remotes, .network = ssh || https ? net->network : NULL,
					   .ro = ssh || https ? net->ro : NULL, .n_ro = ssh || https ? net->n_ro : 0, .ssh = ssh,
					   .https = https, .https_hosts = c->https_hosts,
					   .https_aliases = https ? net->halias : NULL, .n_https = https ? net->nh : 0,
					   .git_copy = c->git_copy};
	struct jig_scope_template tmpl;
	int init_fd = -1, r = jig_session_git_compose(&ss->cat, &gf, &tmpl, &e);
	if (!r && (r = jig_session_instance(&tmpl, c->id, jig_caller_home(), &t, &e)) == 0 &&
	    (r = jig_scope_argv(&t, call, k, argv, sizeof(argv) / sizeof(argv[0]), &e)) == 0 &&
	    (r = jig_sandbox_open(&sb, &c->s->snap, &e)) == 0) {
		if ((init_fd = jig_verifier_open((struct jig_verifier *)&c->s->v, &c->s->snap, JIG_SESSION_INIT_FILE, &e)) < 0)
			r = init_fd;
		const struct jig_scope_slot slots[] = {{"stdin", io[0]}, {"stdout", io[1]}, {"stderr", io[2]}};
		struct jig_scope_result res;
		struct jig_launch st = {.sb = &sb, .t = &t, .run = {.slots = slots, .n_slots = 3},
					.l = {.init_fd = init_fd, .argv = argv, .abort_fd = -1}, .stop = JIG_LAUNCH_STOP_NONE};
		if (!r && (r = jig_launch(&st, &res, &e)) == 0) {
			if (res.held_fd >= 0)
				close(res.held_fd);
			jig_sandbox_close(&sb);
			if (res.exit_status >= 0 && !res.signal)
				return res.exit_status;
			if (res.signal)
				return 128 + res.signal;
			say(io[2], "jig: git: its scope failed: %s", res.error[0] ? res.error : jig_scope_outcome_name(res.outcome));
			return JIG_BROKER_REFUSED;
		}
		jig_sandbox_close(&sb);
	}
	say(io[2], "jig: git: cannot start its scope: %s", e.msg);
	return JIG_BROKER_REFUSED;
}

/* The scoped git in a child of the request. Returns its pid, or -1. */
static pid_t spawn_git(const struct conf *c, const char *cwd, const int io[3], const char *const *args, size_t n,
		       const char *const *remotes, const struct git_net *net)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
	_exit(git_scoped(c, cwd, io, args, n, remotes, net));
}

static int wait_status(pid_t pid, int conn)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p[2] = {{.fd = pfd, .events = POLLIN}, {.fd = conn, .events = POLLRDHUP}};
	while (pfd >= 0 && poll(p, 2, -1) >= 0 && !p[0].revents)
		if (p[1].revents) { /* the shim is gone: so is its command */
			kill(pid, SIGTERM);
			p[1].fd = -1;
		}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return JIG_BROKER_REFUSED;
	if (pfd >= 0)
		close(pfd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A directory's physical path (from its descriptor). */
static bool inside(int fd, const char *worktree, char *path, size_t cap)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, cap - 1);
	if (n < 0)
		return false;
	path[n] = '\0';
	size_t w = strlen(worktree);
	return strncmp(path, worktree, w) == 0 && (path[w] == '/' || path[w] == '\0');
}

/* The repository's remote configuration as the pinned git reads it
 * (jig's environment, no pager): "key\nvalue\0" entries, or NULL. */
static char *remote_config(const struct conf *c, const char *dir, const char *pattern, bool scoped, size_t *len)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	const char *const plain[] = {"config", "-z", "--get-regexp", pattern, NULL};
	const char *const with_scope[] = {"config", "-z", "--show-scope", "--get-regexp", pattern, NULL};
	const char *const *args = scoped ? with_scope : plain;
	int io[3] = {nul, p[1], nul};
	pid_t pid = spawn_git(c, dir, io, args, scoped ? 5 : 4, NULL, NULL);
	close(p[1]);
	close(nul);
	size_t cap = 1u << 20, got = 0;
	char *buf = malloc(cap + 1);
	ssize_t n = 1;
	while (buf && got < cap && (n = read(p[0], buf + got, cap - got)) != 0)
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			break;
	close(p[0]);
	if (buf && (n != 0 || got >= cap)) { /* an error, or more than a repository's remotes need */
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[got] = '\0';
	*len = got;
	int st;
	waitpid(pid, &st, 0);
	/* 1: no such key (no remote at all) */
	if (pid < 0 || !WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool https_url(const char *u)
{
	return strncmp(u, "https://", 8) == 0;
}

/* An approved https:// URL: its host of the context's https_hosts (the
 * map's check made sure there is one; decision 290). */
static int need_https(const struct conf *c, struct git_net *net, const char *url, const char *sub, int err)
{
	const char *alias = jig_https_host_of(c->https_hosts, url);
	if (!alias) {
		say(err, "jig: git %s: %s is not an HTTPS host of the session's context (https_hosts); refused", sub, url);
		return -1;
	}
	for (size_t i = 0; i < net->nh; i++)
		if (strcmp(net->halias[i], alias) == 0)
			return 0;
	if (net->nh == MAX_SSH) {
		say(err, "jig: git %s: more than %d HTTPS hosts in one command; refused", sub, MAX_SSH);
		return -1;
	}
	net->halias[net->nh++] = alias;
	return 0;
}

/* A remote Git would reach: its name (or NULL: every remote) in the
 * repository's configuration, or an approved URL. */
static int need_ssh(struct git_net *net, const char *url, const char *sub, int err)
{
	char alias[40];
	if (jig_ssh_url_alias(url, alias, sizeof(alias)) < 0) { /* the map approves ssh:// URLs only */
		say(err, "jig: git %s: %s: only ssh://[USER@]ALIAS/PATH remotes of the map reach SSH; refused", sub, url);
		return -1;
	}
	for (size_t i = 0; i < net->n; i++)
		if (strcmp(net->alias[i], alias) == 0)
			return 0;
	if (net->n == MAX_SSH) {
		say(err, "jig: git %s: more than %d SSH hosts in one command; refused", sub, MAX_SSH);
		return -1;
	}
	snprintf(net->alias[net->n++], sizeof(net->alias[0]), "%s", alias);
	return 0;
}

static int check_remote(const struct conf *c, const char *dir, const char *remote, const char *sub, int err, struct git_net *net)
{
	if (remote && jig_git_remote_approved(c->remotes, remote))
		return https_url(remote) ? need_https(c, net, remote, sub, err) : jig_ssh_url(remote) ? need_ssh(net, remote, sub, err) : 0;
	size_t len, nurls = 0;
	char *cfg = remote_config(c, dir, "^(remote|url)\\.", false, &len);
	if (!cfg) {
		say(err, "jig: git %s: the repository's remotes could not be read; refused", sub);
		return -1;
	}
	int r = 0;
	size_t rn = remote ? strlen(remote) : 0;
	/* the next entry is found before this one is split at its newline */
	for (char *k = cfg, *next; !r && k < cfg + len; k = next) {
		next = k + strlen(k) + 1;
		char *v = strchr(k, '\n');
		if (v)
			*v++ = '\0';
		if (strncmp(k, "url.", 4) == 0) {
			say(err, "jig: git %s: %s rewrites remote URLs; not honoured in a session, refused", sub, k);
			r = -1;
			continue;
		}
		const char *name = k + 7, *dot = strrchr(k, '.'); /* "remote." */
		if (remote && !((size_t)(dot - name) == rn && strncmp(name, remote, rn) == 0))
			continue;
		const char *key = dot + 1;
		if (strcmp(key, "url") == 0 || strcmp(key, "pushurl") == 0) {
			nurls++;
			if (!v || !jig_git_remote_approved(c->remotes, v)) {
				say(err, "jig: git %s: remote \"%.*s\" (%s) is not one of the map's approved git_remotes; refused", sub,
				    (int)(dot - name), name, v ? v : "");
				r = -1;
			} else if (https_url(v)) {
				if (need_https(c, net, v, sub, err) < 0)
					r = -1;
			} else if (jig_ssh_url(v) && need_ssh(net, v, sub, err) < 0)
				r = -1;
		} else if (strcmp(key, "fetch") != 0 && strcmp(key, "push") != 0 && strcmp(key, "tagopt") != 0 &&
			   strcmp(key, "prune") != 0 && strcmp(key, "prunetags") != 0) {
			say(err, "jig: git %s: %s is not honoured in a session; refused", sub, k);
			r = -1;
		}
	}
	free(cfg);
	if (!r && remote && nurls == 0) {
		say(err, "jig: git %s: \"%.200s\" is neither a remote of this repository nor one of the map's approved git_remotes; refused", sub, remote);
		r = -1;
	}
	return r;
}

/* An SSH request's scope facts (decisions 236, 310): each host of the
 * context with its known_hosts, the agent checked again (the socket may
 * have been replaced since the launch), the network exactly the hosts'
 * HOST:PORT through the relay. */
static int ssh_facts(const struct conf *c, struct git_net *net, const char *sub, int err)
{
	const struct jig_ssh_chain *ch = c->ssh;
	if (!ch->dir[0]) {
		say(err, "jig: git %s: the session has no SSH chain (no SSH remote in the map); refused", sub);
		return -1;
	}
	net->ro[net->n_ro++] = (struct jig_scope_bind){.source = ch->dir, .target = JIG_SSH_DIR_TARGET};
	net->ro[net->n_ro++] = (struct jig_scope_bind){.source = ch->agent, .target = JIG_SSH_AGENT_TARGET};
	for (size_t i = 0; i < net->n; i++) {
		json_t *h = json_object_get(ch->hosts, net->alias[i]);
		const char *host = json_string_value(json_object_get(h, "host"));
		struct jig_error e = {0};
		if (!host || host_reachable("SSH", net->alias[i], host, sub, err) < 0)
			return -1;
		if (jig_ssh_agent_check(ch->context, ch->agent, net->alias[i], json_object_get(h, "fingerprints"), ch->repositories, NULL, 0, &e) < 0) {
			say(err, "jig: git %s: %s", sub, strncmp(e.msg, "session: ", 9) == 0 ? e.msg + 9 : e.msg);
			return -1;
		}
		grant(net, h);
		snprintf(net->kh[i], sizeof(net->kh[i]), JIG_SSH_KNOWN_HOSTS_TARGET "/%s", net->alias[i]);
		net->ro[net->n_ro++] = (struct jig_scope_bind){.source = json_string_value(json_object_get(h, "known_hosts")), .target = net->kh[i]};
	}
	return 0;
}

/* An HTTPS request's scope facts (decision 291): the repository's own
 * configuration names no http.*, credential.* or include (they would
 * choose the TLS trust, a proxy or a helper), each host's files checked
 * again, the network exactly the hosts' HOST:PORT through the relay, the CA and
 * credential files read-only, jig's configuration in the environment. */
static int https_facts(const struct conf *c, const char *dir, struct git_net *net, const char *sub, int err)
{
	size_t len;
	/* "SCOPE\0KEY\nVALUE\0" entries; jig's own -c are scope "command" */
	char *cfg = remote_config(c, dir, "^(http|credential|include|includeif)\\.", true, &len);
	if (!cfg) {
		say(err, "jig: git %s: the repository's configuration could not be read; refused", sub);
		return -1;
	}
	for (char *k = cfg; k < cfg + len; k += strlen(k) + 1) {
		bool command = strcmp(k, "command") == 0;
		k += strlen(k) + 1;
		if (k >= cfg + len || command)
			continue;
		char *v = strchr(k, '\n');
		if (v)
			*v = '\0';
		say(err, "jig: git %s: %s in the repository's configuration is not honoured for an HTTPS remote (TLS, proxy and credentials are jig's); refused", sub, k);
		free(cfg);
		return -1;
	}
	free(cfg);
	for (size_t i = 0; i < net->nh; i++) {
		json_t *h = json_object_get(c->https_hosts, net->halias[i]);
		const char *host = json_string_value(json_object_get(h, "host")), *cred = json_string_value(json_object_get(h, "credential"));
		struct jig_error e = {0};
		if (!host || host_reachable("HTTPS", net->halias[i], host, sub, err) < 0)
			return -1;
		if (jig_https_host_check(net->halias[i], h, c->repositories, &e) < 0) {
			say(err, "jig: git %s: %s", sub, strncmp(e.msg, "session: ", 9) == 0 ? e.msg + 9 : e.msg);
			return -1;
		}
		grant(net, h);
		snprintf(net->ca[i], sizeof(net->ca[i]), JIG_HTTPS_CA_TARGET "/%s", net->halias[i]);
		net->ro[net->n_ro++] = (struct jig_scope_bind){.source = json_string_value(json_object_get(h, "ca_file")), .target = net->ca[i]};
		if (cred) {
			snprintf(net->cred[i], sizeof(net->cred[i]), JIG_HTTPS_CRED_TARGET "/%s", net->halias[i]);
			net->ro[net->n_ro++] = (struct jig_scope_bind){.source = cred, .target = net->cred[i]};
		}
	}
	return 0;
}

/* One request on conn: the shim's argv, cwd and descriptors. Returns the
 * exit status sent back. */
static int serve(const struct conf *c, int conn)
{
	static char buf[JIG_BROKER_MAX_REQ + 1];
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b)};
	struct ucred uc;
	socklen_t ul = sizeof(uc);
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || uc.uid != getuid())
		return JIG_BROKER_REFUSED;
	ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	int io[3] = {-1, -1, -1}, nfd = 0;
	for (struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; h; h = CMSG_NXTHDR(&mh, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, nfd++) {
				int fd;
				memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
				if (nfd < 3)
					io[nfd] = fd;
				else
					close(fd);
			}
	/* Without its three descriptors there is nowhere to say why. */
	if (n <= 0 || nfd != 3 || (mh.msg_flags & MSG_CTRUNC))
		return JIG_BROKER_REFUSED;
	int err = io[2];
	if ((size_t)n > JIG_BROKER_MAX_REQ || (mh.msg_flags & MSG_TRUNC) || buf[n - 1] != '\0') {
		say(err, "jig: git: the request is larger than %u bytes; refused", JIG_BROKER_MAX_REQ);
		return JIG_BROKER_REFUSED;
	}
	const char *field[JIG_BROKER_MAX_ARGS + 3];
	size_t nf = 0;
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		if (nf == sizeof(field) / sizeof(field[0])) {
			say(err, "jig: git: more than %d arguments; refused", JIG_BROKER_MAX_ARGS - 1);
			return JIG_BROKER_REFUSED;
		}
		field[nf++] = p;
	}
	if (nf < 3 || strcmp(field[0], JIG_BROKER_PROTO) != 0 || strlen(field[1]) >= PATH_MAX || field[1][0] != '/') {
		say(err, "jig: git: a malformed request; refused");
		return JIG_BROKER_REFUSED;
	}
	const char *cwd = field[1], *const *argv = field + 2;
	int argc = (int)(nf - 2);
	if (strcmp(argv[0], "ssh") == 0) {
		say(err, "jig: ssh is not available in a session: Git reaches remotes through jig");
		return JIG_BROKER_REFUSED;
	}
	if (strcmp(argv[0], "git") != 0) {
		say(err, "jig: %.64s: not a command jig brokers; refused", argv[0]);
		return JIG_BROKER_REFUSED;
	}
	struct jig_git_checked ck;
	struct jig_error e = {0};
	if (jig_git_check(&c->policy, argc, argv, &ck, &e) < 0) {
		say(err, "jig: %s", e.msg);
		return JIG_BROKER_REFUSED;
	}
	char path[PATH_MAX];
	int dir = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0 && ck.cdir) {
		int d2 = openat(dir, ck.cdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(dir);
		dir = d2;
	}
	if (dir < 0 || !inside(dir, c->worktree, path, sizeof(path))) {
		say(err, "jig: git%s: runs only inside the session's worktree %s; refused", ck.cdir ? " -C" : "", c->worktree);
		if (dir >= 0)
			close(dir);
		return JIG_BROKER_REFUSED;
	}
	close(dir);
	/* The remote check is policy; the scope below is what holds if it
	 * were wrong: the test-only fault skips it (session_broker). */
	struct git_net net = {0};
	if (ck.network && !JIG_FAULT_FAILS("session broker remote check") && check_remote(c, path, ck.remote, argv[ck.sub], err, &net) < 0)
		return JIG_BROKER_REFUSED;
	if (net.n && ssh_facts(c, &net, argv[ck.sub], err) < 0)
		return JIG_BROKER_REFUSED;
	if (net.nh && https_facts(c, path, &net, argv[ck.sub], err) < 0)
		return JIG_BROKER_REFUSED;
	/* -C is done: the rest from the subcommand (or --version). */
	int from = ck.sub > 0 ? ck.sub : argc - 1;
	pid_t pid = spawn_git(c, path, io, argv + from, (size_t)(argc - from), ck.network ? c->local : NULL, &net);
	if (pid < 0) {
		say(err, "jig: git: cannot start: %s", strerror(errno));
		return JIG_BROKER_REFUSED;
	}
	return wait_status(pid, conn);
}

static void broker_loop(const struct conf *c, int lfd, pid_t parent)
{
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (getppid() != parent)
			_exit(0);
		if (conn < 0)
			continue;
		pid_t h = fork();
		if (h == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			signal(SIGCHLD, SIG_DFL);
			close(lfd);
			int st = serve(c, conn);
			uint32_t w = (uint32_t)st;
			if (send(conn, &w, sizeof(w), MSG_NOSIGNAL) < 0) {
			}
			_exit(0);
		}
		close(conn);
	}
}

static int load_policy(const struct jig_session *s, struct conf *c, struct jig_error *e)
{
	int fd = jig_snapshot_open_listed(&s->snap, JIG_GIT_POLICY_FILE, true, e);
	if (fd < 0)
		return jig_err(e, JIG_E_INTEGRITY, "session: the snapshot's git command policy (%s): %s; reinstall jig", JIG_GIT_POLICY_FILE, e->msg);
	char *buf = NULL;
	size_t len;
	int r = jig_read_fd(fd, JIG_GIT_POLICY_MAX_BYTES, JIG_GIT_POLICY_FILE, &buf, &len, NULL, e);
	close(fd);
	if (!r)
		r = jig_git_policy_parse(buf, len, &c->policy, e);
	free(buf);
	return r;
}

int jig_broker_git_copy_path(const char *broker_dir, const char *id, char *out, size_t cap)
{
	const char *slot = strstr(broker_dir, "/" JIG_SESSION_ID_SLOT "/");
	if (!slot || snprintf(out, cap, "%.*s/%s/git", (int)(slot - broker_dir), broker_dir, id) >= (int)cap)
		return -1;
	return 0;
}

/* The private copy dst (new, in the session's own 0700 directory): exactly
 * buf, 0500. */
static int keep_copy(const char *dst, const char *buf, size_t len, struct jig_error *e)
{
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
	bool ok = fd >= 0;
	for (size_t o = 0; ok && o < len;) {
		ssize_t k = write(fd, buf + o, len - o);
		if (k < 0 && errno == EINTR)
			continue;
		ok = k > 0;
		o += ok ? (size_t)k : 0;
	}
	ok = ok && fchmod(fd, 0500) == 0;
	int err = errno;
	if (fd >= 0)
		close(fd);
	if (!ok) {
		unlink(dst);
		return jig_err(e, JIG_E_HOST, "session: the pinned git's copy %s: %s", dst, strerror(err));
	}
	return 0;
}

/* The pinned git: opened once, hashed from that descriptor; with copy (a
 * new file's path), those very bytes kept as the private copy every
 * request runs (decision 312). */
static int open_git(struct jig_broker *b, const char *copy, struct jig_error *e)
{
	int fd = open(JIG_BROKER_GIT, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len;
	if (fd < 0)
		return jig_err(e, JIG_E_HOST, "session: %s: %s; the session's git needs it", JIG_BROKER_GIT, strerror(errno));
	int r = jig_read_fd(fd, 256u << 20, JIG_BROKER_GIT, &buf, &len, NULL, e);
	if (r) {
		close(fd);
		return r;
	}
	jig_sha256_hex(buf, len, b->git_sha256);
	if (copy)
		r = keep_copy(copy, buf, len, e);
	free(buf);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

/* path and each missing parent: created 0700, never a link; the last new
 * and the caller's. */
static int make_dir(char *path, struct jig_error *e)
{
	for (char *c = path + 1;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char keep = *c;
		*c = '\0';
		struct stat st;
		int made = mkdir(path, 0700);
		if ((made < 0 && (errno != EEXIST || !keep)) || lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
			int r = jig_err(e, JIG_E_HOST, "session: the broker's directory %s: %s", path,
					made < 0 && errno ? strerror(errno) : "not a directory (a link is never followed)");
			*c = keep;
			return r;
		}
		*c = keep;
		if (!keep)
			return st.st_uid == geteuid() ? 0 : jig_err(e, JIG_E_HOST, "session: %s is not yours; refused", path);
	}
}

/* Removes a broker directory's files, the directory and its <id> parent. */
static void remove_dir(char *dir)
{
	static const char *const files[] = {"sock", "gitconfig", NULL};
	char p[PATH_MAX + 16];
	for (const char *const *f = files; *f; f++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *f);
		unlink(p);
	}
	rmdir(dir);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		snprintf(p, sizeof(p), "%s/ssh", dir); /* jig's ssh directory (sshchain.h) */
		jig_ssh_chain_remove(p);
		snprintf(p, sizeof(p), "%s/git", dir); /* the pinned git's copy (decision 312) */
		unlink(p);
		rmdir(dir); /* .../sessions/<id> */
		*slash = '/';
	}
}

/* The broker directories of sessions that are gone (jig killed): an id
 * whose runtime directory the runtime sweep has removed, or never had. */
static void sweep(const char *sessions, const char *runtime)
{
	DIR *d = opendir(sessions);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		char p[PATH_MAX + 64], rt[PATH_MAX + 64];
		struct stat st;
		if (strlen(de->d_name) != 32 || strspn(de->d_name, "0123456789abcdef") != 32)
			continue;
		if (snprintf(rt, sizeof(rt), "%s/jig/sessions/%s", runtime, de->d_name) >= (int)sizeof(rt) || lstat(rt, &st) == 0 ||
		    errno != ENOENT)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s/broker", sessions, de->d_name) < (int)sizeof(p))
			remove_dir(p);
	}
	if (d)
		closedir(d);
}

void jig_broker_git_sha256(char out[JIG_SHA256_HEX])
{
	struct jig_broker b = {.pid = -1};
	struct jig_error e = {0};
	int fd = open_git(&b, NULL, &e);
	if (fd >= 0)
		close(fd);
	snprintf(out, JIG_SHA256_HEX, "%s", fd >= 0 ? b.git_sha256 : "");
}

int jig_broker_start(struct jig_broker *b, const struct jig_session *s, const char *id, struct jig_error *e)
{
	b->pid = -1;
	struct conf c = {.worktree = s->w.worktree, .remotes = json_object_get(s->w.repo, "git_remotes"), .s = s};
	/* The approved local remotes (a path or file:// URL): the binds a
	 * fetch, pull or push gets in the git scope. */
	static const char *local[JIG_BROKER_MAX_REMOTES + 1];
	size_t nl = 0, i;
	json_t *v;
	json_array_foreach(c.remotes, i, v) {
		const char *u = json_string_value(v);
		if (u && strncmp(u, "file://", 7) == 0)
			u += 7;
		if (u && u[0] == '/' && nl < JIG_BROKER_MAX_REMOTES && access(u, F_OK) == 0)
			local[nl++] = u;
	}
	local[nl] = NULL;
	c.local = local;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *slot = strstr(s->broker_dir, "/" JIG_SESSION_ID_SLOT "/");
	if (!slot || snprintf(b->dir, sizeof(b->dir), "%.*s/%s%s", (int)(slot - s->broker_dir), s->broker_dir, id,
			      slot + strlen(JIG_SESSION_ID_SLOT) + 1) >= (int)sizeof(b->dir) ||
	    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", b->dir) >= (int)sizeof(sa.sun_path)) {
		b->dir[0] = '\0';
		return jig_err(e, JIG_E_USAGE, "session: the broker's socket path %s/sock is too long", s->broker_dir);
	}
	char sessions[PATH_MAX];
	snprintf(sessions, sizeof(sessions), "%.*s", (int)(slot - s->broker_dir), s->broker_dir);
	sweep(sessions, s->runtime);
	int r = load_policy(s, &c, e);
	if (r)
		return r;
	int lfd = -1;
	/* The SSH chain (decision 235): checked before the launch, jig's ssh
	 * directory beside the broker's (never bound into the agent's scope). */
	static struct jig_ssh_chain ssh;
	char ssh_dir[PATH_MAX];
	snprintf(ssh_dir, sizeof(ssh_dir), "%.*s/ssh", (int)(strrchr(b->dir, '/') - b->dir), b->dir);
	c.ssh = &ssh;
	c.https_hosts = json_object_get(json_object_get(json_object_get(s->map.doc, "contexts"), s->w.context), "https_hosts");
	c.repositories = json_object_get(s->map.doc, "repositories");
	int git_fd = -1;
	if ((r = make_dir(b->dir, e)) < 0)
		;
	else if (jig_broker_git_copy_path(s->broker_dir, id, b->git_copy, sizeof(b->git_copy)) < 0)
		r = jig_err(e, JIG_E_USAGE, "session: the pinned git's copy: its path is too long");
	else if ((git_fd = open_git(b, b->git_copy, e)) < 0)
		r = git_fd;
	else if ((r = jig_ssh_chain_start(&ssh, s->map.doc, s->w.repo, s->w.context, ssh_dir, e)) < 0)
		;
	else if ((lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0 ||
		 bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 || listen(lfd, 16) < 0)
		r = jig_err(e, JIG_E_HOST, "session: the broker's socket %s: %s", sa.sun_path, strerror(errno));
	if (git_fd >= 0)
		close(git_fd);
	/* Requests compose the Plan's scope (the copy at the id slot), then
	 * its instance for this id (decision 312). */
	static char copy_slot[PATH_MAX];
	jig_broker_git_copy_path(s->broker_dir, JIG_SESSION_ID_SLOT, copy_slot, sizeof(copy_slot));
	c.git_copy = copy_slot;
	c.id = id;
	pid_t parent = getpid();
	if (!r && (b->pid = fork()) < 0)
		r = jig_err(e, JIG_E_HOST, "session: cannot start the broker: %s", strerror(errno));
	if (!r && b->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_IGN);
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul >= 0 && (dup2(nul, 0) < 0 || dup2(nul, 1) < 0))
			_exit(1);
		broker_loop(&c, lfd, parent);
	}
	if (lfd >= 0)
		close(lfd);
	jig_git_policy_free(&c.policy);
	return r;
}

void jig_broker_stop(struct jig_broker *b)
{
	if (b->pid > 0) {
		kill(b->pid, SIGKILL);
		while (waitpid(b->pid, NULL, 0) < 0 && errno == EINTR) {
		}
	}
	b->pid = -1;
	if (!b->dir[0])
		return;
	remove_dir(b->dir);
	b->dir[0] = '\0';
}
