/* The relays of a scope's exact network grant (issue 34, decision 140):
 * for each loopback endpoint, what the scope connects to inside its own
 * network namespace is relayed to the host's same 127.0.0.1:PORT; at the
 * proxy endpoint, one HTTP CONNECT request is read and, for exactly a
 * granted HOST:PORT, the connection is relayed to it from the host's
 * network (a name-and-port rule, not an IP firewall). One thread for the
 * scope's lifetime, started before the launch, stopped and joined after
 * the scope is fenced. Every byte the scope sends is held in fixed
 * buffers; connections beyond JIG_NETRELAY_MAX_CONNS are refused. A
 * granted name (not an IP literal) any of whose addresses is this host's or link-local
 * (util/netaddr.h's jig_addr_local) is refused whole: "403 Forbidden: the
 * granted name resolves to a refused address (loopback)" (decision 218). */
#ifndef JIG_SANDBOX_NETRELAY_H
#define JIG_SANDBOX_NETRELAY_H

#include <stddef.h>
#include <stdint.h>

#include "policy/scope_policy.h"
#include "util/error.h"

struct jig_netrelay;

/* Starts the relay thread for p's endpoints (p->n_listeners > 0); it waits
 * for their sockets (jig_netrelay_listen_ready, struct jig_scope's
 * listen_ready). p must outlive the relay. */
int jig_netrelay_start(const struct jig_scope_policy *p, struct jig_netrelay **out, struct jig_error *e);
/* listen_ready: the module's listening socket for endpoint i (the relay
 * owns fd from now on). */
void jig_netrelay_listen_ready(void *ctx, uint32_t i, int fd);
/* Stops the thread, closes every socket, frees r. NULL: nothing. */
void jig_netrelay_stop(struct jig_netrelay *r);

/* One HTTP CONNECT request head in buf[0..len) (untrusted bytes; pure).
 * JIG_CONNECT_MORE: no end of head yet (read more); JIG_CONNECT_OK: *head
 * its length, the target in host (lower case) and *port; otherwise why it
 * is refused. Exactly "CONNECT HOST:PORT HTTP/1.1" CRLF, header lines of
 * printable ASCII and tabs, an empty line; HOST:PORT as the policy
 * language accepts it; the head at most JIG_NETRELAY_CONNECT_MAX_HEADER. */
enum jig_connect_parse {
	JIG_CONNECT_OK = 0,
	JIG_CONNECT_MORE = 1,
	JIG_CONNECT_BAD = -1,	   /* not a CONNECT request this relay accepts: 400 */
	JIG_CONNECT_TOO_LARGE = -2, /* 431 */
};
enum jig_connect_parse jig_connect_parse(const char *buf, size_t len, size_t *head, char *host, size_t cap,
					 uint16_t *port);

#endif
