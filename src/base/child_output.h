/* base/child_output.h - what a message quotes of a failed child.
 *
 * Every message about a child that failed quotes the first line of what it
 * printed, and keeps the rest as the error's detail, so that one line
 * names the problem and nothing the child said is lost.
 */
#ifndef OPENSHELL_BASE_CHILD_OUTPUT_H
#define OPENSHELL_BASE_CHILD_OUTPUT_H

#include "base/error.h"

struct run_result;

/* The first line of a child's output, leading blank lines and spaces
 * skipped; "" when there is none (owned). Every message that quotes a
 * child quotes this line, and the rest goes to the error's detail. */
char *run_first_line(const char *text);

/* Fail with "WHAT: FIRST LINE OF STDERR" (WHAT alone when stderr is
 * empty), WHAT formatted from fmt, and all of stderr as the detail when it
 * has more than that one line. Always returns -1. */
int run_failure(os_error *err, int code, const struct run_result *res, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
