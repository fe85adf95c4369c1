/* display: the mechanism of --display web (sdk/include/jig/display.h).
 * libmicrohttpd serves 127.0.0.1 from its own polling thread; every
 * complete request goes to the host's handler as the parser saw it. The
 * module adds the host's fixed headers to every answer, bounds connections
 * (count, head size, idle time, the time a head may take) and logs
 * nothing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include <jig/display.h>
#include <jig/module.h>

#include "assets.h"

#define MAX_HEADERS 64

struct slot {
	bool used;
	int fd;
	uint64_t deadline_ms; /* 0: none (the handler has the request) */
};

struct server {
	struct MHD_Daemon *d;
	struct jig_display_config c;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t watchdog;
	bool watching, stopping;
	size_t n_slots;
	struct slot *slots;
};

/* One request: the raw target the parser read (URI log callback). */
struct request {
	char *uri;
	bool head, answered;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void set_deadline(struct server *s, struct MHD_Connection *c, uint64_t when)
{
	pthread_mutex_lock(&s->mu);
	struct slot *sl = slot_of(c);
	if (sl)
		sl->deadline_ms = when;
	pthread_mutex_unlock(&s->mu);
}

/* A connection gets a slot and a deadline for its first request's head.
 * One over max_clients is cut at once (libmicrohttpd's own limit, a few
 * higher, would leave it waiting in the listen queue instead). */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;
	pthread_mutex_lock(&s->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct slot *free_slot = NULL;
		size_t used = 0;
		for (size_t i = 0; i < s->n_slots; i++) {
			used += s->slots[i].used;
			if (!s->slots[i].used && !free_slot)
				free_slot = &s->slots[i];
		}
		if (free_slot && ci && used < s->c.max_clients) {
			*free_slot = (struct slot){.used = true, .fd = ci->connect_fd,
						   .deadline_ms = now_ms() + s->c.request_deadline_ms};
			*socket_context = free_slot;
		} else if (ci)
			shutdown(ci->connect_fd, SHUT_RDWR);
	} else if (*socket_context) {
		struct slot *sl = *socket_context;
		sl->used = false;
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&s->mu);
}

/* Cuts every connection whose request head is late (a trickling client
 * resets libmicrohttpd's inactivity timeout with every byte). shutdown()
 * leaves the descriptor to libmicrohttpd, which then closes it. */
static void *watchdog(void *arg)
{
	struct server *s = arg;
	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		uint64_t now = now_ms();
		for (size_t i = 0; i < s->n_slots; i++) {
			struct slot *sl = &s->slots[i];
			if (sl->used && sl->deadline_ms && now >= sl->deadline_ms) {
				shutdown(sl->fd, SHUT_RDWR);
				sl->deadline_ms = 0;
			}
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	struct request *rq = calloc(1, sizeof(*rq));
	if (rq)
		rq->uri = strdup(uri ? uri : "");
	return rq;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	(void)toe;
	struct request *rq = *con_cls;
	if (rq) {
		free(rq->uri);
		free(rq);
		*con_cls = NULL;
	}
	set_deadline(s, c, now_ms() + s->c.request_deadline_ms);
}

/* The request target as sent, percent escapes included. */
static size_t identity_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

struct headers {
	size_t n;
	const char *names[MAX_HEADERS];
	const char *values[MAX_HEADERS];
	bool overflow;
};

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct headers *h = cls;
	if (h->n == MAX_HEADERS) {
		h->overflow = true;
		return MHD_NO;
	}
	h->names[h->n] = key;
	h->values[h->n++] = value ? value : "";
	return MHD_YES;
}

