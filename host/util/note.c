#include "util/note.h"

#include <stdarg.h>

#include "util/progress.h"

static FILE *notes;

void jig_note_to(FILE *f)
{
	notes = f;
}

FILE *jig_note_stream(void)
{
	return notes;
}

void jig_note(const char *fmt, ...)
{
	if (!notes)
		return;
	jig_progress_clear();
	va_list ap;
	va_start(ap, fmt);
	fputs("jig: ", notes);
	vfprintf(notes, fmt, ap);
	fputc('\n', notes);
	va_end(ap);
	fflush(notes);
}
