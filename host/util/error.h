/* Errors: functions return 0 or a negative code and fill a caller-owned
 * struct jig_error with one line that names the object, what is wrong and
 * what the operator can do. The code doubles as the process exit status. */
#ifndef JIG_UTIL_ERROR_H
#define JIG_UTIL_ERROR_H

/* The --json form of a failure: {"schema": JIG_ERROR_SCHEMA, "exit", "error"}. */
#define JIG_ERROR_SCHEMA "jig-error/1"

enum jig_code {
	JIG_OK = 0,
	JIG_E_INTERNAL = 1,  /* bug, resource exhaustion, unexpected I/O */
	JIG_E_USAGE = 2,     /* bad command line or bad input */
	JIG_E_HOST = 3,      /* this host cannot enforce what jig needs */
	JIG_E_INTEGRITY = 4, /* snapshot, signature or module refused */
	JIG_E_NOT_ADMITTED = 5, /* review: the Plan was not admitted (declined, or no --yes and no terminal) */
	JIG_E_REGISTRY = 6,	/* dependency preparation could not reach or use the registry */
};

struct jig_error {
	int code;
	char msg[768];
};

/* Sets *e (if non-NULL) and returns -code. The arguments may include
 * e->msg itself: the text is formatted apart first. */
int jig_err(struct jig_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Puts the formatted text before e's message and sets its code: one error
 * told again in its caller's words ("flow x: " + what its check said).
 * Returns -code. */
int jig_err_prefix(struct jig_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
