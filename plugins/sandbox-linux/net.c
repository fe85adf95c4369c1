/* A scope's exact loopback endpoints (ABI 1.6, issue 34, decision 140).
 *
 * The scope has its own network namespace (bwrap --unshare-net: only lo,
 * brought up by bwrap). The launcher sends that namespace (its
 * /proc/self/ns/net) before the payload starts; a helper forked from the
 * supervisor enters the user namespace that owns it (the supervisor's
 * uid owns that, so the helper has every capability over it) and the
 * network namespace, creates one listening TCP socket per endpoint bound
 * to its address and port there, and sends them back (SCM_RIGHTS). The
 * sockets stay in the scope's namespace wherever they are held: the host
 * accepts on them and relays from outside the scope (sandbox/netrelay.c).
 * Only raw system calls run in the helper (it is forked from a
 * multi-threaded process). */
#include "net.h"

#include <errno.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct answer {
	int err;
	char what[64];
};

#define CMSG_FDS_SPACE CMSG_SPACE(JIG_NET_MAX_LISTENERS * sizeof(int))

static _Noreturn void answer(int sock, const int *fds, uint32_t n, int err, const char *what)
{
	struct answer a = {.err = err};
	for (size_t i = 0; what[i] && i + 1 < sizeof(a.what); i++)
		a.what[i] = what[i];
	struct iovec iov = {.iov_base = &a, .iov_len = sizeof(a)};
	union {
		char buf[CMSG_FDS_SPACE];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (n) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	sendmsg(sock, &m, MSG_NOSIGNAL);
	_exit(0);
}

#define FAIL(what) answer(sock, NULL, 0, errno ? errno : EIO, what)

static _Noreturn void helper(int netns, const struct jig_scope_listener *l, uint32_t n, int sock)
{
	errno = 0;
	int userns = ioctl(netns, NS_GET_USERNS);
	if (userns < 0)
		FAIL("network: the scope's user namespace");
	if (setns(userns, CLONE_NEWUSER) < 0)
		FAIL("network: entering the scope's user namespace");
	if (setns(netns, CLONE_NEWNET) < 0)
		FAIL("network: entering the scope's network namespace");
	int fds[JIG_NET_MAX_LISTENERS];
	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(l[i].port),
					 .sin_addr.s_addr = htonl(l[i].ipv4)};
		int one = 1;
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
			FAIL("network: a listening socket");
		if (bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0)
			FAIL("network: binding an endpoint in the scope");
		if (listen(fds[i], 64) < 0)
			FAIL("network: listening on an endpoint in the scope");
	}
	answer(sock, fds, n, 0, "");
}

int jig_net_listen(int netns, const struct jig_scope_listener *l, uint32_t n, int *fds, char *what, size_t whatlen)
{
	if (n == 0 || n > JIG_NET_MAX_LISTENERS) {
		snprintf(what, whatlen, "network: %u endpoints; at most %d", n, JIG_NET_MAX_LISTENERS);
		return EINVAL;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(what, whatlen, "network: socketpair");
		return errno;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper(netns, l, n, sv[1]);
	}
	int err = errno;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		snprintf(what, whatlen, "network: fork");
		return err;
	}
	struct answer a = {.err = EIO};
	struct iovec iov = {.iov_base = &a, .iov_len = sizeof(a)};
	union {
		char buf[CMSG_FDS_SPACE];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	ssize_t got;
	while ((got = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	uint32_t passed = 0;
	for (struct cmsghdr *c = got > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && passed == 0) {
			passed = (uint32_t)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), passed * sizeof(int));
		}
	close(sv[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(a) || a.err || passed != n || (m.msg_flags & MSG_CTRUNC)) {
		for (uint32_t i = 0; i < passed; i++)
			close(fds[i]);
		a.what[sizeof(a.what) - 1] = '\0';
		snprintf(what, whatlen, "%s", got == (ssize_t)sizeof(a) && a.what[0] ? a.what : "network: its helper failed");
		return a.err ? a.err : EIO;
	}
	return 0;
}
