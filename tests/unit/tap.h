/* tap.h - a minimal TAP producer for the C unit tests.
 *
 * Each check prints "ok N - what" or "not ok N - what" with the file and
 * line of a failure; tap_done() prints the plan and returns the exit
 * status. automake's TAP driver counts every check.
 */
#ifndef OPENSHELL_TAP_H
#define OPENSHELL_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failures;

static void __attribute__((format(printf, 4, 5)))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_failures++;
		printf("# failed at %s:%d\n", file, line);
	}
	fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, what)                                                   \
	do {                                                                      \
		long long g_ = (got), w_ = (want);                                \
		tap_ok(g_ == w_, __FILE__, __LINE__, "%s", what);                 \
		if (g_ != w_)                                                     \
			printf("#   got %lld, want %lld\n", g_, w_);              \
	} while (0)
#define is_str(got, want, what)                                                   \
	do {                                                                      \
		const char *g_ = (got), *w_ = (want);                             \
		int p_ = g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_;               \
		tap_ok(p_, __FILE__, __LINE__, "%s", what);                       \
		if (!p_)                                                          \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)",   \
			       w_ ? w_ : "(null)");                               \
	} while (0)

/* Checks that cannot hold where the test runs: counted, not failed. */
static inline void tap_skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_count, why);
	fflush(stdout);
}

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
