/* The display's server: the signed display module listening, this room's
 * policy answering (policy.c), the current view shared with the handler
 * thread as a reference-counted byte string. */
#include "display/display.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <jig/module.h>

#include "snapshot/loader.h"

struct blob {
	size_t refs, len;
	char data[];
};

struct jig_display {
	struct jig_module_handle h;
	bool loaded;
	const struct jig_display_ops *ops;
	void *server;
	uint16_t port;
	struct jig_display_policy p;
	pthread_mutex_t mu;
	struct blob *view;
	struct jig_display_artifact *arts;
	size_t n_arts;
	int close_fd; /* eventfd: the page asked to close */
};

static void blob_put(struct jig_display *d, struct blob *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&d->mu);
	bool last = --b->refs == 0;
	pthread_mutex_unlock(&d->mu);
	if (last)
		free(b);
}

static void release(void *ctx, const void *body)
{
	blob_put(ctx, (struct blob *)((const char *)body - offsetof(struct blob, data)));
}

static void text(struct jig_display_response *rs, unsigned status, const char *body)
{
	rs->status = status;
	rs->content_type = "text/plain; charset=utf-8";
	rs->body = body;
	rs->len = strlen(body);
}

static const char *reason(unsigned status)
{
	switch (status) {
	case 401: return "unauthorized: open the link jig printed\n";
	case 403: return "forbidden\n";
	case 404: return "not found\n";
	case 405: return "method not allowed\n";
	case 421: return "misdirected request\n";
	default: return "bad request\n";
	}
}

static void handle(void *ctx, const struct jig_display_request *rq, struct jig_display_response *rs)
{
	struct jig_display *d = ctx;
	pthread_mutex_lock(&d->mu);
	struct jig_display_decision dec = jig_display_authorize(&d->p, rq);
	pthread_mutex_unlock(&d->mu);
	switch (dec.route) {
	case JIG_ROUTE_REFUSED:
		text(rs, dec.status, reason(dec.status));
		return;
	case JIG_ROUTE_ASSET:
		if (d->ops->asset(d->h.state, dec.asset, &rs->body, &rs->len, &rs->content_type) != JIG_MOD_OK)
			text(rs, 404, reason(404));
		else
			rs->status = 200;
		return;
	case JIG_ROUTE_VIEW:
		pthread_mutex_lock(&d->mu);
		struct blob *b = d->view;
		if (b)
			b->refs++;
		pthread_mutex_unlock(&d->mu);
		if (!b) {
			text(rs, 404, reason(404));
			return;
		}
		*rs = (struct jig_display_response){.struct_size = rs->struct_size, .status = 200,
						    .content_type = "application/json", .body = b->data, .len = b->len,
						    .release = release};
		return;
	case JIG_ROUTE_ARTIFACT:
		for (size_t i = 0; i < d->n_arts; i++)
			if (strcmp(d->arts[i].id, dec.artifact) == 0) {
				rs->status = 200;
				rs->content_type = "application/json";
				rs->body = d->arts[i].json;
				rs->len = d->arts[i].len;
				return;
			}
		text(rs, 404, reason(404));
		return;
	case JIG_ROUTE_CLOSE: {
		uint64_t one = 1;
		if (write(d->close_fd, &one, sizeof(one)) != sizeof(one))
			text(rs, 500, "cannot close\n");
		else
			rs->status = 204;
		return;
	}
	}
}

