#include "text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one well-formed UTF-8 sequence (no overlongs, surrogates or
 * values past U+10FFFF); returns its length or 0. */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	if (n == 0 || n > len)
		return 0;
	uint32_t v = s[0] & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*cp = v;
	return n;
}

/* Characters a terminal or a bidi-aware renderer acts on. */
static bool hazardous(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t jig_text_inert(char *dst, size_t cap, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t out = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);
		char esc[16];
		const char *piece = esc;
		size_t plen;
		if (n == 0) {
			plen = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", s[i]);
			n = 1;
		} else if (!hazardous(cp)) {
			piece = (const char *)s + i;
			plen = n;
		} else if (cp == '\n' || cp == '\r' || cp == '\t') {
			plen = (size_t)snprintf(esc, sizeof(esc), "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
		} else if (cp < 0x80) {
			plen = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
		} else {
			plen = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
		}
		if (out + plen + 1 > cap)
			break;
		memcpy(dst + out, piece, plen);
		out += plen;
		i += n;
	}
	if (cap)
		dst[out] = '\0';
	return out;
}

char *jig_text_inert_dup(const char *src)
{
	if (!src)
		src = "";
	size_t len = strlen(src);
	/* Worst case: a 1-byte \xNN (4) or a 3-byte \uNNNN (6) per input byte. */
	size_t cap = len * 4 + 1;
	char *dst = malloc(cap);
	if (dst)
		jig_text_inert(dst, cap, src, len);
	return dst;
}

size_t jig_text_utf8_prefix(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static void put_range(FILE *f, const char *s, size_t len)
{
	char buf[1024];
	/* Chunked at character boundaries: jig_text_inert stops before a piece
	 * that does not fit, so convert input in slices and resume after the
	 * bytes it consumed. */
	while (len) {
		size_t take = jig_text_utf8_prefix(s, len, 200);
		if (take == 0)
			take = len < 4 ? len : 4;
		jig_text_inert(buf, sizeof(buf), s, take);
		fputs(buf, f);
		s += take;
		len -= take;
	}
}

void jig_text_put(FILE *f, const char *s)
{
	if (s)
		put_range(f, s, strlen(s));
}

void jig_text_put_lines(FILE *f, const char *indent, const char *s)
{
	for (const char *nl; s && (nl = strchr(s, '\n')); s = nl + 1) {
		/* a CRLF ends a line too: its CR is the line break's, not text */
		put_range(f, s, (size_t)(nl - s) - (nl > s && nl[-1] == '\r'));
		fputc('\n', f);
		fputs(indent, f);
	}
	jig_text_put(f, s);
}

size_t jig_text_first_line(const char *s)
{
	size_t n = s ? strcspn(s, "\n") : 0;
	return n && s[n] == '\n' && s[n - 1] == '\r' ? n - 1 : n;
}

const char *jig_text_list(char *buf, size_t cap, char *const *names, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
	if (!n)
		snprintf(buf, cap, "none");
	return buf;
}
