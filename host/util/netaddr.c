/* IP addresses that are this host's own or link-local: see netaddr.h. */
#include "util/netaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *v4_local(uint32_t a)
{
	if ((a >> 24) == 127)
		return "loopback";
	if ((a >> 16) == 0xa9fe) /* 169.254/16 */
		return "link-local";
	if ((a >> 24) == 0) /* 0/8: "this host", 0.0.0.0 */
		return "unspecified";
	return NULL;
}

const char *jig_addr_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_local(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "not an IP address";
	const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const unsigned char zero[12], nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	uint32_t v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
	if (memcmp(b, zero, 12) == 0) /* ::/96: ::, ::1, IPv4-compatible */
		return v4 == 0 ? "unspecified" : v4 == 1 ? "loopback" : v4_local(v4) ? v4_local(v4) : "IPv4-compatible";
	if ((memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) || memcmp(b, nat64, 12) == 0) /* mapped, NAT64 */
		return v4_local(v4);
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local";
	return NULL;
}

int jig_addr_literal(const char *host, size_t len, struct sockaddr_storage *sa)
{
	char s[64], canon[INET6_ADDRSTRLEN];
	memset(sa, 0, sizeof(*sa));
	if (len >= sizeof(s))
		return strspn(host, "0123456789.xX") >= len ? -1 : 0;
	memcpy(s, host, len);
	s[len] = '\0';
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)sa;
		if (len < 3 || s[len - 1] != ']')
			return -1;
		s[len - 1] = '\0';
		if (inet_pton(AF_INET6, s + 1, &a->sin6_addr) != 1 || !inet_ntop(AF_INET6, &a->sin6_addr, canon, sizeof(canon)) ||
		    strcmp(canon, s + 1) != 0)
			return -1;
		a->sin6_family = AF_INET6;
		return 1;
	}
	/* Written like a number (digits, dots, 0x): an IPv4 literal, which
	 * must be the one canonical dotted quad. A name's last label is never
	 * all digits (RFC 3696 2). */
	const char *last = strrchr(s, '.');
	last = last ? last + 1 : s;
	bool numeric = *last != '\0' && (strspn(last, "0123456789") == strlen(last) ||
					 ((last[0] == '0') && (last[1] == 'x' || last[1] == 'X')));
	if (!numeric)
		return 0;
	struct sockaddr_in *a = (struct sockaddr_in *)sa;
	if (inet_pton(AF_INET, s, &a->sin_addr) != 1 || !inet_ntop(AF_INET, &a->sin_addr, canon, sizeof(canon)) || strcmp(canon, s) != 0)
		return -1;
	a->sin_family = AF_INET;
	return 1;
}