int jig_display_open(struct jig_display **out, const struct jig_snapshot *s, struct jig_display_artifact *arts,
		     size_t n_arts, struct jig_error *e)
{
	*out = NULL;
	struct jig_display *d = calloc(1, sizeof(*d));
	if (!d) {
		jig_display_artifacts_free(arts, n_arts);
		return jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	}
	pthread_mutex_init(&d->mu, NULL);
	d->arts = arts;
	d->n_arts = n_arts;
	d->close_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int r = d->close_fd < 0 ? jig_err(e, JIG_E_INTERNAL, "display: eventfd: %s", strerror(errno))
				: jig_module_load(s, "display", JIG_KIND_DISPLAY, &d->h, e);
	d->loaded = r == 0;
	if (!r) {
		d->ops = d->h.desc->ops;
		if (d->h.desc->ops_size < sizeof(struct jig_display_ops) || !d->ops->start || !d->ops->stop ||
		    !d->ops->asset)
			r = jig_err(e, JIG_E_INTEGRITY, "module display lacks the display operations (built against an older SDK); reinstall jig");
	}
	/* The port is known only once bound: the capability is made first,
	 * the Host and Origin constants once listening (under d->mu, which
	 * the handler holds while deciding); until then no Host matches. */
	if (!r)
		r = jig_display_policy_init(&d->p, 0, e);
	if (!r) {
		d->p.host[0] = d->p.origin[0] = '\0';
		char why[256] = "display: cannot start";
		struct jig_display_config c = {
			.struct_size = sizeof(c), .max_clients = JIG_DISPLAY_MAX_CLIENTS,
			.max_request_bytes = JIG_DISPLAY_MAX_REQUEST_BYTES, .idle_timeout_s = JIG_DISPLAY_IDLE_TIMEOUT_S,
			.request_deadline_ms = JIG_DISPLAY_HEAD_DEADLINE_MS, .drain_ms = JIG_DISPLAY_DRAIN_MS, .headers = jig_display_headers,
			.handler = handle, .ctx = d};
		if (d->ops->start(d->h.state, &c, &d->server, &d->port, why, sizeof(why)) != JIG_MOD_OK)
			r = jig_err(e, JIG_E_INTERNAL, "%s", why);
	}
	if (r) {
		jig_display_close(d);
		return r;
	}
	pthread_mutex_lock(&d->mu);
	snprintf(d->p.host, sizeof(d->p.host), "127.0.0.1:%u", (unsigned)d->port);
	snprintf(d->p.origin, sizeof(d->p.origin), "http://127.0.0.1:%u", (unsigned)d->port);
	pthread_mutex_unlock(&d->mu);
	*out = d;
	return 0;
}

void jig_display_link(const struct jig_display *d, char *out, size_t cap)
{
	snprintf(out, cap, "http://127.0.0.1:%u/#cap=%s", (unsigned)d->port, d->p.cap);
}

uint16_t jig_display_port(const struct jig_display *d)
{
	return d->port;
}

/* The view's logs halved until the document fits. */
int jig_display_publish(struct jig_display *d, json_t *view, struct jig_error *e)
{
	char *s = json_dumps(view, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_t *logs = json_object_get(view, "logs");
	while (s && strlen(s) > JIG_DISPLAY_MAX_VIEW_BYTES && json_array_size(logs) > 0) {
		free(s);
		size_t keep = json_array_size(logs) / 2;
		while (json_array_size(logs) > keep)
			json_array_remove(logs, 0);
		json_object_set_new(view, "logs_trimmed", json_true());
		s = json_dumps(view, JSON_COMPACT | JSON_ENSURE_ASCII);
	}
	json_decref(view);
	if (!s || strlen(s) > JIG_DISPLAY_MAX_VIEW_BYTES) {
		free(s);
		return jig_err(e, JIG_E_INTERNAL, "display: the view does not fit %u bytes", JIG_DISPLAY_MAX_VIEW_BYTES);
	}
	size_t len = strlen(s);
	struct blob *b = malloc(sizeof(*b) + len + 1);
	if (!b) {
		free(s);
		return jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	}
	b->refs = 1;
	b->len = len;
	memcpy(b->data, s, len + 1);
	free(s);
	pthread_mutex_lock(&d->mu);
	struct blob *old = d->view;
	d->view = b;
	pthread_mutex_unlock(&d->mu);
	blob_put(d, old);
	return 0;
}

const char *jig_display_wait(struct jig_display *d, uint64_t max_ms)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *why = "the display's time ran out";
	for (;;) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		uint64_t gone = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000u + (uint64_t)((t.tv_nsec - t0.tv_nsec) / 1000000);
		if (gone >= max_ms)
			break;
		uint64_t left = max_ms - gone;
		struct pollfd p[2] = {{.fd = d->close_fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		int n = poll(p, sfd >= 0 ? 2 : 1, left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno != EINTR) {
			why = "the display could not wait";
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			why = "closed from the page";
			break;
		}
		if (n > 0 && sfd >= 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si; /* consumed: not delivered once unblocked */
			if (read(sfd, &si, sizeof(si)) < 0)
				why = "interrupted (unread signal)";
			else
				why = "interrupted";
			break;
		}
	}
	if (sfd >= 0)
		close(sfd);
	return why;
}

void jig_display_close(struct jig_display *d)
{
	if (!d)
		return;
	if (d->server)
		d->ops->stop(d->h.state, d->server);
	if (d->loaded)
		jig_module_unload(&d->h);
	if (d->close_fd >= 0)
		close(d->close_fd);
	blob_put(d, d->view);
	jig_display_artifacts_free(d->arts, d->n_arts);
	explicit_bzero(&d->p, sizeof(d->p));
	pthread_mutex_destroy(&d->mu);
	free(d);
}
