#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF 65536

struct stream {
	int host;     /* the caller's descriptor (not ours to close) */
	int ours;     /* our end of the pipe */
	int theirs;   /* the scope's end, closed once the scope has ended */
	bool in;      /* caller -> scope (target 0) */
	bool done;
	size_t len, off;
	char *buf; /* BUF bytes, malloc'd: pages are touched only when data flows */
};

struct jig_relay {
	struct stream s[3];
	size_t n;
	int stop[2];
	bool stopping, started;
	pthread_t thread;
};

static bool names_nothing(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/* Writes all of buf to fd (the caller's; blocking). False if it is gone. */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

/* One step of a stream whose descriptor poll found ready. */
static void step(struct stream *s, short revents, bool on_pipe)
{
	if (!s->in) {
		/* scope -> caller: a caller that went away is read and discarded,
		 * so the scope never blocks on it. */
		ssize_t n = read(s->ours, s->buf, BUF);
		if (n > 0 && s->host >= 0 && !write_all(s->host, s->buf, (size_t)n))
			s->host = -1;
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			s->done = true;
		return;
	}
	if (!on_pipe) {
		ssize_t n = read(s->host, s->buf, BUF);
		if (n > 0)
			s->len = (size_t)n, s->off = 0;
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			s->done = true; /* end of input: the scope sees EOF */
	} else if (revents & (POLLERR | POLLHUP)) {
		s->done = true; /* the scope closed its end */
	} else {
		ssize_t w = write(s->ours, s->buf + s->off, s->len - s->off);
		if (w > 0 && (s->off += (size_t)w) == s->len)
			s->len = s->off = 0;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			s->done = true;
	}
	if (s->done && s->ours >= 0) {
		close(s->ours);
		s->ours = -1;
	}
}

static void *relay_thread(void *arg)
{
	struct jig_relay *r = arg;
	/* A write to a pipe the scope closed fails with EPIPE here instead of
	 * killing jig. */
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
	for (;;) {
		struct pollfd p[4];
		struct stream *who[4];
		bool on_pipe[4];
		size_t k = 0, live = 0;
		for (size_t i = 0; i < r->n; i++) {
			struct stream *s = &r->s[i];
			if (s->done || (s->in && r->stopping))
				continue;
			live++;
			bool pipe_side = !s->in || s->len > 0;
			p[k] = (struct pollfd){.fd = pipe_side ? s->ours : s->host, .events = (short)(s->in && pipe_side ? POLLOUT : POLLIN)};
			who[k] = s;
			on_pipe[k++] = pipe_side;
		}
		if (!live && r->stopping)
			break;
		p[k] = (struct pollfd){.fd = r->stopping ? -1 : r->stop[0], .events = POLLIN};
		if (poll(p, k + 1, -1) < 0 && errno != EINTR)
			break;
		if (p[k].revents)
			r->stopping = true;
		for (size_t i = 0; i < k; i++)
			if (p[i].revents)
				step(who[i], p[i].revents, on_pipe[i]);
	}
	return NULL;
}

int jig_relay_start(struct jig_relay **out, struct jig_scope_fd *fds, size_t n, struct jig_error *e)
{
	*out = NULL;
	struct jig_relay *r = NULL;
	for (size_t i = 0; i < n; i++) {
		if (fds[i].target > 2 || names_nothing(fds[i].source))
			continue;
		if (!r && (!(r = calloc(1, sizeof(*r))) || pipe2(r->stop, O_CLOEXEC) < 0)) {
			free(r);
			errno = errno ? errno : ENOMEM;
			return jig_err(e, JIG_E_INTERNAL, "standard streams: %s", strerror(errno ? errno : ENOMEM));
		}
		struct stream *s = &r->s[r->n];
		int p[2];
		/* Not calloc'd into the struct (issue 14): zeroing 192 KiB of
		 * buffers showed as a ~30 ms gap per launch (strace, QEMU TCG). */
		if (r->n == 3 || !(s->buf = malloc(BUF)) || pipe2(p, O_CLOEXEC) < 0) {
			jig_relay_finish(r);
			return jig_err(e, JIG_E_INTERNAL, "standard streams: %s", strerror(errno ? errno : EINVAL));
		}
		s->in = fds[i].target == 0;
		s->host = fds[i].source;
		s->ours = s->in ? p[1] : p[0];
		s->theirs = s->in ? p[0] : p[1];
		fcntl(s->ours, F_SETFL, O_NONBLOCK);
		fds[i].source = s->theirs;
		r->n++;
	}
	if (r && pthread_create(&r->thread, NULL, relay_thread, r) != 0) {
		jig_relay_finish(r);
		return jig_err(e, JIG_E_INTERNAL, "standard streams: cannot start the relay");
	}
	if (r)
		r->started = true;
	*out = r;
	return 0;
}

void jig_relay_finish(struct jig_relay *r)
{
	if (!r)
		return;
	/* Every writer in the scope is gone: with our copies of the scope's
	 * ends closed, the output pipes end, and the relay drains them. */
	for (size_t i = 0; i < r->n; i++)
		close(r->s[i].theirs);
	if (r->started) {
		if (write(r->stop[1], "x", 1) < 0) {
			/* the pipe is ours and empty: cannot fail */
		}
		pthread_join(r->thread, NULL);
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->s[i].ours >= 0)
			close(r->s[i].ours);
	for (size_t i = 0; i < 3; i++)
		free(r->s[i].buf);
	close(r->stop[0]);
	close(r->stop[1]);
	free(r);
}
