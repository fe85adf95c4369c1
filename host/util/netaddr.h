/* IP addresses that are this host's own or link-local (pure). */
#ifndef JIG_UTIL_NETADDR_H
#define JIG_UTIL_NETADDR_H

#include <stdbool.h>
#include <stddef.h>

struct sockaddr;

/* Why the address sa is not a remote peer: "loopback" (127/8, ::1),
 * "link-local" (169.254/16, fe80::/10), "unspecified" (0/8, ::), each
 * also as IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96, all of it
 * deprecated: "IPv4-compatible") or NAT64 (64:ff9b::/96); "not an IP
 * address" for another family; NULL: a remote address. */
const char *jig_addr_local(const struct sockaddr *sa);

/* host (of HOST:PORT) as an IP literal: "a.b.c.d" exactly as inet_ntop
 * writes it, or "[v6]" with v6 exactly as inet_ntop writes it. 1 with *sa
 * filled (port 0), 0 when host is not written like an IP literal at all (a
 * name), -1 when it is one in a non-canonical spelling (leading zeros,
 * octal, hexadecimal, fewer than four parts, one integer, an upper-case or
 * uncompressed IPv6 form...). */
struct sockaddr_storage;
int jig_addr_literal(const char *host, size_t len, struct sockaddr_storage *sa);

#endif
