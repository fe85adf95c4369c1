/* The Flow output with hidden import stages (docs/decisions.md 115).
 *
 * The supervisor is the scope's user namespace's owner (same uid, the
 * parent namespace), so it has every capability over it. A helper forked
 * from it enters the scope's user namespace (the one that owns its mount
 * namespace) and the mount namespace, and before the payload starts:
 *
 *   fsopen("tmpfs") size=BYTES, mode=0700 → fsmount: the output's root
 *   root/pub (0755), root/stage (0700)
 *   root attached over the mount point (the launcher's descriptor), pub
 *   cloned from it, root detached again (MNT_DETACH: it lives on through
 *   the descriptor), the clone of pub attached at the mount point
 *
 * so the scope's mount table holds only pub; the root with its stages is
 * reachable by no path in the scope, only through the descriptor the
 * helper hands back. Only raw system calls run in the helper (it is
 * forked from a multi-threaded process). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x40
#endif

struct answer {
	int err;
	char what[64];
};

static int sys_fsopen(const char *fs, unsigned flags)
{
	return (int)syscall(SYS_fsopen, fs, flags);
}

static int sys_fsconfig(int fd, unsigned cmd, const char *key, const char *value)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, 0);
}

static int sys_fsmount(int fd, unsigned flags, unsigned attrs)
{
	return (int)syscall(SYS_fsmount, fd, flags, attrs);
}

static int sys_move_mount(int from, const char *fpath, int to, const char *tpath, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from, fpath, to, tpath, flags);
}

static int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

/* Sends a (and the root, when >= 0) and exits. */
static _Noreturn void answer(int sock, int root, int err, const char *what)
{
	struct answer a = {.err = err};
	for (size_t i = 0; what[i] && i + 1 < sizeof(a.what); i++)
		a.what[i] = what[i];
	struct iovec iov = {.iov_base = &a, .iov_len = sizeof(a)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (root >= 0) {
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &root, sizeof(int));
	}
	sendmsg(sock, &m, MSG_NOSIGNAL);
	_exit(0);
}

#define FAIL(what) answer(sock, -1, errno ? errno : EIO, what)

/* In the helper: everything of the header comment, then the root to sock. */
static _Noreturn void helper(int mntns, int point, const char *size, int sock)
{
	errno = 0;
	int userns = ioctl(mntns, NS_GET_USERNS);
	if (userns < 0)
		FAIL("output: the scope's user namespace");
	if (setns(userns, CLONE_NEWUSER) < 0)
		FAIL("output: entering the scope's user namespace");
	if (setns(mntns, CLONE_NEWNS) < 0)
		FAIL("output: entering the scope's mount namespace");
	int fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || sys_fsconfig(fs, FSCONFIG_SET_STRING, "size", size) < 0 ||
	    sys_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700") < 0 || sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) < 0)
		FAIL("output: creating its tmpfs");
	int root = sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0)
		FAIL("output: mounting its tmpfs");
	if (mkdirat(root, "pub", 0755) < 0 || mkdirat(root, "stage", 0700) < 0)
		FAIL("output: its directories");
	/* A detached mount cannot be cloned (Linux 6.1): the root is attached
	 * over the mount point for the clone of pub, then detached again. */
	if (sys_move_mount(root, "", point, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		FAIL("output: attaching its root");
	int pub = sys_open_tree(root, "pub", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (pub < 0)
		FAIL("output: cloning its public directory");
	/* The mount point as the working directory: "." is the top of what
	 * is mounted there, the root, for umount. */
	if (fchdir(point) < 0 || umount2(".", MNT_DETACH) < 0)
		FAIL("output: detaching its root");
	if (sys_move_mount(pub, "", point, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		FAIL("output: attaching its public directory");
	answer(sock, root, 0, "");
}

int jig_output_project(int mntns, int point, uint64_t bytes, int *root, char *what, size_t whatlen)
{
	*root = -1;
	char size[32];
	snprintf(size, sizeof(size), "%llu", (unsigned long long)bytes);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(what, whatlen, "output: socketpair");
		return errno;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper(mntns, point, size, sv[1]);
	}
	int err = errno;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		snprintf(what, whatlen, "output: fork");
		return err;
	}
	struct answer a = {.err = EIO};
	struct iovec iov = {.iov_base = &a, .iov_len = sizeof(a)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	while ((n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	int passed = -1;
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&passed, CMSG_DATA(c), sizeof(int));
	close(sv[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(a) || a.err || passed < 0) {
		if (passed >= 0)
			close(passed);
		a.what[sizeof(a.what) - 1] = '\0';
		snprintf(what, whatlen, "%s", n == (ssize_t)sizeof(a) && a.what[0] ? a.what : "output: its helper failed");
		return a.err ? a.err : EIO;
	}
	*root = passed;
	return 0;
}
