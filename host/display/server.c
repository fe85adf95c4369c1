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
	bool final;
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
	/* Live retirement: views answered, and whether a final one was. */
	unsigned long views_served;
	bool final_served;
	bool retired; /* inspection closed: nothing is answered but 404 */
	uint64_t last_request_ms; /* CLOCK_MONOTONIC */
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

static uint64_t mono_ms(void);

static void handle(void *ctx, const struct jig_display_request *rq, struct jig_display_response *rs)
{
	struct jig_display *d = ctx;
	pthread_mutex_lock(&d->mu);
	d->last_request_ms = mono_ms();
	struct jig_display_decision dec = d->retired ? (struct jig_display_decision){.route = JIG_ROUTE_REFUSED, .status = 404}
						     : jig_display_authorize(&d->p, rq);
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
		if (b) {
			b->refs++;
			d->views_served++;
			d->final_served |= b->final;
		}
		pthread_mutex_unlock(&d->mu);
		if (!b) {
			text(rs, 404, reason(404));
			return;
		}
		*rs = (struct jig_display_response){.struct_size = rs->struct_size, .status = 200,
						    .content_type = "application/json", .body = b->data, .len = b->len,
						    .release = release};
		return;
	case JIG_ROUTE_ARTIFACT: {
		/* Set once (jig_display_set_artifacts), freed only after stop. */
		pthread_mutex_lock(&d->mu);
		struct jig_display_artifact *arts = d->arts;
		size_t n = d->n_arts;
		pthread_mutex_unlock(&d->mu);
		for (size_t i = 0; i < n; i++)
			if (strcmp(arts[i].id, dec.artifact) == 0) {
				rs->status = 200;
				rs->content_type = "application/json";
				rs->body = arts[i].json;
				rs->len = arts[i].len;
				return;
			}
		text(rs, 404, reason(404));
		return;
	}
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

/* Every child's list key emptied (its node says "<key>_trimmed"). */
static void trim_children(json_t *children, const char *key)
{
	size_t i;
	json_t *c;
	char mark[32];
	snprintf(mark, sizeof(mark), "%s_trimmed", key);
	json_array_foreach(children, i, c) {
		if (json_array_size(json_object_get(c, key))) {
			json_object_set_new(c, key, json_array());
			json_object_set_new(c, mark, json_true());
		}
		trim_children(json_object_get(c, "children"), key);
	}
}

/* The view's logs halved until the document fits; then the children's
 * logs and effects go (issue 35: the tree carries them). */
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
	static const char *const kids[] = {"logs", "effects"};
	for (size_t k = 0; s && k < 2 && strlen(s) > JIG_DISPLAY_MAX_VIEW_BYTES; k++) {
		free(s);
		trim_children(json_object_get(view, "children"), kids[k]);
		s = json_dumps(view, JSON_COMPACT | JSON_ENSURE_ASCII);
	}
	bool final = json_is_true(json_object_get(view, "final"));
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
	b->final = final;
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

void jig_display_set_artifacts(struct jig_display *d, struct jig_display_artifact *arts, size_t n)
{
	pthread_mutex_lock(&d->mu);
	bool taken = d->arts != NULL;
	if (!taken) {
		d->arts = arts;
		d->n_arts = n;
	}
	pthread_mutex_unlock(&d->mu);
	if (taken)
		jig_display_artifacts_free(arts, n);
}

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* The stop, in a thread of its own so that the caller can give up on it. */
struct retirement {
	struct jig_display *d;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool acknowledged;
};

static void *retire_thread(void *arg)
{
	struct retirement *rt = arg;
	rt->d->ops->stop(rt->d->h.state, rt->d->server);
#ifdef JIG_FAULT_POINTS
	/* Test-only (docs/reliability.md): the acknowledgement is lost. */
	const char *f = getenv("JIG_FAULT_DISPLAY_RETIRE");
	if (f && strcmp(f, "lost") == 0)
		return NULL;
#endif
	pthread_mutex_lock(&rt->mu);
	rt->acknowledged = true;
	pthread_cond_signal(&rt->cv);
	pthread_mutex_unlock(&rt->mu);
	return NULL;
}

int jig_display_retire(struct jig_display *d, uint64_t allowance_ms, char *why, size_t cap)
{
	uint64_t t0 = mono_ms(), linger = allowance_ms < JIG_DISPLAY_LINGER_MS ? allowance_ms : JIG_DISPLAY_LINGER_MS;
	/* A page that has been reading gets the final view and its excerpts
	 * (it asks for them at once): the linger ends once it has had the
	 * final view and then been quiet; nobody watching: no wait at all. */
	for (;; usleep(50 * 1000)) {
		pthread_mutex_lock(&d->mu);
		bool reading = d->views_served > 0, got = d->final_served;
		uint64_t last = d->last_request_ms, now = mono_ms();
		pthread_mutex_unlock(&d->mu);
		if (!reading || now - t0 >= linger || (got && now - last >= JIG_DISPLAY_QUIET_MS))
			break;
	}
	static struct retirement rt; /* outlives us if the acknowledgement is lost */
	rt = (struct retirement){.d = d};
	pthread_mutex_init(&rt.mu, NULL);
	pthread_cond_init(&rt.cv, NULL);
	pthread_t t;
	bool started = pthread_create(&t, NULL, retire_thread, &rt) == 0;
	if (!started)
		retire_thread(&rt);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	uint64_t left = allowance_ms > mono_ms() - t0 ? allowance_ms - (mono_ms() - t0) : 0;
	until.tv_sec += (time_t)(left / 1000);
	until.tv_nsec += (long)(left % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&rt.mu);
	while (!rt.acknowledged && pthread_cond_timedwait(&rt.cv, &rt.mu, &until) == 0)
		;
	bool ok = rt.acknowledged;
	pthread_mutex_unlock(&rt.mu);
	if (!ok) {
		pthread_mutex_lock(&d->mu);
		d->retired = true; /* no request is authorised any more */
		explicit_bzero(d->p.cap, sizeof(d->p.cap));
		pthread_mutex_unlock(&d->mu);
		snprintf(why, cap, "the display's retirement was not acknowledged within %llu ms; inspection was closed "
			 "and ends with the command", (unsigned long long)allowance_ms);
		if (started)
			pthread_detach(t);
		return -1;
	}
	if (started)
		pthread_join(t, NULL);
	d->server = NULL; /* stopped */
	jig_display_close(d);
	return 0;
}
