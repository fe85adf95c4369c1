#include "util/progress.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/text.h"

/* The erase: to the line's start, then clear to its end (jig's own
 * control sequence; nothing from the text can produce one). */
#define ERASE "\r\033[K"

static struct {
	pthread_mutex_t lock;
	int fd; /* -1: off */
	long long t0;
	bool status; /* a status is on the screen */
} pr = {PTHREAD_MUTEX_INITIALIZER, -1, 0, false};

long long jig_progress_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool jig_progress_start(int fd)
{
	if (!isatty(fd))
		return false;
	pr.fd = fd;
	pr.t0 = jig_progress_now_ms();
	return true;
}

bool jig_progress_on(void)
{
	return pr.fd >= 0;
}

static void put(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(pr.fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* "jig: [  3.2s] " + the inert text, cut for a status to the width. */
static void emit(bool stays, const char *fmt, va_list ap)
{
	char raw[1024], inert[1024], line[1200];
	vsnprintf(raw, sizeof(raw), fmt, ap);
	jig_text_inert(inert, sizeof(inert), raw, strlen(raw));
	long long ms = jig_progress_now_ms() - pr.t0;
	int n = snprintf(line, sizeof(line), ERASE "jig: [%3lld.%llds] %s", ms / 1000, (ms % 1000) / 100, inert);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (!stays) { /* one row: a status that wraps could not be overwritten */
		struct winsize ws;
		size_t cols = ioctl(pr.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
		size_t max = strlen(ERASE) + cols - 1;
		if (len > max) /* bytes >= columns for UTF-8: never too long */
			len = strlen(ERASE) + jig_text_utf8_prefix(line + strlen(ERASE), len - strlen(ERASE), cols - 1);
	}
	pthread_mutex_lock(&pr.lock);
	put(line, len);
	if (stays)
		put("\n", 1);
	pr.status = !stays;
	pthread_mutex_unlock(&pr.lock);
}

void jig_progress_status(const char *fmt, ...)
{
	if (pr.fd < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(false, fmt, ap);
	va_end(ap);
}

void jig_progress_line(const char *fmt, ...)
{
	if (pr.fd < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(true, fmt, ap);
	va_end(ap);
}

void jig_progress_clear(void)
{
	if (pr.fd < 0)
		return;
	/* Always erased: another process (the Run's coordinator) may have
	 * left a status on the row; on an empty row this shows nothing. */
	pthread_mutex_lock(&pr.lock);
	put(ERASE, strlen(ERASE));
	pr.status = false;
	pthread_mutex_unlock(&pr.lock);
}

void jig_progress_bytes(char *out, size_t cap, uint64_t n)
{
	if (n < 1024)
		snprintf(out, cap, "%llu B", (unsigned long long)n);
	else if (n < (1u << 20))
		snprintf(out, cap, "%.1f KiB", (double)n / 1024);
	else if (n < (1ull << 30))
		snprintf(out, cap, "%.1f MiB", (double)n / (1 << 20));
	else
		snprintf(out, cap, "%.1f GiB", (double)n / (1 << 30));
}
