/* jig's ssh ProxyCommand in the session's brokered git scope (issue 45,
 * decision 310): `jig-connect PROXY HOST:PORT` asks jig's CONNECT relay at
 * PROXY (127.0.0.1:PORT inside the scope's own network namespace) for
 * exactly HOST:PORT, and on "200" copies stdin to the tunnel and the
 * tunnel to stdout until both sides are done. The relay (outside the
 * scope, host/sandbox/netrelay.c) decides: only the map's approved host
 * and port, a name resolved outside the scope and refused when it answers
 * a loopback, link-local or unspecified address. Any other answer is one
 * line on stderr, "jig-connect: HOST:PORT: the relay answered: <status
 * line>", and exit 1 (ssh prints it and fails). Static (musl), like the
 * broker's shim. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_MAX 4096

static int die(const char *target, const char *what)
{
	fprintf(stderr, "jig-connect: %s: %s\n", target, what);
	return 1;
}

/* "127.0.0.1:PORT" into sa. */
static int proxy_addr(const char *s, struct sockaddr_in *sa)
{
	const char *colon = strrchr(s, ':');
	char ip[32];
	if (!colon || (size_t)(colon - s) >= sizeof(ip))
		return -1;
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		return -1;
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return 0;
}

static int write_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || strlen(argv[2]) > 300 || strpbrk(argv[2], " \t\r\n"))
		return die(argc > 2 ? argv[2] : "?", "usage: jig-connect 127.0.0.1:PORT HOST:PORT");
	const char *target = argv[2];
	struct sockaddr_in sa = {0};
	if (proxy_addr(argv[1], &sa) < 0)
		return die(target, "the relay's address is not 127.0.0.1:PORT");
	signal(SIGPIPE, SIG_IGN);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return die(target, "jig's relay is not there (the scope has no route but the relay)");
	char head[HEAD_MAX];
	int n = snprintf(head, sizeof(head), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	if (write_all(s, head, (size_t)n) < 0)
		return die(target, "the relay hung up");
	/* The answer's head, a byte at a time: nothing after it is read here
	 * (it is the server's first bytes, for ssh). */
	size_t got = 0;
	while (got < sizeof(head) - 1) {
		ssize_t k = read(s, head + got, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got++;
		if (got >= 4 && memcmp(head + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[got] = '\0';
	int whole = got >= 4 && memcmp(head + got - 4, "\r\n\r\n", 4) == 0;
	char *eol = strstr(head, "\r\n");
	if (eol)
		*eol = '\0';
	if (!whole) {
		char why[200];
		snprintf(why, sizeof(why), "the relay answered: %.120s", got ? head : "nothing");
		return die(target, why);
	}
	if (strncmp(head, "HTTP/1.1 200 ", 13) != 0) {
		char why[300];
		snprintf(why, sizeof(why), "the relay answered: %.200s", head);
		return die(target, why);
	}
	/* The tunnel: stdin -> s, s -> stdout; a finished side is passed on. */
	struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = s, .events = POLLIN}};
	char buf[16384];
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t k = read(p[i].fd, buf, sizeof(buf));
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k <= 0) {
				if (i == 0)
					shutdown(s, SHUT_WR);
				else
					close(1);
				p[i].fd = -1;
				continue;
			}
			if (write_all(i == 0 ? s : 1, buf, (size_t)k) < 0)
				return i == 0 ? 1 : 0;
		}
	}
	return 0;
}
