/* The scope's seccomp filter, built with libseccomp at build time by
 * jig-filter-gen (filter_gen.c) and embedded in the module; a launch hands
 * the prebuilt BPF program to bwrap in a sealed memfd (--seccomp FD,
 * filter_embedded.c).
 *
 * Default allow with an explicit deny list: at least what flatpak, firejail
 * @default and codex deny. Denials return an errno (EPERM, or ENOSYS where
 * callers must fall back, as for clone3); non-native ABIs (i386 through
 * int 0x80, x32) kill the process. Bun's JIT needs mmap/mprotect with
 * PROT_EXEC, which stay allowed. */
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Denied with EPERM. Names libseccomp does not know on this arch are skipped
 * (seccomp_syscall_resolve_name returns __NR_SCMP_ERROR). */
static const char *const denied_eperm[] = {
	/* tracing and other processes' memory */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	/* keyrings */
	"keyctl", "add_key", "request_key",
	/* kernel attack surface */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register",
	/* namespaces */
	"unshare", "setns",
	/* mounts, old and new API */
	"mount", "umount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
	"fsconfig", "fsmount", "fspick", "mount_setattr",
	/* modules and kexec */
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	/* host administration */
	"reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime", "iopl", "ioperm",
	"vhangup", "nfsservctl", "lookup_dcookie", "uselib", "sysfs", "_sysctl",
	/* handles and notification that reach outside the mount view */
	"open_by_handle_at", "name_to_handle_at", "fanotify_init",
	/* NUMA and page migration of other tasks */
	"move_pages", "migrate_pages",
	/* x86 segment descriptors: kernel attack surface no payload needs */
	"modify_ldt",
	/* another process's memory through a pidfd (the launcher's too) */
	"process_madvise", "process_mrelease",
	NULL,
};

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
	       const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0;
	int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	/* -EFAULT: the syscall does not exist on the native arch (e.g. stime). */
	return r == -EFAULT ? 0 : r;
}

static int deny_other_process(scmp_filter_ctx ctx)
{
	static const char *const pid_first[] = {"sched_setaffinity", "sched_setscheduler", "sched_setparam",
						"sched_setattr"};
	int r = 0;
	for (size_t i = 0; r == 0 && i < sizeof(pid_first) / sizeof(pid_first[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_NE, 0);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), pid_first[i], 1, &c);
	}
	if (r == 0) {
		struct scmp_arg_cmp c[] = {SCMP_A0(SCMP_CMP_NE, 0), SCMP_A2(SCMP_CMP_NE, 0)};
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), "prlimit64", 2, c);
	}
	/* setpriority(which, who, prio) and ioprio_set(which, who, prio): only
	 * the calling process itself (PRIO_USER/PRIO_PGRP with who 0 would
	 * reach every process of the uid, pid 1 included). */
	static const struct {
		const char *name;
		uint64_t self_which;
	} which_who[] = {{"setpriority", 0 /* PRIO_PROCESS */}, {"ioprio_set", 1 /* IOPRIO_WHO_PROCESS */}};
	for (size_t i = 0; r == 0 && i < 2; i++) {
		struct scmp_arg_cmp w = SCMP_A0(SCMP_CMP_NE, which_who[i].self_which);
		struct scmp_arg_cmp who = SCMP_A1(SCMP_CMP_NE, 0);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), which_who[i].name, 1, &w);
		if (r == 0)
			r = add(ctx, SCMP_ACT_ERRNO(EPERM), which_who[i].name, 1, &who);
	}
	return r;
}

