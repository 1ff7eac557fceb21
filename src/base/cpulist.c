/*
 * cpulist.c - strict parsers and the formatter for orcu's configuration
 * strings (cpulists, ORCU_CPUS, numeric knobs).  Owns no state.  Calls
 * only libc; config.c calls in here.  Strict because a typo
 * in an environment variable must be reported, never half-applied: each
 * parser validates the whole text before it writes any output.
 */
#include "cpulist.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quote at most this much of the user's text: enough to spot the typo, short enough for one line. */
#define QUOTE_MAX 24
#define QUOTE_BUF (QUOTE_MAX * 4 + 8)
_Static_assert(ORCU__QUOTE_VALUE_MAX >= QUOTE_MAX, "the value quote holds a parser quote");

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Copy at most max bytes of user text for an error message, escaping
 * anything that would break the one-line message or the quotes around it
 * (dst holds max * 4 + 8).  from_end keeps the tail, which is what
 * "after ..." messages need when the error is at the end.
 */
static const char *quote_n(char *dst, const char *s, size_t n, size_t max, bool from_end)
{
	size_t o = 0;
	size_t take = n > max ? max : n;

	if (from_end && n > max) {
		memcpy(dst, "...", 3);
		o = 3;
		s += n - max;
	}
	for (size_t i = 0; i < take; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '"' || c == '\\') {
			dst[o++] = '\\';
			dst[o++] = (char)(c == '\n' ? 'n' : c);
		} else if (c < 0x20 || c > 0x7e) {
			o += (size_t)snprintf(dst + o, 5, "\\x%02x", c);
		} else {
			dst[o++] = (char)c;
		}
	}
	if (!from_end && n > max) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
	return dst;
}

static const char *quote(char *dst, const char *s, size_t n, bool from_end)
{
	return quote_n(dst, s, n, QUOTE_MAX, from_end);
}

const char *orcu__quote_value(char dst[ORCU__QUOTE_VALUE_BUF], const char *text)
{
	return quote_n(dst, text, strlen(text), ORCU__QUOTE_VALUE_MAX, false);
}

/* Name the text at p; at the very end there is nothing there, so name what came before. */
static void err_at(char *err, size_t errlen, const char *what,
		   const char *text, const char *p, const char *end)
{
	char q[QUOTE_BUF];

	if (p < end)
		set_err(err, errlen, "%s at \"%s\"", what, quote(q, p, (size_t)(end - p), false));
	else
		set_err(err, errlen, "%s after \"%s\"", what,
			quote(q, text, (size_t)(end - text), true));
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c);
}

static bool slice_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/*
 * Unsigned decimal only: '+', '-', spaces and "0x" are all typos here.
 * Returns false after writing err; a number names its own start.
 */
static bool expect_uint(const char **pp, const char *end, int *val, const char *text,
			char *err, size_t errlen)
{
	const char *p = *pp;
	char q[QUOTE_BUF];
	long long v = 0;

	if (p == end || !is_digit(*p)) {
		err_at(err, errlen, "bad CPU number", text, p, end);
		return false;
	}
	for (; p < end && is_digit(*p); p++) {
		/* Keep consuming after overflow so the message can quote the whole number. */
		if (v <= INT_MAX)
			v = v * 10 + (*p - '0');
	}
	if (v > INT_MAX) {
		set_err(err, errlen, "CPU number too large at \"%s\"",
			quote(q, *pp, (size_t)(p - *pp), false));
		return false;
	}
	*pp = p;
	*val = (int)v;
	return true;
}

/*
 * The one cpulist grammar behind parse and max: returns the highest CPU
 * + 1 named (nbits for "all", 0 for none) or -EINVAL.  With bits NULL it
 * only validates, which is how callers get all-or-nothing without a
 * scratch bitmap.  sizing: no possible set exists yet (cpulist_max), so CPU
 * numbers are bounded only by int and "all" is meaningless.
 */
