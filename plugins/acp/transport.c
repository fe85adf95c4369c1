/* The transport of jig-acp-worker: the ACP client's stdio. Messages for
 * its stdin wait in a bounded queue written only when poll says it reads;
 * its stdout is read in budgets and cut into lines of at most
 * max_line_bytes, each handed to the protocol (jig_acp_line); its exit is
 * noticed through its pidfd. */
#include "turn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUT_MAX (2 * JIG_ACP_REQUEST_MAX) /* bytes waiting for the client's stdin */
#define READ_BUDGET (1u << 20)            /* bytes read per wakeup, so deadlines are seen */

/* Its input closed (EPIPE, POLLERR): nothing reaches it any more. A
 * client that is exiting closes it too, and its exit says more, so the
 * turn fails for this only if it is still running a moment later. */
#define INPUT_GONE_GRACE_MS 300
static void input_gone(struct turn *t)
{
	jig_acp_client_close_input(&t->c);
	if (!t->input_gone_at)
		t->input_gone_at = jig_acp_now_ms() + INPUT_GONE_GRACE_MS;
}

static void flush(struct turn *t)
{
	while (t->c.in >= 0 && t->out_off < t->out.len) {
		ssize_t n = write(t->c.in, t->out.p + t->out_off, t->out.len - t->out_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) { /* EPIPE: it closed its input; nothing reaches it any more */
			input_gone(t);
			break;
		}
		t->out_off += (size_t)n;
		t->n.bytes_out += n;
	}
	t->out.len = t->out_off = 0;
}

/* Queues one message (taking the reference) and writes what the client
 * takes now; the rest waits for poll, never a blocking write. */
void jig_acp_queue(struct turn *t, json_t *msg)
{
	char *s = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	if (!s) {
		jig_acp_end(t, OUT_FAILED, "out of memory");
		return;
	}
	if (t->c.in >= 0) {
		if (t->out_off) {
			memmove(t->out.p, t->out.p + t->out_off, t->out.len - t->out_off);
			t->out.len -= t->out_off;
			t->out_off = 0;
		}
		size_t n = strlen(s);
		if (t->out.len + n + 1 > OUT_MAX || jig_buf_add(&t->out, s, n) < 0 || jig_buf_add(&t->out, "\n", 1) < 0)
			jig_acp_end(t, OUT_FAILED, "the client does not read its input (over %u bytes waiting)", OUT_MAX);
		else
			flush(t);
	}
	free(s);
}

/* --- from the client -------------------------------------------------- */

/* Splits what the client sent into lines, each at most max_line_bytes
 * (without its newline). */
static void take(struct turn *t, const char *d, size_t n)
{
	size_t max = (size_t)t->rq->limits.max_line_bytes;
	while (n) {
		const char *nl = memchr(d, '\n', n);
		size_t k = nl ? (size_t)(nl - d) : n;
		if (!t->discarding && t->line.len + k > max) {
			jig_acp_end(t, OUT_FAILED, "the client sent a line over %zu bytes", max);
			t->discarding = true; /* counted, as one skipped line, at its newline */
			t->line.len = 0;
		} else if (!t->discarding && jig_buf_add(&t->line, d, k) < 0) {
			jig_acp_end(t, OUT_FAILED, "out of memory");
			t->discarding = true;
		}
		if (!nl)
			return;
		if (t->discarding) {
			t->n.lines++;
			t->n.skipped_lines++;
		} else {
			jig_acp_line(t, t->line.p ? t->line.p : "", t->line.len);
		}
		t->discarding = false;
		t->line.len = 0;
		d += k + 1;
		n -= k + 1;
	}
}

void jig_acp_drain(struct turn *t)
{
	char chunk[65536];
	for (size_t got = 0; got < READ_BUDGET;) {
		ssize_t n = read(t->c.out, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			t->drained = true;
			return;
		}
		if (n <= 0) {
			t->eof = t->drained = true;
			/* A last line without its newline is still a line. */
			if (t->line.len && !t->discarding)
				jig_acp_line(t, t->line.p, t->line.len);
			t->line.len = 0;
			return;
		}
		t->drained = false;
		t->n.bytes_in += n;
		got += (size_t)n;
		take(t, chunk, (size_t)n);
	}
}

/* One wait for the client, until `until` at most, then what it allows:
 * write what waits, read what arrived, notice its exit. */
void jig_acp_pump(struct turn *t, int64_t until)
{
	struct pollfd p[3];
	nfds_t n = 0;
	int rd = -1, wr = -1, ex = -1;
	if (!t->eof)
		rd = (int)n, p[n++] = (struct pollfd){.fd = t->c.out, .events = POLLIN};
	/* Its input always: POLLERR says it closed its end, even when nothing
	 * waits to be written. */
	if (t->c.in >= 0)
		wr = (int)n, p[n++] = (struct pollfd){.fd = t->c.in, .events = t->out_off < t->out.len ? POLLOUT : 0};
	if (t->c.pidfd >= 0 && !t->c.exited)
		ex = (int)n, p[n++] = (struct pollfd){.fd = t->c.pidfd, .events = POLLIN};
	int64_t wait = until - jig_acp_now_ms();
	wait = wait < 0 ? 0 : wait > 60000 ? 60000 : wait;
	if (t->c.pidfd < 0 && wait > 50)
		wait = 50; /* no pidfd: look for its exit now and then */
	if (poll(p, n, (int)wait) <= 0)
		return;
	if (wr >= 0 && (p[wr].revents & (POLLERR | POLLHUP)) && !(p[wr].revents & POLLOUT))
		input_gone(t);
	else if (wr >= 0 && p[wr].revents)
		flush(t);
	if (rd >= 0 && p[rd].revents)
		jig_acp_drain(t);
	if (ex >= 0 && p[ex].revents)
		jig_acp_client_exited(&t->c);
}

