/* base/error.c - the error object: set, wrap with context, clear. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/exitcode.h"
#include "base/xalloc.h"

int os_error_set(os_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	free(err->msg);
	free(err->detail);
	err->detail = NULL;
	err->limit_ms = 0;
	va_start(ap, fmt);
	err->msg = xvasprintf(fmt, ap);
	va_end(ap);
	err->code = code ? code : OS_EXIT_FAILURE;
	return -1;
}

int os_error_wrap(os_error *err, const char *fmt, ...)
{
	va_list ap;
	char *ctx, *msg;

	va_start(ap, fmt);
	ctx = xvasprintf(fmt, ap);
	va_end(ap);
	msg = xasprintf("%s: %s", ctx, err->msg ? err->msg : "unknown error");
	free(ctx);
	free(err->msg);
	err->msg = msg;
	if (!err->code)
		err->code = OS_EXIT_FAILURE;
	return -1;
}

int os_error_add_fix(os_error *err, const char *fix)
{
	char *msg = xasprintf("%s; %s", err->msg ? err->msg : "unknown error", fix);

	free(err->msg);
	err->msg = msg;
	if (!err->code)
		err->code = OS_EXIT_FAILURE;
	return -1;
}

void os_error_set_detail(os_error *err, const char *detail)
{
	free(err->detail);
	err->detail = detail ? xstrdup(detail) : NULL;
}

void os_error_clear(os_error *err)
{
	free(err->msg);
	free(err->detail);
	err->msg = NULL;
	err->detail = NULL;
	err->code = 0;
	err->limit_ms = 0;
}
