/* The relays of a scope's exact network grant: see netrelay.h.
 *
 * One thread polls the module's listening sockets (inside the scope's
 * network namespace), a wake pipe and at most JIG_NETRELAY_MAX_CONNS
 * connections, each a fixed pair of JIG_NETRELAY_BUF buffers allocated
 * once at start: nothing grows with traffic. A connection is
 *
 *   HEAD  (proxy only) reading one CONNECT request head, with a deadline
 *   DIAL  connecting to the host's endpoint (non-blocking), with a deadline
 *   RELAY bytes both ways, unparsed; a half-close is passed on
 *
 * The proxy resolves a granted name with getaddrinfo (blocking this
 * thread for the resolver's own timeout, at most: decision 140). */
#include "sandbox/netrelay.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/limits.h"
#include "util/netaddr.h"

#define MAX_LISTENERS (JIG_POLICY_MAX_LOOPBACK + 1)

enum conn_state { C_FREE = 0, C_HEAD, C_DIAL, C_RELAY };

struct half {
	char buf[JIG_NETRELAY_BUF];
	size_t len;
	bool eof, shut;
};

struct conn {
	enum conn_state st;
	int in, out;	    /* the scope's end (accepted), the host's end */
	bool proxy;	    /* from the proxy endpoint: answer the CONNECT when connected */
	struct half up;	    /* scope -> host */
	struct half down;   /* host -> scope */
	long long deadline; /* HEAD and DIAL */
};

struct jig_netrelay {
	const struct jig_scope_policy *p;
	pthread_mutex_t mu;
	int lfd[MAX_LISTENERS]; /* under mu until the thread takes them */
	bool stopping;		/* under mu */
	int wake[2];
	pthread_t th;
	bool started;
	struct conn *conns;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The CONNECT parser (pure). */

static bool header_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c < 0x7f);
}

enum jig_connect_parse jig_connect_parse(const char *buf, size_t len, size_t *head, char *host, size_t cap,
					 uint16_t *port)
{
	static const char method[] = "CONNECT ", version[] = " HTTP/1.1";
	size_t max = JIG_NETRELAY_CONNECT_MAX_HEADER, n = len < max ? len : max;
	/* Every line so far: header bytes, CRLF-terminated; the head ends at
	 * an empty line. */
	size_t line = 0, first_end = 0;
	*head = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\r') {
			if (i == 0)
				return JIG_CONNECT_BAD;
			if (i + 1 == n)
				break; /* the LF may come */
			if (buf[i + 1] != '\n')
				return JIG_CONNECT_BAD;
			if (!first_end)
				first_end = i;
			if (i == line && line > 0) {
				*head = i + 2;
				break;
			}
			line = ++i + 1;
			continue;
		}
		if (!header_byte(c))
			return JIG_CONNECT_BAD;
		/* the request line, as soon as it cannot be CONNECT */
		if (!first_end && i < sizeof(method) - 1 && c != (unsigned char)method[i])
			return JIG_CONNECT_BAD;
	}
	if (!first_end || *head == 0 || *head > n)
		return len >= max ? JIG_CONNECT_TOO_LARGE : JIG_CONNECT_MORE;
	size_t vl = sizeof(version) - 1, ml = sizeof(method) - 1;
	if (first_end < ml + vl + 1 || memcmp(buf + first_end - vl, version, vl) != 0)
		return JIG_CONNECT_BAD;
	char target[JIG_POLICY_MAX_ENDPOINT + 1];
	size_t tl = first_end - vl - ml;
	if (tl >= sizeof(target))
		return JIG_CONNECT_BAD;
	memcpy(target, buf + ml, tl);
	target[tl] = '\0';
	if (strchr(target, ' ') || strchr(target, '\t') || jig_endpoint_split(target, host, cap, port) < 0)
		return JIG_CONNECT_BAD;
	return JIG_CONNECT_OK;
}

/* Connections. */

static void conn_close(struct conn *c)
{
	if (c->in >= 0)
		close(c->in);
	if (c->out >= 0)
		close(c->out);
	c->st = C_FREE;
	c->in = c->out = -1;
}

/* A short answer to the scope's end, then closed (best effort: it fits a
 * fresh socket's buffer). */
static void answer_close(struct conn *c, const char *status)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status);
	(void)!send(c->in, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	conn_close(c);
}

