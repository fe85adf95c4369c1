/* npm's version ranges: see semver.h. The desugaring follows node-semver
 * (replaceTilde, replaceCaret, replaceXRange, hyphenReplace) without its
 * loose mode or includePrerelease. */
#include "prepare/semver.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NUM_DIGITS_MAX 16

/* A version: major.minor.patch and its prerelease (not owned). */
struct ver {
	uint64_t n[3];
	const char *pre;
	size_t prelen;
};

/* A partial version of a range: the first have numbers, then x. */
struct part {
	uint64_t n[3];
	int have;
	const char *pre;
	size_t prelen;
};

enum op { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE };

/* One comparator set (an intersection) tested against one version. */
struct set {
	const struct ver *v;
	bool ok;	  /* every comparator so far holds */
	bool pre_allowed; /* some comparator has a prerelease on v's tuple */
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_ident_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A number without leading zeros, at most NUM_DIGITS_MAX digits. */
static bool number(const char **s, uint64_t *out)
{
	const char *p = *s;
	size_t d = 0;
	uint64_t v = 0;
	while (p[d] >= '0' && p[d] <= '9') {
		v = v * 10 + (uint64_t)(p[d] - '0');
		d++;
	}
	if (d == 0 || d > NUM_DIGITS_MAX || (d > 1 && p[0] == '0'))
		return false;
	*out = v;
	*s = p + d;
	return true;
}

/* Dot-separated identifiers; numeric ones without leading zeros if
 * strict (a prerelease), any if not (build metadata). */
static bool idents(const char **s, bool strict, const char **start, size_t *len)
{
	const char *p = *s;
	*start = p;
	for (;;) {
		size_t n = 0;
		while (is_ident_char(p[n]))
			n++;
		if (n == 0 || (strict && n > 1 && p[0] == '0' && all_digits(p, n)))
			return false;
		p += n;
		if (*p != '.')
			break;
		p++;
	}
	*len = (size_t)(p - *start);
	*s = p;
	return true;
}

/* An exact version, all of s. */
static bool parse_version(const char *s, struct ver *v)
{
	memset(v, 0, sizeof(*v));
	for (int i = 0; i < 3; i++)
		if (!number(&s, &v->n[i]) || (i < 2 && *s++ != '.'))
			return false;
	const char *b;
	size_t bl;
	if (*s == '-' && (s++, !idents(&s, true, &v->pre, &v->prelen)))
		return false;
	if (*s == '+' && (s++, !idents(&s, false, &b, &bl)))
		return false;
	return *s == '\0';
}

/* A partial: xr ( '.' xr ( '.' xr qualifier? )? )?, xr a number or
 * x, X, *; an optional leading 'v'. */
static bool parse_part(const char **s, struct part *p)
{
	const char *c = *s;
	memset(p, 0, sizeof(*p));
	p->have = -1;
	if (*c == 'v')
		c++;
	int i = 0;
	for (;; i++) {
		if (*c == 'x' || *c == 'X' || *c == '*') {
			c++;
			if (p->have < 0)
				p->have = i;
		} else if (!number(&c, &p->n[i])) {
			return false;
		}
		if (i == 2 || *c != '.')
			break;
		c++;
	}
	if (p->have < 0)
		p->have = i + 1;
	if (i == 2) {
		const char *b;
		size_t bl;
		if (*c == '-' && (c++, !idents(&c, true, &p->pre, &p->prelen)))
			return false;
		if (*c == '+' && (c++, !idents(&c, false, &b, &bl)))
			return false;
	}
	/* A partial ends at the end, a space or "||". */
	if (*c && !is_space(*c) && *c != '|')
		return false;
	*s = c;
	return true;
}

static int cmp_num(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* Prerelease precedence (semver 11): identifiers left to right, numeric
 * ones numerically and below alphanumeric ones, a shorter list first. */
static int cmp_pre(const char *a, size_t al, const char *b, size_t bl)
{
	if (!al || !bl)
		return !al && !bl ? 0 : !al ? 1 : -1; /* a release is above its prereleases */
	for (;;) {
		size_t an = 0, bn = 0;
		while (an < al && a[an] != '.')
			an++;
		while (bn < bl && b[bn] != '.')
			bn++;
		bool ad = all_digits(a, an), bd = all_digits(b, bn);
		int r;
		if (ad && bd)
			r = an != bn ? (an < bn ? -1 : 1) : memcmp(a, b, an); /* no leading zeros */
		else if (ad != bd)
			r = ad ? -1 : 1;
		else {
			r = memcmp(a, b, an < bn ? an : bn);
			if (!r)
				r = an < bn ? -1 : an > bn;
		}
		if (r)
			return r < 0 ? -1 : 1;
		bool aend = an == al, bend = bn == bl;
		if (aend || bend)
			return aend && bend ? 0 : aend ? -1 : 1;
		a += an + 1, al -= an + 1;
		b += bn + 1, bl -= bn + 1;
	}
}

static int cmp_ver(const struct ver *a, const struct ver *b)
{
	for (int i = 0; i < 3; i++)
		if (a->n[i] != b->n[i])
			return cmp_num(a->n[i], b->n[i]);
	return cmp_pre(a->pre, a->prelen, b->pre, b->prelen);
}

/* One comparator "op c" of the set. */
static void add(struct set *st, enum op op, uint64_t M, uint64_t m, uint64_t p, const char *pre, size_t prelen)
{
	struct ver c = {{M, m, p}, pre, prelen};
	int r = cmp_ver(st->v, &c);
	bool hold = op == OP_EQ ? r == 0 : op == OP_LT ? r < 0 : op == OP_LE ? r <= 0 : op == OP_GT ? r > 0 : r >= 0;
	st->ok = st->ok && hold;
	if (prelen && c.n[0] == st->v->n[0] && c.n[1] == st->v->n[1] && c.n[2] == st->v->n[2])
		st->pre_allowed = true;
}

/* "-0", the lowest prerelease: an upper bound below every prerelease of
 * the next version. */
#define Z "0", 1

static void tilde(struct set *st, const struct part *q)
{
	if (q->have == 0)
		return; /* any */
	if (q->have == 1) {
		add(st, OP_GE, q->n[0], 0, 0, NULL, 0);
		add(st, OP_LT, q->n[0] + 1, 0, 0, Z);
		return;
	}
	add(st, OP_GE, q->n[0], q->n[1], q->have == 3 ? q->n[2] : 0, q->have == 3 ? q->pre : NULL, q->have == 3 ? q->prelen : 0);
	add(st, OP_LT, q->n[0], q->n[1] + 1, 0, Z);
}

static void caret(struct set *st, const struct part *q)
{
	uint64_t M = q->n[0], m = q->n[1], p = q->n[2];
	if (q->have == 0)
		return;
	if (q->have == 1) {
		add(st, OP_GE, M, 0, 0, NULL, 0);
		add(st, OP_LT, M + 1, 0, 0, Z);
		return;
	}
	if (q->have == 2) {
		add(st, OP_GE, M, m, 0, NULL, 0);
		if (M == 0)
			add(st, OP_LT, M, m + 1, 0, Z);
		else
			add(st, OP_LT, M + 1, 0, 0, Z);
		return;
	}
	add(st, OP_GE, M, m, p, q->pre, q->prelen);
	if (M == 0 && m == 0)
		add(st, OP_LT, M, m, p + 1, Z);
	else if (M == 0)
		add(st, OP_LT, M, m + 1, 0, Z);
	else
		add(st, OP_LT, M + 1, 0, 0, Z);
}

/* A primitive "op partial", or a bare partial (op OP_EQ). */
static void xrange(struct set *st, enum op op, bool has_op, const struct part *q)
{
	uint64_t M = q->n[0], m = q->n[1], p = q->n[2];
	if (q->have == 3) {
		add(st, op, M, m, p, q->pre, q->prelen);
		return;
	}
	if (q->have == 0) {
		if (has_op && (op == OP_LT || op == OP_GT))
			add(st, OP_LT, 0, 0, 0, Z); /* nothing */
		return;			  /* any */
	}
	bool xm = q->have == 1;
	if (has_op && op != OP_EQ) {
		if (xm)
			m = 0;
		p = 0;
		if (op == OP_GT) {
			op = OP_GE;
			if (xm)
				M++, m = 0;
			else
				m++;
		} else if (op == OP_LE) {
			op = OP_LT;
			if (xm)
				M++;
			else
				m++;
		}
		if (op == OP_LT)
			add(st, op, M, m, p, Z);
		else
			add(st, op, M, m, p, NULL, 0);
		return;
	}
	if (xm) {
		add(st, OP_GE, M, 0, 0, NULL, 0);
		add(st, OP_LT, M + 1, 0, 0, Z);
	} else {
		add(st, OP_GE, M, m, 0, NULL, 0);
		add(st, OP_LT, M, m + 1, 0, Z);
	}
}

static void hyphen(struct set *st, const struct part *from, const struct part *to)
{
	if (from->have == 1)
		add(st, OP_GE, from->n[0], 0, 0, NULL, 0);
	else if (from->have == 2)
		add(st, OP_GE, from->n[0], from->n[1], 0, NULL, 0);
	else if (from->have == 3)
		add(st, OP_GE, from->n[0], from->n[1], from->n[2], from->pre, from->prelen);
	if (to->have == 1)
		add(st, OP_LT, to->n[0] + 1, 0, 0, Z);
	else if (to->have == 2)
		add(st, OP_LT, to->n[0], to->n[1] + 1, 0, Z);
	else if (to->have == 3)
		add(st, OP_LE, to->n[0], to->n[1], to->n[2], to->pre, to->prelen);
}

static const char *skip_spaces(const char *s)
{
	while (is_space(*s))
		s++;
	return s;
}

/* One comparator set, from *s to its end or "||"; tested against st. */
static bool parse_set(const char **s, struct set *st)
{
	const char *c = skip_spaces(*s);
	bool first = true;
	while (*c && *c != '|') {
		enum op op = OP_EQ;
		bool has_op = true;
		char kind = 0; /* '~', '^' or 0 */
		if (c[0] == '<' && c[1] == '=')
			op = OP_LE, c += 2;
		else if (c[0] == '>' && c[1] == '=')
			op = OP_GE, c += 2;
		else if (c[0] == '<')
			op = OP_LT, c++;
		else if (c[0] == '>')
			op = OP_GT, c++;
		else if (c[0] == '=')
			c++;
		else if (c[0] == '~')
			kind = '~', c += c[1] == '>' ? 2 : 1;
		else if (c[0] == '^')
			kind = '^', c++;
		else
			has_op = false;
		c = skip_spaces(c);
		struct part q;
		if (!parse_part(&c, &q))
			return false;
		const char *after = skip_spaces(c);
		/* "A - B": a hyphen range is the whole set. */
		if (first && !has_op && after != c && after[0] == '-' && is_space(after[1])) {
			struct part to;
			c = skip_spaces(after + 1);
			if (!parse_part(&c, &to))
				return false;
			c = skip_spaces(c);
			if (*c && *c != '|')
				return false;
			hyphen(st, &q, &to);
			break;
		}
		if (kind == '~')
			tilde(st, &q);
		else if (kind == '^')
			caret(st, &q);
		else
			xrange(st, op, has_op, &q);
		c = after;
		first = false;
	}
	*s = c;
	return true;
}

/* Parses all of range; *yes: version v satisfies it (v may be NULL). */
static bool parse_range(const char *range, const struct ver *v, bool *yes)
{
	static const struct ver zero;
	const char *c = range;
	*yes = false;
	if (strlen(range) > JIG_SEMVER_RANGE_MAX)
		return false;
	for (;;) {
		struct set st = {.v = v ? v : &zero, .ok = true};
		if (!parse_set(&c, &st))
			return false;
		if (st.ok && (!st.v->prelen || st.pre_allowed))
			*yes = true;
		if (!*c)
			return true;
		if (c[0] != '|' || c[1] != '|')
			return false;
		c += 2;
	}
}

enum jig_semver_result jig_semver_satisfies(const char *version, const char *range)
{
	struct ver v;
	bool yes;
	if (!parse_range(range, NULL, &yes))
		return JIG_SEMVER_RANGE;
	if (!parse_version(version, &v))
		return JIG_SEMVER_VERSION;
	parse_range(range, &v, &yes);
	return yes ? JIG_SEMVER_YES : JIG_SEMVER_NO;
}

bool jig_semver_range_ok(const char *range)
{
	bool yes;
	return parse_range(range, NULL, &yes);
}
