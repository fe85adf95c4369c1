/* The session runtime tests' world (issue 34): a private mount namespace
 * with a fresh tmpfs on /run (so /run/user/<uid> is the test's own and any
 * component can be made a symbolic link) and one on /sys/fs/cgroup (fake
 * cgroups with the cgroup.events a test writes). Nothing is seen outside
 * the test process; the tests run as root (the plain lane) and fail, never
 * skip, otherwise. */
#ifndef JIG_TESTS_SESSION_RT_FIXTURE_H
#define JIG_TESTS_SESSION_RT_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/note.h"

static char rt_xdg[64];

static void rt_sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture: %s failed\n", cmd);
		exit(2);
	}
}

/* Once, before the tests: the private namespace. */
static void rt_world(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("jig-test-run", "/run", "tmpfs", 0, "mode=0755") < 0 ||
	    mount("jig-test-cgroup", "/sys/fs/cgroup", "tmpfs", 0, "mode=0755") < 0) {
		fprintf(stderr, "these tests need root and a private mount namespace (the plain lane has both): %s\n", strerror(errno));
		exit(1);
	}
	snprintf(rt_xdg, sizeof(rt_xdg), "/run/user/%u", (unsigned)geteuid());
	rt_sh("touch /run/.jig-test-world /sys/fs/cgroup/.jig-test-world");
}

/* Each test: an empty /run/user/<uid> (0700, root's), XDG_RUNTIME_DIR set. */
static int rt_fresh(void **state)
{
	(void)state;
	/* The markers (dot files: the globs keep them) prove these are the
	 * test's own tmpfs mounts before anything is removed. */
	rt_sh("test -e /run/.jig-test-world && test -e /sys/fs/cgroup/.jig-test-world && rm -rf /run/* /sys/fs/cgroup/* && "
	      "mkdir -m 0755 /run/user");
	if (mkdir(rt_xdg, 0700) < 0 || chmod(rt_xdg, 0700) < 0)
		exit(2);
	setenv("XDG_RUNTIME_DIR", rt_xdg, 1);
	return 0;
}

static uid_t rt_jigtest(void)
{
	struct passwd *pw = getpwnam("jigtest");
	if (!pw) {
		fprintf(stderr, "user jigtest is missing (the plain lane has it)\n");
		exit(1);
	}
	return pw->pw_uid;
}

/* stderr captured into a file while a call runs. */
static int rt_saved_stderr = -1;
static char rt_said[8192];
static __attribute__((unused)) void rt_capture(void)
{
	fflush(stderr);
	jig_note_to(stderr); /* the rooms' notes, as host/cli sends them */
	rt_saved_stderr = dup(2);
	int fd = open("/run/said", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	dup2(fd, 2);
	close(fd);
}
static __attribute__((unused)) const char *rt_captured(void)
{
	fflush(stderr);
	dup2(rt_saved_stderr, 2);
	close(rt_saved_stderr);
	int fd = open("/run/said", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, rt_said, sizeof(rt_said) - 1) : 0;
	rt_said[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink("/run/said");
	fputs(rt_said, stderr); /* still shown in the test's log */
	return rt_said;
}

#endif