static enum MHD_Result send_plain(struct MHD_Connection *c, const struct server *s, unsigned status,
				  const char *type, const void *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	for (const char *const *h = s->c.headers; h && h[0] && h[1]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	struct request *rq = *con_cls;
	(void)upload_data;
	if (!rq || !rq->uri)
		return MHD_NO;
	if (rq->answered) {
		/* A body the answer already refused: dropped unread. */
		*upload_data_size = 0;
		return MHD_YES;
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	bool body = te != NULL || (cl && strcmp(cl, "0") != 0) || *upload_data_size > 0;
	if (!rq->head) {
		/* The head is complete. Without a body the answer comes on the
		 * next call (an answer queued now would close the connection);
		 * with one it comes now, and the body is never read. */
		rq->head = true;
		set_deadline(s, c, 0);
		if (!body)
			return MHD_YES;
	}
	rq->answered = true;
	struct headers h = {0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &h);
	char *q = strchr(rq->uri, '?');
	if (q)
		*q = '\0';
	struct jig_display_request in = {
		.struct_size = sizeof(in), .method = method, .target = rq->uri, .version = version,
		.has_query = q != NULL, .has_body = body,
		.n_headers = h.n, .names = h.names, .values = h.values};
	(void)url;
	if (h.overflow)
		return send_plain(c, s, 431, "text/plain; charset=utf-8", "too many headers\n", 17);
	struct jig_display_response out = {.struct_size = sizeof(out), .status = 500};
	s->c.handler(s->c.ctx, &in, &out);
	enum MHD_Result ok = send_plain(c, s, out.status, out.content_type, out.body ? out.body : "", out.body ? out.len : 0);
	if (out.release && out.body)
		out.release(s->c.ctx, out.body);
	return ok;
}

static void server_free(struct server *s)
{
	if (s->watching) {
		pthread_mutex_lock(&s->mu);
		s->stopping = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->watchdog, NULL);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->slots);
	free(s);
}

static int display_start(void *state, const struct jig_display_config *c, void **server, uint16_t *port, char *why,
			 size_t cap)
{
	(void)state;
	*server = NULL;
	if (!c || c->struct_size < sizeof(*c) || !c->handler || !c->max_clients || !c->max_request_bytes ||
	    !c->idle_timeout_s || !c->request_deadline_ms) {
		snprintf(why, cap, "display: incomplete configuration");
		return JIG_MOD_EINVAL;
	}
	struct server *s = calloc(1, sizeof(*s));
	if (!s)
		return JIG_MOD_ENOMEM;
	s->c = *c;
	s->n_slots = (size_t)c->max_clients + 8;
	s->slots = calloc(s->n_slots, sizeof(*s->slots));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (!s->slots || pthread_create(&s->watchdog, NULL, watchdog, s) != 0) {
		server_free(s);
		snprintf(why, cap, "display: cannot start the connection watchdog");
		return JIG_MOD_EFAIL;
	}
	s->watching = true;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	s->d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, &sa,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->n_slots, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)c->max_request_bytes, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)c->idle_timeout_s,
		MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_URI_LOG_CALLBACK, uri_log, s,
		MHD_OPTION_UNESCAPE_CALLBACK, identity_unescape, s, MHD_OPTION_END);
	const union MHD_DaemonInfo *di = s->d ? MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (!di || !di->port) {
		if (s->d)
			MHD_stop_daemon(s->d);
		server_free(s);
		snprintf(why, cap, "display: cannot listen on 127.0.0.1");
		return JIG_MOD_EFAIL;
	}
	*port = di->port;
	*server = s;
	return JIG_MOD_OK;
}

static void display_stop(void *state, void *server)
{
	(void)state;
	struct server *s = server;
	if (!s)
		return;
	MHD_socket l = MHD_quiesce_daemon(s->d);
	if (l != MHD_INVALID_SOCKET)
		close(l);
	for (uint64_t end = now_ms() + s->c.drain_ms; now_ms() < end;) {
		const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!di || di->num_connections == 0)
			break;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(s->d);
	server_free(s);
}

static int display_asset(void *state, const char *name, const void **bytes, size_t *len, const char **media_type)
{
	(void)state;
	for (size_t i = 0; i < jig_display_n_assets; i++)
		if (name && strcmp(name, jig_display_assets[i].name) == 0) {
			*bytes = jig_display_assets[i].bytes;
			*len = jig_display_assets[i].len;
			*media_type = jig_display_assets[i].media_type;
			return JIG_MOD_OK;
		}
	return JIG_MOD_EINVAL;
}

static const struct jig_display_ops ops = {
	.struct_size = sizeof(struct jig_display_ops),
	.start = display_start,
	.stop = display_stop,
	.asset = display_asset,
};

JIG_MODULE_DEFINE(.name = "display", .kind = JIG_KIND_DISPLAY, .ops_size = sizeof(ops), .version = JIG_VERSION,
		  .ops = &ops);
