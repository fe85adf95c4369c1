/* The ACP worker's request (jig-acp-request/1), read from a descriptor. */
#include <sys/mman.h>

#include "fuzz.h"
#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	int fd = memfd_create("request", MFD_CLOEXEC);
	if (fd < 0 || (n && write(fd, d, n) != (ssize_t)n) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	struct jig_acp_request r;
	char why[512];
	jig_acp_request_read(&r, fd, why, sizeof(why));
	jig_acp_request_free(&r);
	close(fd);
	return 0;
}
