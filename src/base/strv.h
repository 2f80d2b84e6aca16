/* base/strv.h - a growable, NULL-terminated vector of owned strings.
 *
 * argv vectors are built with it step by step (as man-db builds its
 * pipelines), so no command line is ever assembled as one string.
 */
#ifndef OPENSHELL_BASE_STRV_H
#define OPENSHELL_BASE_STRV_H

#include <stddef.h>

struct strv {
	char **v;      /* always NULL-terminated once anything is pushed */
	size_t n;
	size_t cap;
};

void strv_push(struct strv *s, const char *arg);
void strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strv_pushv(struct strv *s, const char *const *args);   /* NULL-terminated */
const char *const *strv_argv(struct strv *s);                /* never NULL */
/* The strings joined with sep (owned). */
char *strv_join(const struct strv *s, const char *sep);
/* Is v one of the strings? */
int strv_has(const struct strv *s, const char *v);
/* Of strings KEY=VALUE (an environment, versions.env's pins): KEY's
 * VALUE, the first one's; NULL when no string sets KEY. */
const char *strv_value(const struct strv *s, const char *key);
void strv_free(struct strv *s);

#endif
