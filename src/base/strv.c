/* base/strv.c - growable string vectors. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strv.h"
#include "base/xalloc.h"

static void push_owned(struct strv *s, char *arg)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = arg;
	s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *arg) { push_owned(s, xstrdup(arg)); }

void strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *arg;

	va_start(ap, fmt);
	if (vasprintf(&arg, fmt, ap) < 0)
		arg = NULL;
	va_end(ap);
	if (!arg) {
		fputs("openshell: error: out of memory\n", stderr);
		abort();
	}
	push_owned(s, arg);
}

void strv_pushv(struct strv *s, const char *const *args)
{
	for (; *args; args++)
		strv_push(s, *args);
}

const char *const *strv_argv(struct strv *s)
{
	if (!s->v) {   /* an empty vector is still NULL-terminated */
		s->cap = 16;
		s->v = xcalloc(s->cap, sizeof(*s->v));
	}
	return (const char *const *)s->v;
}

int strv_has(const struct strv *s, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return 1;
	return 0;
}

const char *strv_value(const struct strv *s, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; s && i < s->n; i++)
		if (strncmp(s->v[i], key, n) == 0 && s->v[i][n] == '=')
			return s->v[i] + n + 1;
	return NULL;
}

char *strv_join(const struct strv *s, const char *sep)
{
	char *out = xstrdup("");

	for (size_t i = 0; i < s->n; i++) {
		char *next = xasprintf("%s%s%s", out, i ? sep : "", s->v[i]);
		free(out);
		out = next;
	}
	return out;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
