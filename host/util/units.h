/* Human units beside exact values (issue 35): jig inspect prints a record's
 * byte counts, durations and times both ways, "12345678 bytes (11.8 MiB)".
 * Each writes at most cap bytes (NUL included) into buf and returns buf. */
#ifndef JIG_UTIL_UNITS_H
#define JIG_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "40 B", "1.5 KiB", "11.8 MiB", "512 MiB", "2 GiB" (binary multiples). */
char *jig_units_bytes(char *buf, size_t cap, uint64_t n);
/* "87 ms", "2.1 s", "3 min 5 s", "1 h 2 min". */
char *jig_units_ms(char *buf, size_t cap, uint64_t ms);
/* CPU time: "0.004 s", "1.23 s", "75 s". */
char *jig_units_usec(char *buf, size_t cap, uint64_t usec);
/* A wall-clock time in ms since the epoch, in UTC: "2023-11-14 22:13:20.000 UTC";
 * "?" for a value that is not a time. */
char *jig_units_date(char *buf, size_t cap, long long epoch_ms);

#endif
