/* base/parse.c - strict parsers of the values users and environments give. */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/xalloc.h"

int parse_uint(const char *s, int max, int *out)
{
	unsigned long long v = 0;

	if (!s || !*s || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v > (unsigned long long)max)
		return -1;
	*out = (int)v;
	return 0;
}

int parse_port(const char *s, int *port)
{
	int v;

	if (parse_uint(s, 65535, &v) < 0 || v == 0)
		return -1;
	*port = v;
	return 0;
}

int parse_duration_ms(const char *s, int *ms)
{
	static const struct { const char *unit; long long ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { NULL, 0 },
	};
	long long total = 0;
	const char *p = s;

	if (!s || !*s || strlen(s) > 32)
		return -1;
	if (strspn(s, "0123456789") == strlen(s)) {   /* bare seconds */
		int secs;
		if (parse_uint(s, INT_MAX / 1000, &secs) < 0 || secs == 0)
			return -1;
		*ms = secs * 1000;
		return 0;
	}
	while (*p) {
		long long whole = 0, frac = 0, scale = 1;
		size_t digits = strspn(p, "0123456789"), i;

		if (!digits || digits > 9)
			return -1;
		for (i = 0; i < digits; i++)
			whole = whole * 10 + (p[i] - '0');
		p += digits;
		if (*p == '.') {
			size_t fd = strspn(++p, "0123456789");
			if (!fd || fd > 6)
				return -1;
			for (i = 0; i < fd; i++, scale *= 10)
				frac = frac * 10 + (p[i] - '0');
			p += fd;
		}
		for (i = 0; units[i].unit; i++) {
			size_t n = strlen(units[i].unit);
			/* "ms" is listed before "m", so it wins */
			if (strncmp(p, units[i].unit, n) == 0)
				break;
		}
		if (!units[i].unit)
			return -1;
		total += whole * units[i].ms + frac * units[i].ms / scale;
		p += strlen(units[i].unit);
		if (total > INT_MAX)
			return -1;
	}
	if (total <= 0)
		return -1;
	*ms = (int)total;
	return 0;
}

int parse_keyword(const char *s, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

int parse_option_word(const char *option, const char *s, const char *const *names, int n, int *out, os_error *err)
{
	cleanup_free char *shown = NULL, *words = NULL;

	if (parse_keyword(s, names, n, out) == 0)
		return 0;
	shown = printable(s, 64);
	words = xstrdup(names[0]);
	for (int i = 1; i < n; i++) {
		char *more = xasprintf("%s%s%s", words, i == n - 1 ? " or " : ", ", names[i]);
		free(words);
		words = more;
	}
	return os_error_set(err, OS_EXIT_USAGE, "invalid %s '%s': give %s", option, shown, words);
}