/* Starts a non-blocking connect to sa: the host's end, or -1. */
static int dial(const struct sockaddr *sa, socklen_t salen)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct conn *free_conn(struct jig_netrelay *r)
{
	for (size_t i = 0; i < JIG_NETRELAY_MAX_CONNS; i++)
		if (r->conns[i].st == C_FREE)
			return &r->conns[i];
	return NULL;
}

/* Listener i has a connection waiting: take it (or refuse it when the
 * table is full). */
static void on_accept(struct jig_netrelay *r, size_t i, int lfd)
{
	int in = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (in < 0)
		return;
	struct conn *c = free_conn(r);
	if (!c) {
		close(in); /* beyond the cap: refused */
		return;
	}
	memset(c, 0, sizeof(*c));
	c->in = in;
	c->out = -1;
	c->deadline = now_ms() + (i < r->p->n_loopback ? JIG_NETRELAY_DIAL_MS : JIG_NETRELAY_CONNECT_DEADLINE_MS);
	if (i >= r->p->n_loopback) {
		c->proxy = true;
		c->st = C_HEAD;
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(r->p->listeners[i].port),
				 .sin_addr.s_addr = htonl(r->p->listeners[i].ipv4)};
	c->st = C_DIAL;
	if ((c->out = dial((struct sockaddr *)&sa, sizeof(sa))) < 0)
		conn_close(c);
}

static bool granted(const struct jig_scope_policy *p, const char *host, uint16_t port)
{
	char ep[JIG_POLICY_MAX_ENDPOINT + 8];
	snprintf(ep, sizeof(ep), "%s:%u", host, (unsigned)port);
	for (size_t i = 0; i < p->n_connect; i++)
		if (strcmp(p->connect[i], ep) == 0)
			return true;
	return false;
}

/* The granted destination host:port from the host's network: the first
 * address that starts connecting, or -1; a granted name any of whose
 * addresses is this host's or link-local is refused whole (-2, *why says
 * which). An IP literal is the policy's own exact choice (the session map
 * refuses local ones before they are granted). */
static int dial_name(const char *host, uint16_t port, const char **why)
{
	char name[JIG_POLICY_MAX_ENDPOINT + 1], serv[8];
	size_t n = strlen(host);
	if (host[0] == '[' && n >= 2)
		snprintf(name, sizeof(name), "%.*s", (int)(n - 2), host + 1);
	else
		snprintf(name, sizeof(name), "%s", host);
	snprintf(serv, sizeof(serv), "%u", (unsigned)port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res = NULL;
	unsigned char lit[sizeof(struct in6_addr)];
	bool literal = inet_pton(AF_INET, name, lit) == 1 || inet_pton(AF_INET6, name, lit) == 1;
	if (getaddrinfo(name, serv, &hints, &res) != 0)
		return -1;
	/* A name (not the exact address the policy wrote) answering this
	 * host's or a link-local address is refused. */
	for (struct addrinfo *a = res; a && !literal; a = a->ai_next)
		if ((*why = jig_addr_local(a->ai_addr))) {
			freeaddrinfo(res);
			return -2;
		}
	int fd = -1;
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next)
		fd = dial(a->ai_addr, a->ai_addrlen);
	freeaddrinfo(res);
	return fd;
}

/* HEAD: read what the scope sent of its request; on a whole head, the
 * grant decides. Bytes after the head stay in up for the destination. */
static void on_head(struct jig_netrelay *r, struct conn *c)
{
	size_t room = JIG_NETRELAY_CONNECT_MAX_HEADER - c->up.len;
	ssize_t k = room ? recv(c->in, c->up.buf + c->up.len, room, 0) : 0;
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0 && room) {
		conn_close(c);
		return;
	}
	c->up.len += (size_t)k;
	char host[JIG_POLICY_MAX_ENDPOINT + 1];
	uint16_t port;
	size_t head = 0;
	enum jig_connect_parse v = jig_connect_parse(c->up.buf, c->up.len, &head, host, sizeof(host), &port);
	if (v == JIG_CONNECT_MORE)
		return;
	if (v != JIG_CONNECT_OK) {
		answer_close(c, v == JIG_CONNECT_TOO_LARGE ? "431 Request Header Fields Too Large" : "400 Bad Request");
		return;
	}
	if (!granted(r->p, host, port)) {
		answer_close(c, "403 Forbidden");
		return;
	}
	memmove(c->up.buf, c->up.buf + head, c->up.len - head);
	c->up.len -= head;
	const char *why = NULL;
	if ((c->out = dial_name(host, port, &why)) < 0) {
		char status[128];
		/* One line to the scope: a remote grant never reaches this host. */
		snprintf(status, sizeof(status), "403 Forbidden: the granted name resolves to a refused address (%s)", why ? why : "?");
		answer_close(c, c->out == -2 ? status : "502 Bad Gateway");
		c->out = -1;
		return;
	}
	c->st = C_DIAL;
	c->deadline = now_ms() + JIG_NETRELAY_DIAL_MS;
}

