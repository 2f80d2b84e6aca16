/* base/child_output.c - quoting a failed child (see base/child_output.h). */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "base/child_output.h"
#include "base/runner.h"
#include "base/xalloc.h"

char *run_first_line(const char *text)
{
	if (!text)
		return xstrdup("");
	while (*text == '\n' || *text == ' ')
		text++;
	return xstrndup(text, strcspn(text, "\n"));
}

int run_failure(os_error *err, int code, const struct run_result *res, const char *fmt, ...)
{
	cleanup_free char *what = NULL;
	cleanup_free char *line = run_first_line(res->err);
	const char *nl = res->err ? strchr(res->err, '\n') : NULL;
	va_list ap;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	if (*line)
		os_error_set(err, code, "%s: %s", what, line);
	else
		os_error_set(err, code, "%s", what);
	if (nl && nl[1])
		os_error_set_detail(err, res->err);
	return -1;
}
