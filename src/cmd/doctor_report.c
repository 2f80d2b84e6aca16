/* cmd/doctor_report.c - doctor's report: one line, or one --json object,
 * a check. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/xalloc.h"
#include "cmd/doctor_report.h"

void report(struct doctor *d, enum verdict v, const char *name, const char *fix, const char *fmt, ...)
{
	static const char *const words[] = { "ok  ", "warn", "fail" };
	static const char *const statuses[] = { "ok", "warn", "fail" };
	cleanup_free char *detail = NULL;
	va_list ap;

	d->failed += v == FAIL;
	d->warned += v == WARN;
	va_start(ap, fmt);
	if (vasprintf(&detail, fmt, ap) < 0)
		detail = NULL;
	va_end(ap);
	if (!detail)
		detail = xstrdup("?");
	if (!d->checks) {
		printf("%s  %s%s%s%s\n", words[v], detail, fix ? " (" : "", fix ? fix : "", fix ? ")" : "");
		return;
	}
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "status", statuses[v]);
	cJSON_AddStringToObject(c, "detail", detail);
	if (fix)
		cJSON_AddStringToObject(c, "fix", fix);
	cJSON_AddItemToArray(d->checks, c);
}
