#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

int jig_err(struct jig_error *e, int code, const char *fmt, ...)
{
	if (e) {
		char raw[sizeof(e->msg)];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(raw, sizeof(raw), fmt, ap);
		va_end(ap);
		/* One inert line, always: messages name objects the operator did
		 * not write (file names, a Flow's text), and a multi-line message
		 * or a terminal escape in one could hide or forge what follows. */
		jig_text_inert(e->msg, sizeof(e->msg), raw, strlen(raw));
		e->code = code;
	}
	return -code;
}

int jig_err_prefix(struct jig_error *e, int code, const char *fmt, ...)
{
	if (!e)
		return -code;
	char prefix[sizeof(e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	return jig_err(e, code, "%s%s", prefix, e->msg);
}
