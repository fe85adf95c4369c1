/* The prebuilt seccomp programs (jig-filter-gen, at build time) into a
 * sealed memfd for bwrap's --seccomp FD: no libseccomp work per launch. */
#include "filter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int jig_filter_open(enum jig_filter_net net, int *out_fd, char *err, size_t errlen)
{
	const unsigned char *prog = net == JIG_FILTER_HOST ? jig_filter_host : net == JIG_FILTER_INET ? jig_filter_inet : jig_filter_none;
	size_t len = net == JIG_FILTER_HOST ? jig_filter_host_len : net == JIG_FILTER_INET ? jig_filter_inet_len : jig_filter_none_len;
	int fd = memfd_create("jig-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (write(fd, prog, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		snprintf(err, errlen, "sealing the seccomp filter: %s", strerror(errno));
		close(fd);
		return -1;
	}
	*out_fd = fd;
	return 0;
}
