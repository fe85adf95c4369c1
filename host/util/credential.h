/* The credential scan (issue 48): used at review on a Flow's captured
 * lock and manifest (flow/capture.c) and by the dependency checks
 * (prepare/deps.c, prepare/prepare.c). */
#ifndef JIG_UTIL_CREDENTIAL_H
#define JIG_UTIL_CREDENTIAL_H

#include <stddef.h>

/* Where buf (a lock or manifest, n bytes) holds a credential: the line
 * (1-based) of the first URL with a user name or password
 * ("scheme://user:password@host"), or of an npm credential setting
 * (_authToken, _auth, _password); 0 if none. *what says which, as a
 * phrase that never contains the credential (R-C14: secrets never enter
 * locks; the refusal must not print one either). */
size_t jig_credential_line(const char *buf, size_t n, const char **what);

#endif
