/* base/error.h - errors carried up to the one place that reports them.
 *
 * A fallible function takes an `os_error *err` last, returns 0 on success
 * and -1 on failure with *err filled: a message (one line, no "error:"
 * prefix) and the exit status the top level should use. Callers add
 * context on the way up with os_error_wrap(); only main() prints, via
 * log_error_report(). An os_error starts zeroed and is released with
 * os_error_clear().
 */
#ifndef OPENSHELL_BASE_ERROR_H
#define OPENSHELL_BASE_ERROR_H

typedef struct os_error {
	int code;     /* an enum os_exit value */
	char *msg;    /* owned; NULL while no error is set */
	char *detail; /* owned, optional: e.g. a child's stderr, shown below msg */
	int limit_ms; /* a child stopped at its time limit: that limit (base/deadline.h); else 0 */
} os_error;

/* Set the error (replacing any earlier one). Always returns -1. */
int os_error_set(os_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the message with context: "ctx: old message". Returns -1. */
int os_error_wrap(os_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append what to do about it: "old message; fix". Returns -1. */
int os_error_add_fix(os_error *err, const char *fix);

/* Attach detail text (copied); replaces earlier detail. */
void os_error_set_detail(os_error *err, const char *detail);

void os_error_clear(os_error *err);

#endif
