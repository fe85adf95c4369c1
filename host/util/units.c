/* Human units beside exact values (units.h). */
#include "util/units.h"

#include <stdio.h>
#include <time.h>

char *jig_units_bytes(char *buf, size_t cap, uint64_t n)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	if (n < 1024) {
		snprintf(buf, cap, "%llu B", (unsigned long long)n);
		return buf;
	}
	int u = 0;
	uint64_t div = 1024;
	while (u < 3 && n >= div * 1024) {
		div *= 1024;
		u++;
	}
	if (n % div == 0)
		snprintf(buf, cap, "%llu %s", (unsigned long long)(n / div), unit[u]);
	else
		snprintf(buf, cap, "%.1f %s", (double)n / (double)div, unit[u]);
	return buf;
}

char *jig_units_ms(char *buf, size_t cap, uint64_t ms)
{
	unsigned long long s = ms / 1000;
	if (ms < 1000)
		snprintf(buf, cap, "%llu ms", (unsigned long long)ms);
	else if (ms < 60000)
		snprintf(buf, cap, "%.1f s", (double)ms / 1000.0);
	else if (s < 3600)
		snprintf(buf, cap, "%llu min %llu s", s / 60, s % 60);
	else
		snprintf(buf, cap, "%llu h %llu min", s / 3600, s % 3600 / 60);
	return buf;
}

char *jig_units_usec(char *buf, size_t cap, uint64_t usec)
{
	double s = (double)usec / 1e6;
	snprintf(buf, cap, usec < 10000000 ? (usec < 1000000 ? "%.3f s" : "%.2f s") : "%.0f s", s);
	return buf;
}

char *jig_units_date(char *buf, size_t cap, long long epoch_ms)
{
	struct tm tm;
	time_t t = (time_t)(epoch_ms / 1000);
	if (epoch_ms < 0 || !gmtime_r(&t, &tm) || strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
		snprintf(buf, cap, "?");
		return buf;
	}
	size_t l = 0;
	while (buf[l])
		l++;
	snprintf(buf + l, cap - l, ".%03lld UTC", epoch_ms % 1000);
	return buf;
}