static int cpulist_scan(const char *text, size_t n, int nbits, bool sizing,
			uint64_t *bits, char *err, size_t errlen)
{
	const char *p = text, *end = text + n;
	int max = 0;
	char q[QUOTE_BUF];

	if (bits)
		memset(bits, 0, ORCU__BITMAP_WORDS(nbits) * sizeof(*bits));
	if (n == 0 || slice_is(text, n, "none"))
		return 0;
	if (slice_is(text, n, "all")) {
		if (sizing) {
			set_err(err, errlen, "\"all\" names no CPU count");
			return -EINVAL;
		}
		for (int c = 0; bits && c < nbits; c++)
			orcu__bit_set(bits, c);
		return nbits;
	}

	for (;;) {
		const char *entry = p;
		int first, last, used = 1, group = 1;

		if (!expect_uint(&p, end, &first, text, err, errlen))
			return -EINVAL;
		last = first;
		if (p < end && *p == '-') {
			p++;
			if (!expect_uint(&p, end, &last, text, err, errlen))
				return -EINVAL;
			if (first > last) {
				set_err(err, errlen, "reversed range at \"%s\"",
					quote(q, entry, (size_t)(p - entry), false));
				return -EINVAL;
			}
		}
		if (p < end && *p == ':') {
			const char *stride = p++;

			if (!memchr(entry, '-', (size_t)(stride - entry))) {
				set_err(err, errlen, "stride without a range at \"%s\"",
					quote(q, entry, (size_t)(end - entry), false));
				return -EINVAL;
			}
			/* "a-b:g" is orcu's stride; "a-b:u/g" is the kernel's used/group form. */
			if (!expect_uint(&p, end, &group, text, err, errlen))
				return -EINVAL;
			if (p < end && *p == '/') {
				p++;
				used = group;
				if (!expect_uint(&p, end, &group, text, err, errlen))
					return -EINVAL;
			}
			if (used < 1 || group < 1 || used > group) {
				set_err(err, errlen, "bad stride at \"%s\"",
					quote(q, stride, (size_t)(p - stride), false));
				return -EINVAL;
			}
		}
		/* sizing passes nbits INT_MAX: max must stay an int. */
		if (last >= nbits) {
			if (sizing)
				set_err(err, errlen, "CPU number too large at \"%s\"",
					quote(q, entry, (size_t)(p - entry), false));
			else
				set_err(err, errlen, "CPU %d is beyond the %d possible", last, nbits);
			return -EINVAL;
		}
		if (last + 1 > max)
			max = last + 1;
		if (bits) {
			/* long long: c + group may pass INT_MAX near the top of a range. */
			for (long long c = first; c <= last; c += group)
				for (long long k = c; k < c + used && k <= last; k++)
					orcu__bit_set(bits, (int)k);
		}
		if (p == end)
			return max;
		if (*p != ',') {
			err_at(err, errlen, "unexpected text", text, p, end);
			return -EINVAL;
		}
		p++;
	}
}

int orcu__cpulist_parse(const char *text, uint64_t *bits, int nbits,
			char *err, size_t errlen)
{
	if (!text || !bits || nbits < 0) {
		set_err(err, errlen, "bad arguments to cpulist parser");
		return -EINVAL;
	}
	if (cpulist_scan(text, strlen(text), nbits, false, NULL, err, errlen) < 0)
		return -EINVAL;
	cpulist_scan(text, strlen(text), nbits, false, bits, err, errlen);
	return 0;
}

int orcu__cpulist_max(const char *text, char *err, size_t errlen)
{
	if (!text) {
		set_err(err, errlen, "bad arguments to cpulist parser");
		return -EINVAL;
	}
	return cpulist_scan(text, strlen(text), INT_MAX, true, NULL, err, errlen);
}

int orcu__cpulist_format(const uint64_t *bits, int nbits, char *buf, size_t len)
{
	size_t pos = 0;

	if (!buf || !len)
		return -ENOSPC;
	buf[0] = '\0';
	for (int c = 0; c < nbits; c++) {
		int last = c;
		int w;

		if (!orcu__bit_test(bits, c))
			continue;
		while (last + 1 < nbits && orcu__bit_test(bits, last + 1))
			last++;
		if (last == c)
			w = snprintf(buf + pos, len - pos, "%s%d", pos ? "," : "", c);
		else
			w = snprintf(buf + pos, len - pos, "%s%d-%d", pos ? "," : "", c, last);
		if (w < 0 || (size_t)w >= len - pos) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		pos += (size_t)w;
		c = last;
	}
	/* An empty string reads as a missing value in a message; "none" parses back the same. */
	if (pos == 0) {
		if (len < sizeof("none"))
			return -ENOSPC;
		memcpy(buf, "none", sizeof("none"));
		pos = sizeof("none") - 1;
	}
	if (pos > INT_MAX) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)pos;
}

