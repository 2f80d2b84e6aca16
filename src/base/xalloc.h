/* base/xalloc.h - allocation that cannot fail.
 *
 * Running out of memory in a command-line tool has no useful recovery, so
 * every allocation goes through these wrappers, which print one line and
 * abort. xalloc_init() installs them as cJSON's allocator too, so a JSON
 * parse never returns NULL for want of memory.
 */
#ifndef OPENSHELL_BASE_XALLOC_H
#define OPENSHELL_BASE_XALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

void xalloc_init(void);
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Cleanup attributes, as crun does: the variable is freed on every exit path. */
static inline void freep(void *p) { free(*(void **)p); }
#define cleanup_free __attribute__((cleanup(freep)))

/* Hand an owned pointer to the caller and disarm its cleanup. */
static inline void *steal_pointer(void *pp)
{
	void **p = pp;
	void *v = *p;
	*p = NULL;
	return v;
}

#endif
