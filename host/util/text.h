/* Inert text: how jig shows bytes that did not come from jig itself (a
 * Flow's error text and logs, file and attachment names, HTTP and worker
 * output, anything read back from a record or a packet) on a terminal.
 *
 * Every C0 control, DEL, C1 control (as U+0080..U+009F or as a raw byte),
 * invalid UTF-8, the Unicode bidirectional marks, embeddings, overrides
 * and isolates and the line/paragraph separators are shown escaped
 * (\n, \r, \t, \xNN, \uNNNN), so the text is always one line that cannot
 * move the cursor, set a title, write the clipboard, reorder what follows
 * or start a line that looks like jig's own. Printable text, UTF-8
 * included, is unchanged; escaping is idempotent (a backslash is kept as
 * it is). --json output is exact instead: see jig_json_print. */
#ifndef JIG_UTIL_TEXT_H
#define JIG_UTIL_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes the inert form of src[0..len) into dst (cap > 0), cut at a whole
 * escape or character, always NUL-terminated. Returns the length written. */
size_t jig_text_inert(char *dst, size_t cap, const char *src, size_t len);

/* The inert form of a NUL-terminated string, malloc'd (NULL only when out
 * of memory). NULL src gives "". */
char *jig_text_inert_dup(const char *src);

/* Writes the inert form of s (NULL: nothing) to f. */
void jig_text_put(FILE *f, const char *s);

/* Writes s (NULL: nothing) as lines, each inert: a line feed (or CR LF)
 * in s ends a line and the next starts after indent (jig's own, so a
 * Flow's text cannot start a line that looks like jig's); no line feed
 * after the last. A stack trace reads as lines, still inert. */
void jig_text_put_lines(FILE *f, const char *indent, const char *s);

/* The length of s's first line (before a line feed or CR LF; NULL: 0):
 * what a headline shows of a multi-line message. */
size_t jig_text_first_line(const char *s);

/* names[0..n) as "a, b, c" in buf (cut at cap), "none" when n is 0: what
 * a "no such" message lists of what there is. Returns buf. */
const char *jig_text_list(char *buf, size_t cap, char *const *names, size_t n);

/* How many of s's len bytes to keep to keep at most max without splitting
 * a UTF-8 sequence: len if it fits, else max backed up to a lead byte. */
size_t jig_text_utf8_prefix(const char *s, size_t len, size_t max);

#endif
