#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int jig_err(struct jig_error *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
		/* One line, always: a multi-line message hides its second half. */
		for (char *p = e->msg; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		e->code = code;
	}
	return -code;
}