int jig_filter_build(enum jig_filter_net net, int *out_fd, char *err, size_t errlen)
{
	int network_host = net == JIG_FILTER_HOST, inet = net != JIG_FILTER_NONE;
	int fd = -1;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return -1;
	}
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* A binary tree of syscall numbers instead of a linear list: every
	 * allowed syscall of the payload pays for the filter. */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	/* Only the native ABI is in the filter; libseccomp adds the x32 check
	 * on x86_64, so an x32 syscall number takes the bad-arch action too. */
	for (const char *const *n = denied_eperm; r == 0 && *n; n++)
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), *n, 0, NULL);
	/* glibc falls back from clone3 to clone on ENOSYS; clone's flags can
	 * then be inspected, clone3's (in memory) cannot. */
	if (r == 0)
		r = add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	static const uint64_t ns_flags[] = {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
					    CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};
	for (size_t i = 0; r == 0 && i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &c);
	}
	/* The payload has the launcher's uid inside the user namespace, so the
	 * kernel would let it re-tune pid 1 (the trusted launcher). Calls that
	 * change a process's limits, scheduling, affinity or I/O priority may
	 * only name the caller itself (pid 0, compared as 64 bits: a value with
	 * high bits set is refused too, though the kernel would read it as 0).
	 * Reading is harmless; prlimit64 is refused only with a new limit. */
	if (r == 0)
		r = deny_other_process(ctx);
	/* personality: only plain PER_LINUX, as flatpak (READ_IMPLIES_EXEC,
	 * ADDR_NO_RANDOMIZE, uname faking are refused; so is the query). */
	if (r == 0) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_NE, 0);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), "personality", 1, &c);
	}
	/* Terminal injection: the request is an int, so compare its low 32 bits
	 * only (a high-bit variant must not slip past). */
	static const uint64_t ioctls[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; r == 0 && i < 2; i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, ioctls[i]);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c);
	}
	/* Socket families: unix always; inet/inet6 only on the host network or
	 * in a private namespace with exact endpoints (only lo exists there).
	 * Everything else (netlink, packet, vsock, bluetooth, alg, ...) gets
	 * EAFNOSUPPORT, as if the kernel lacked it. The family is an int but
	 * compared as 64 bits: a value with high bits set is refused even if it
	 * would truncate to an allowed family. Ranges keep the filter short. */
	static const uint64_t none_ranges[][2] = {{0, 0}, {2, UINT64_MAX}};
	static const uint64_t host_ranges[][2] = {{0, 0}, {3, 9}, {11, UINT64_MAX}};
	const uint64_t (*ranges)[2] = inet ? host_ranges : none_ranges;
	size_t nranges = inet ? 3 : 2;
	static const char *const sockcalls[] = {"socket", "socketpair"};
	for (size_t k = 0; r == 0 && k < 2; k++)
		for (size_t i = 0; r == 0 && i < nranges; i++) {
			uint64_t lo = ranges[i][0], hi = ranges[i][1];
			if (lo == hi) {
				struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, lo);
				r = add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), sockcalls[k], 1, &c);
			} else if (hi == UINT64_MAX) {
				struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_GE, lo);
				r = add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), sockcalls[k], 1, &c);
			} else {
				for (uint64_t f = lo; r == 0 && f <= hi; f++) {
					struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, f);
					r = add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), sockcalls[k], 1, &c);
				}
			}
		}
	/* Raw sockets even where inet is allowed (the type's low 4 bits). */
	if (r == 0 && inet) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW);
		r = add(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &c);
	}
	/* On the host network the host's abstract unix names (X11, D-Bus, ...)
	 * are in reach of socket(AF_UNIX) + connect, and a filter cannot read
	 * the address: no AF_UNIX socket() there. socketpair stays (connected
	 * pairs reach no name; runtimes use them for their children's stdio). */
	if (r == 0 && network_host) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, AF_UNIX);
		r = add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &c);
	}
	if (r != 0) {
		snprintf(err, errlen, "building the seccomp filter failed: %s", strerror(-r));
		goto fail;
	}
	fd = memfd_create("jig-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		goto fail;
	}
	r = seccomp_export_bpf(ctx, fd);
	if (r != 0) {
		snprintf(err, errlen, "exporting the seccomp filter failed: %s", strerror(-r));
		goto fail;
	}
	if (lseek(fd, 0, SEEK_SET) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		snprintf(err, errlen, "sealing the seccomp filter: %s", strerror(errno));
		goto fail;
	}
	seccomp_release(ctx);
	*out_fd = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return -1;
}
