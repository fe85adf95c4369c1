/* Notes (issue 48, decision 323): a line a room has for the operator that
 * is no failure and no result — what a sweep removed or kept, a mode put
 * back, a key set aside, a module's words, a lost supervisor. Only
 * host/cli/ prints: a room writes its note here, and the command says,
 * once at its start, which stream notes go to (jig_note_to). Until then,
 * and in a program that never says, a note goes nowhere. Inherited across
 * fork (the reaper's one line). */
#ifndef JIG_UTIL_NOTE_H
#define JIG_UTIL_NOTE_H

#include <stdio.h>

/* The commands' stream for notes (host/cli/: stderr), or NULL for none. */
void jig_note_to(FILE *f);
/* That stream, for a report of several lines; NULL when none. */
FILE *jig_note_stream(void);
/* One line: "jig: " and the text, a newline added; the progress status
 * erased first. The caller makes text not of jig's inert (util/text.h). */
void jig_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
