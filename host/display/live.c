/* jig run --display web: the live view of a Run (docs/display.md, "Live").
 * A thread rebuilds the view every JIG_DISPLAY_LIVE_PERIOD_MS from what the
 * coordinator hands it (Run/0's log lines and effects, the children, under
 * their locks) and from the scopes' cgroup files, read by the host
 * (sandbox/observe.h).
 * When the Run's record is made, the final view and the verified captures
 * of its staged files are offered, and the display retires within
 * JIG_DISPLAY_COMPLETION_MS. */
#include "display/display.h"

#include "sandbox/observe.h"
#include "util/progress.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct jig_live {
	struct jig_display *d;
	struct jig_live_facts f;
	pthread_t thread;
	bool running;
	pthread_mutex_t mu; /* everything below */
	pthread_cond_t cv;
	bool stop;
	long long deadline_ms; /* CLOCK_MONOTONIC; 0: not launched */
	long long launched_ms, started_ms; /* CLOCK_MONOTONIC and the wall clock at launch (the timeline's origin) */
	json_t *logs, *effects, *children;
	pthread_mutex_t *data_lock, *children_lock;
	json_t *fenced; /* the scope's end state, once fenced */
};

static long long mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The view now (under l->mu). */
static json_t *live_view(struct jig_live *l)
{
	long long left = l->deadline_ms ? l->deadline_ms - mono_ms() : -1;
	json_t *summary = json_pack("{s:s,s:s,s:s,s:s,s:I}", "flow", l->f.flow, "status",
				    l->fenced ? "fenced" : l->deadline_ms ? "running" : "admitted", "plan_sha256",
				    l->f.plan_sha256, "package_sha256", l->f.package_sha256, "timeout_ms",
				    (json_int_t)l->f.timeout_ms);
	if (summary && left >= 0 && !l->fenced)
		json_object_set_new(summary, "deadline_left_ms", json_integer(left < 0 ? 0 : left));
	if (summary && l->deadline_ms) { /* issue 35: the live timeline's origin and now */
		json_object_set_new(summary, "started_ms", json_integer(l->started_ms));
		json_object_set_new(summary, "elapsed_ms", json_integer(mono_ms() - l->launched_ms));
	}
	json_t *scopes = l->fenced ? json_pack("[O]", l->fenced) : jig_sandbox_observe(JIG_DISPLAY_MAX_SCOPES, left < 0 ? (l->deadline_ms ? 0 : -1) : left);
	json_t *logs = json_array(), *effects = json_array(), *children = json_array();
	if (l->data_lock) {
		pthread_mutex_lock(l->data_lock);
		size_t n = json_array_size(l->logs), from = n > JIG_DISPLAY_MAX_LOGS ? n - JIG_DISPLAY_MAX_LOGS : 0;
		for (size_t i = from; i < n; i++)
			json_array_append_new(logs, jig_display_str(json_array_get(l->logs, i)));
		n = json_array_size(l->effects);
		from = n > JIG_DISPLAY_MAX_LOGS ? n - JIG_DISPLAY_MAX_LOGS : 0;
		for (size_t i = from; i < n; i++)
			json_array_append_new(effects, jig_display_evidence(json_array_get(l->effects, i)));
		pthread_mutex_unlock(l->data_lock);
	}
	if (l->children_lock) {
		pthread_mutex_lock(l->children_lock);
		json_decref(children);
		children = jig_display_children(l->children, 0);
		pthread_mutex_unlock(l->children_lock);
	}
	return json_pack("{s:s,s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:[]}", "format", JIG_DISPLAY_VIEW_FORMAT, "kind", "run", "final",
			 0, "summary", summary, "scopes", scopes, "logs", logs, "effects", effects, "children", children,
			 "artifacts");
}

static void *live_thread(void *arg)
{
	struct jig_live *l = arg;
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		json_t *v = live_view(l);
		struct jig_error e;
		pthread_mutex_unlock(&l->mu);
		if (v)
			jig_display_publish(l->d, v, &e); /* a view too large keeps the previous one */
		pthread_mutex_lock(&l->mu);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += JIG_DISPLAY_LIVE_PERIOD_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		if (!l->stop)
			pthread_cond_timedwait(&l->cv, &l->mu, &until);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int jig_live_open(struct jig_live **out, const struct jig_snapshot *s, const struct jig_live_facts *f,
		  struct jig_error *e)
{
	struct jig_live *l = calloc(1, sizeof(*l));
	if (!l)
		return jig_err(e, JIG_E_INTERNAL, "display: out of memory");
	l->f = *f;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	int r = jig_display_open(&l->d, s, NULL, 0, e);
	if (!r)
		l->running = pthread_create(&l->thread, NULL, live_thread, l) == 0;
	if (!r && !l->running)
		r = jig_err(e, JIG_E_INTERNAL, "display: cannot start its thread");
	if (r) {
		jig_live_close(l);
		return r;
	}
	char link[128];
	jig_display_link(l->d, link, sizeof(link));
	jig_progress_clear();
	if (f->out) {
		fprintf(f->out, "display: %s\n  read-only, live; it retires when the Run ends\n", link);
		fflush(f->out);
	}
	explicit_bzero(link, sizeof(link));
	*out = l;
	return 0;
}

void jig_live_attach(struct jig_live *l, json_t *logs, json_t *effects, pthread_mutex_t *data_lock, json_t *children,
		     pthread_mutex_t *children_lock)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->launched_ms = mono_ms();
	l->deadline_ms = l->launched_ms + (long long)l->f.timeout_ms;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	l->started_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	l->logs = logs;
	l->effects = effects;
	l->data_lock = data_lock;
	l->children = children;
	l->children_lock = children ? children_lock : NULL;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

void jig_live_fenced(struct jig_live *l, json_t *termination)
{
	if (!l) {
		json_decref(termination);
		return;
	}
	pthread_mutex_lock(&l->mu);
	json_decref(l->fenced);
	l->fenced = termination;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

/* Stops the thread; the sources are not read after this. */
static void stop_thread(struct jig_live *l)
{
	if (!l->running)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	l->running = false;
}

const char *jig_live_finish(struct jig_live *l, int stagefd, json_t *rec, const char *headline, char *why, size_t cap)
{
	if (!l)
		return NULL;
	stop_thread(l);
	json_t *view = NULL;
	struct jig_display_artifact *arts = NULL;
	size_t n = 0;
	struct jig_error e = {0};
	/* The staged files, hashed whole against the record as they are read:
	 * the captures are what the record says was published. */
	int r = jig_display_packet(stagefd, rec, headline, &view, &arts, &n, &e);
	if (!r) {
		json_object_set_new(view, "kind", json_string("run"));
		jig_display_set_artifacts(l->d, arts, n);
		r = jig_display_publish(l->d, view, &e);
	}
	const char *failed = NULL;
	if (r)
		snprintf(why, cap, "the display's final view: %s; ", e.msg);
	size_t used = r ? strlen(why) : 0;
	if (jig_display_retire(l->d, JIG_DISPLAY_COMPLETION_MS, why + used, cap - used) < 0 || r)
		failed = why;
	l->d = NULL; /* retired and freed, or left to the process's exit */
	jig_live_close(l);
	return failed;
}

void jig_live_close(struct jig_live *l)
{
	if (!l)
		return;
	stop_thread(l);
	jig_display_close(l->d);
	json_decref(l->fenced);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}