/* DIAL: the host's end is writable: connected or failed. */
static void on_dialed(struct conn *c)
{
	int err = 0;
	socklen_t l = sizeof(err);
	if (getsockopt(c->out, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
		if (c->proxy)
			answer_close(c, "502 Bad Gateway");
		else
			conn_close(c);
		return;
	}
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	if (c->proxy && send(c->in, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(sizeof(ok) - 1)) {
		conn_close(c);
		return;
	}
	c->st = C_RELAY;
}

/* One direction of RELAY: read from `from` into h when readable, write h
 * to `to` when writable; a finished direction shuts down `to` for writing.
 * -1: the connection is broken. */
static int pump(struct half *h, int from, int to, short rev_from, short rev_to)
{
	if ((rev_from & (POLLIN | POLLHUP | POLLERR)) && !h->eof && h->len < sizeof(h->buf)) {
		ssize_t k = recv(from, h->buf + h->len, sizeof(h->buf) - h->len, 0);
		if (k > 0)
			h->len += (size_t)k;
		else if (k == 0)
			h->eof = true;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
	}
	if ((rev_to & POLLOUT) && h->len) {
		ssize_t k = send(to, h->buf, h->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (k > 0) {
			memmove(h->buf, h->buf + k, h->len - (size_t)k);
			h->len -= (size_t)k;
		}
	}
	if ((rev_to & POLLERR) && h->len)
		return -1;
	if (h->eof && !h->len && !h->shut) {
		shutdown(to, SHUT_WR);
		h->shut = true;
	}
	return 0;
}

/* The poll events a connection waits for: [0] its scope end, [1] its
 * host end. */
static void conn_events(const struct conn *c, short ev[2])
{
	ev[0] = ev[1] = 0;
	if (c->st == C_HEAD)
		ev[0] = POLLIN;
	else if (c->st == C_DIAL)
		ev[1] = POLLOUT;
	else if (c->st == C_RELAY) {
		if (!c->up.eof && c->up.len < sizeof(c->up.buf))
			ev[0] |= POLLIN;
		if (c->up.len)
			ev[1] |= POLLOUT;
		if (!c->down.eof && c->down.len < sizeof(c->down.buf))
			ev[1] |= POLLIN;
		if (c->down.len)
			ev[0] |= POLLOUT;
	}
}

static void conn_step(struct jig_netrelay *r, struct conn *c, short rin, short rout, long long now)
{
	if (c->st == C_HEAD && rin)
		on_head(r, c);
	else if (c->st == C_DIAL && rout)
		on_dialed(c);
	else if (c->st == C_RELAY && (rin || rout)) {
		if (pump(&c->up, c->in, c->out, rin, rout) < 0 || pump(&c->down, c->out, c->in, rout, rin) < 0 ||
		    (c->up.shut && c->down.shut))
			conn_close(c);
		return;
	}
	if ((c->st == C_HEAD || c->st == C_DIAL) && now >= c->deadline) {
		if (c->proxy)
			answer_close(c, c->st == C_HEAD ? "408 Request Timeout" : "504 Gateway Timeout");
		else
			conn_close(c);
	}
}

/* Takes the listening sockets handed over so far; false once stopping. */
static bool take_listeners(struct jig_netrelay *r, int *lfd)
{
	char drain[64];
	while (read(r->wake[0], drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&r->mu);
	bool go = !r->stopping;
	memcpy(lfd, r->lfd, sizeof(r->lfd));
	pthread_mutex_unlock(&r->mu);
	return go;
}

static void *relay_main(void *arg)
{
	struct jig_netrelay *r = arg;
	size_t nl = r->p->n_listeners;
	int lfd[MAX_LISTENERS];
	struct pollfd pf[1 + MAX_LISTENERS + 2 * JIG_NETRELAY_MAX_CONNS];
	while (take_listeners(r, lfd)) {
		size_t k = 0;
		pf[k++] = (struct pollfd){.fd = r->wake[0], .events = POLLIN};
		for (size_t i = 0; i < nl; i++)
			pf[k++] = (struct pollfd){.fd = lfd[i], .events = POLLIN};
		for (size_t i = 0; i < JIG_NETRELAY_MAX_CONNS; i++) {
			struct conn *c = &r->conns[i];
			short ev[2];
			conn_events(c, ev);
			/* an end waited on for nothing is not polled (its hang-up
			 * would wake this loop until the other end is done) */
			pf[k++] = (struct pollfd){.fd = c->st && ev[0] ? c->in : -1, .events = ev[0]};
			pf[k++] = (struct pollfd){.fd = c->st && ev[1] ? c->out : -1, .events = ev[1]};
		}
		if (poll(pf, k, 250) < 0 && errno != EINTR)
			break;
		long long now = now_ms();
		for (size_t i = 0; i < nl; i++)
			if (pf[1 + i].revents & POLLIN)
				on_accept(r, i, lfd[i]);
		for (size_t i = 0; i < JIG_NETRELAY_MAX_CONNS; i++) {
			struct conn *c = &r->conns[i];
			size_t at = 1 + nl + 2 * i;
			/* a connection accepted just now was not polled */
			if (c->st && (pf[at].fd == c->in || pf[at + 1].fd == c->out) && (pf[at].fd >= 0 || pf[at + 1].fd >= 0))
				conn_step(r, c, pf[at].revents, pf[at + 1].revents, now);
		}
	}
	return NULL;
}

int jig_netrelay_start(const struct jig_scope_policy *p, struct jig_netrelay **out, struct jig_error *e)
{
	*out = NULL;
	if (p->n_listeners == 0 || p->n_listeners > MAX_LISTENERS)
		return jig_err(e, JIG_E_INTERNAL, "scope %s: %zu network endpoints", p->name, p->n_listeners);
	struct jig_netrelay *r = calloc(1, sizeof(*r));
	if (!r || !(r->conns = calloc(JIG_NETRELAY_MAX_CONNS, sizeof(*r->conns)))) {
		free(r);
		return jig_err(e, JIG_E_INTERNAL, "out of memory");
	}
	r->p = p;
	for (size_t i = 0; i < MAX_LISTENERS; i++)
		r->lfd[i] = -1;
	for (size_t i = 0; i < JIG_NETRELAY_MAX_CONNS; i++)
		r->conns[i].in = r->conns[i].out = -1;
	pthread_mutex_init(&r->mu, NULL);
	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		int err = errno;
		pthread_mutex_destroy(&r->mu);
		free(r->conns);
		free(r);
		return jig_err(e, JIG_E_INTERNAL, "the network relay's pipe: %s", strerror(err));
	}
	/* The thread takes no signal: the launching thread's are its own. */
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	int err = pthread_create(&r->th, NULL, relay_main, r);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	r->started = err == 0;
	if (err) {
		jig_netrelay_stop(r);
		return jig_err(e, JIG_E_INTERNAL, "the network relay's thread: %s", strerror(err));
	}
	*out = r;
	return 0;
}

void jig_netrelay_listen_ready(void *ctx, uint32_t i, int fd)
{
	struct jig_netrelay *r = ctx;
	pthread_mutex_lock(&r->mu);
	bool ok = i < r->p->n_listeners && r->lfd[i] < 0;
	if (ok)
		r->lfd[i] = fd;
	pthread_mutex_unlock(&r->mu);
	if (!ok)
		close(fd);
	else
		(void)!write(r->wake[1], "r", 1);
}

void jig_netrelay_stop(struct jig_netrelay *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_mutex_unlock(&r->mu);
	(void)!write(r->wake[1], "q", 1);
	if (r->started)
		pthread_join(r->th, NULL);
	for (size_t i = 0; i < JIG_NETRELAY_MAX_CONNS; i++)
		if (r->conns[i].st)
			conn_close(&r->conns[i]);
	for (size_t i = 0; i < MAX_LISTENERS; i++)
		if (r->lfd[i] >= 0)
			close(r->lfd[i]);
	close(r->wake[0]);
	close(r->wake[1]);
	pthread_mutex_destroy(&r->mu);
	free(r->conns);
	free(r);
}
