/* Progress on the operator's terminal (issue 35): what jig review and
 * jig run are doing — capturing, preparing dependencies, launching, each
 * effect and child as it starts and ends — on stderr, only when host/cli
 * turned it on: stderr a terminal and no --json. Off, every call is
 * nothing, so the rooms below call it freely (decision 169).
 *
 * A status ("jig: [  3.2s] launching flow x") overwrites the one before
 * it with \r and is cut to the terminal's width; a line (an effect or a
 * child that ended) stays. Every text is made inert (util/text.h) whole
 * before it is written: names and error text that did not come from jig
 * cannot move the cursor. Safe from several threads and across fork (the
 * state is inherited; a child process writes its own lines). */
#ifndef JIG_UTIL_PROGRESS_H
#define JIG_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* On if fd is a terminal; the elapsed time
 * counts from here. Returns whether it is on. */
bool jig_progress_start(int fd);
bool jig_progress_on(void);
/* A status: overwritten by the next status or line. */
void jig_progress_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line that stays. */
void jig_progress_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Erases the status, if any (before the command prints its own lines). */
void jig_progress_clear(void);
/* n bytes in a human unit ("512 B", "12.0 KiB", "3.4 MiB"). */
void jig_progress_bytes(char *out, size_t cap, uint64_t n);
/* CLOCK_MONOTONIC in ms, for the caller's own durations. */
long long jig_progress_now_ms(void);

#endif
