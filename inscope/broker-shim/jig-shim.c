/* jig's `git` and `ssh` inside a session's scope (Slice 4A; docs/session.md
 * "Git through jig"): sends its name, its working directory and its
 * arguments, with its descriptors 0, 1 and 2, to jig's broker outside the
 * scope, and exits with the status jig sends back. Nothing else: no
 * environment is forwarded, and every decision is jig's. The socket is
 * the session's, bound read-only at /.jig/broker/sock.
 * Static (musl), like jig-session-probe. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PROTO "jig-broker/1"
#define MAX_REQ (64u << 10)

static int die(const char *name, const char *what)
{
	fprintf(stderr, "jig: %s: %s\n", name, what);
	return 126;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "/.jig/broker/sock"};
	static char req[MAX_REQ];
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return die(name, "the working directory is unknown");
	size_t n = (size_t)snprintf(req, sizeof(req), "%s%c%s", PROTO, 0, cwd) + 1;
	const char *first = strcmp(name, "ssh") == 0 ? "ssh" : "git";
	for (int i = 0; i <= argc - 1; i++) {
		const char *a = i == 0 ? first : argv[i];
		size_t l = strlen(a) + 1;
		if (n + l > sizeof(req))
			return die(name, "the arguments are too long for the broker");
		memcpy(req + n, a, l);
		n += l;
	}
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return die(name, "jig's broker does not answer");
	int fds[3] = {0, 1, 2};
	union {
		char b[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = {.iov_base = req, .iov_len = n};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b)};
	struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(h), fds, sizeof(fds));
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return die(name, strerror(errno));
	uint32_t st;
	ssize_t r;
	while ((r = recv(s, &st, sizeof(st), 0)) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)sizeof(st))
		return die(name, "jig's broker ended without a status");
	return st > 255 ? 126 : (int)st;
}
