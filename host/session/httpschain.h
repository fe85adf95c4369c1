/* The session's HTTPS chain (issue 45, Slice 4A, decisions 290-294): the
 * map's approved HTTPS hosts per context (alias, host, port, the
 * operator's CA file, an optional credential file). Before the launch and
 * before each brokered request that reaches an HTTPS remote, jig (outside
 * every scope) checks the CA file and the credential file (regular, the
 * caller's, not writable by others (the credential file not readable by
 * them either), physical, in trusted directories, outside every
 * repository). The brokered git's scope for such a request gets exactly
 * the host's HOST:PORT through jig's CONNECT relay (decision 310), the CA file and the credential file read-only,
 * and jig's configuration in its environment (GIT_CONFIG_COUNT): TLS
 * verification on against that CA only, no proxy, the credential given by
 * a helper that reads the bound file. The agent's scope sees none of it. */
#ifndef JIG_SESSION_HTTPSCHAIN_H
#define JIG_SESSION_HTTPSCHAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy/session_policy.h" /* JIG_HTTPS_CA_TARGET, JIG_HTTPS_CRED_TARGET */
#include "util/error.h"


/* "https://HOST[:PORT]/PATH" (no user information, no query or fragment):
 * HOST (an IPv6 literal keeps its brackets) into host, PORT (443 when
 * absent) into *port. 0, or -1 when u is not that shape. Pure. */
int jig_https_url(const char *u, char *host, size_t cap, long *port);

/* The alias of the context's HTTPS host (hosts: contexts.<c>.https_hosts)
 * that u reaches, or NULL. */
const char *jig_https_host_of(json_t *hosts, const char *u);

/* An HTTPS host's files: its CA file and its credential file (when the map
 * names one) checked. -code with one line naming the host and the file. */
int jig_https_host_check(const char *alias, json_t *h, json_t *repositories, struct jig_error *e);

/* For each HTTPS host the repository's git_remotes name:
 * jig_https_host_check. -code with e. */
int jig_https_chain_check(json_t *map_doc, json_t *repo, const char *context, struct jig_error *e);


#endif