/* Length-bounded so the ORCU_CPUS parser can hand in a value without copying it. */
static int parse_long_n(const char *text, size_t n, long min, long max, long *out,
			char *err, size_t errlen)
{
	bool neg = n && text[0] == '-';
	bool bad = n == (size_t)neg, overflow = false;
	char q[QUOTE_BUF];
	long v = 0;

	/* Accumulated with the sign, so LONG_MIN is reached without negating it. */
	for (size_t i = neg; i < n; i++) {
		long digit = neg ? '0' - text[i] : text[i] - '0';

		bad = bad || !is_digit(text[i]);
		overflow = overflow || __builtin_mul_overflow(v, 10, &v) ||
			   __builtin_add_overflow(v, digit, &v);
	}
	if (bad) {
		set_err(err, errlen, "not a number: \"%s\"", quote(q, text, n, false));
		return -EINVAL;
	}
	if (overflow || v < min || v > max) {
		set_err(err, errlen, "out of range %ld..%ld: \"%s\"", min, max,
			quote(q, text, n, false));
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int orcu__parse_long(const char *text, long min, long max, long *out,
		     char *err, size_t errlen)
{
	if (!text || !out) {
		set_err(err, errlen, "bad arguments to number parser");
		return -EINVAL;
	}
	return parse_long_n(text, strlen(text), min, max, out, err, errlen);
}

/* The length of the identifier at p if '=' follows it, else 0: where a "key=" pair starts. */
static size_t key_len(const char *p, const char *end)
{
	const char *q = p;

	if (p == end || is_digit(*p) || !is_ident(*p))
		return 0;
	while (++q < end && is_ident(*q))
		;
	return q < end && *q == '=' ? (size_t)(q - p) : 0;
}

/* Where the value that starts at p ends: a ',' that starts no "key="
 * belongs to a cpulist value. */
static const char *value_end(const char *p, const char *end)
{
	while (p < end && !(*p == ',' && key_len(p + 1, end)))
		p++;
	return p;
}

struct spec_value {
	const char *s;
	size_t n;
	bool seen;
};

int orcu__parse_cpus_spec_given(const char *text, int *possible, uint64_t **online_out,
				bool *online_given, char *err, size_t errlen)
{
	/* Without online=, every possible CPU is online.  nohz_full= and
	 * isolated= are the kernel's files' text, read by config.c. */
	struct spec_value poss = { 0 }, online = { "all", 3, false }, nohz = { 0 }, iso = { 0 };
	const char *p, *end;
	char q[QUOTE_BUF], sub[192];
	uint64_t *bits;
	long nposs;

	if (!text || !possible || !online_out) {
		set_err(err, errlen, "bad arguments to ORCU_CPUS parser");
		return -EINVAL;
	}
	end = text + strlen(text);
	/* An environment variable has no business holding spaces or control bytes; say so up front. */
	for (p = text; p < end; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p > '~') {
			err_at(err, errlen, "unexpected character", text, p, end);
			return -EINVAL;
		}
	}

	for (p = text; p < end;) {
		const char *key = p;
		size_t keylen = key_len(p, end);
		struct spec_value *slot;

		if (!keylen) {
			err_at(err, errlen, "expected key=value", text, key, end);
			return -EINVAL;
		}
		p = value_end(p + keylen + 1, end);
		if (slice_is(key, keylen, "possible")) {
			slot = &poss;
		} else if (slice_is(key, keylen, "online")) {
			slot = &online;
		} else if (slice_is(key, keylen, "nohz_full")) {
			slot = &nohz;
		} else if (slice_is(key, keylen, "isolated")) {
			slot = &iso;
		} else {
			set_err(err, errlen, "unknown key \"%s\" (expected possible=, online=, nohz_full= or isolated=)",
				quote(q, key, keylen, false));
			return -EINVAL;
		}
		if (slot->seen) {
			set_err(err, errlen, "duplicate key \"%s\"", quote(q, key, keylen, false));
			return -EINVAL;
		}
		slot->seen = true;
		slot->s = key + keylen + 1;
		slot->n = (size_t)(p - slot->s);
		if (p < end)
			p++; /* the ',' that starts the next pair */
	}

	if (!poss.seen) {
		set_err(err, errlen, "missing possible=N");
		return -EINVAL;
	}
	if (parse_long_n(poss.s, poss.n, 1, ORCU__MAX_POSSIBLE, &nposs, sub, sizeof(sub))) {
		set_err(err, errlen, "possible: %s", sub);
		return -EINVAL;
	}
	switch (cpulist_scan(online.s, online.n, (int)nposs, false, NULL, sub, sizeof(sub))) {
	case -EINVAL:
		set_err(err, errlen, "online: %s", sub);
		return -EINVAL;
	case 0:
		/* Slot 0 would be made online behind the text's back. */
		set_err(err, errlen, "online: names no CPU: \"%s\"",
			quote(q, online.s, online.n, false));
		return -EINVAL;
	}
	bits = calloc(ORCU__BITMAP_WORDS(nposs), sizeof(*bits));
	if (!bits) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	cpulist_scan(online.s, online.n, (int)nposs, false, bits, NULL, 0);
	*possible = (int)nposs;
	*online_out = bits;
	if (online_given)
		*online_given = online.seen;
	return 0;
}

const char *orcu__cpus_spec_value(const char *text, const char *key, size_t *len)
{
	const char *end = text + strlen(text);

	for (const char *p = text; p < end;) {
		size_t keylen = key_len(p, end);
		const char *v = p + keylen + 1, *vend = value_end(v, end);

		if (slice_is(p, keylen, key)) {
			*len = (size_t)(vend - v);
			return v;
		}
		p = vend + 1;
	}
	return NULL;
}

int orcu__parse_bool(const char *text, int *out, char *err, size_t errlen)
{
	char q[QUOTE_BUF];

	if (!text || !out) {
		set_err(err, errlen, "bad arguments to boolean parser");
		return -EINVAL;
	}
	/* Only the two digits: "yes", "true" or "on" would invite "no",
	 * "false" and "off", and every spelling nobody listed after them. */
	if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0) {
		*out = text[0] - '0';
		return 0;
	}
	set_err(err, errlen, "expected 0 or 1, not \"%s\"", quote(q, text, strlen(text), false));
	return -EINVAL;
}
