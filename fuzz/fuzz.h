/* Shared by the libFuzzer harnesses (fuzz/README.md): split an input in
 * two at its first NUL byte, and write bytes to a file of a private
 * scratch directory for parsers that read from a directory. */
#ifndef JIG_FUZZ_H
#define JIG_FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a: the bytes before the first NUL (or all), b: those after (or none). */
static inline void fuzz_split(const uint8_t *d, size_t n, const char **a, size_t *an, const char **b, size_t *bn)
{
	const uint8_t *z = memchr(d, 0, n);
	*a = (const char *)d;
	*an = z ? (size_t)(z - d) : n;
	*b = z ? (const char *)z + 1 : "";
	*bn = z ? n - *an - 1 : 0;
}

/* A scratch directory of this process (made once). */
static inline const char *fuzz_dir(void)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/jig-fuzz.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}

/* Writes (replacing) rel below the scratch directory. */
static inline void fuzz_put(const char *rel, const void *d, size_t n)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", fuzz_dir(), rel);
	unlink(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || (n && write(fd, d, n) != (ssize_t)n))
		abort();
	close(fd);
}

static inline char *fuzz_cstr(const void *d, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, d, n);
	s[n] = '\0';
	return s;
}

#endif
