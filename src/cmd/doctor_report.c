/* cmd/doctor_report.c - doctor's report: one line, or one --json object,
 * a check. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/xalloc.h"
#include "cmd/doctor_report.h"

void doctor_report_check(struct doctor *d, enum check_status s, const char *name, const char *fix, const char *fmt, ...)
{
	cleanup_free char *evidence = NULL;
	va_list ap;

	d->counts[s]++;
	va_start(ap, fmt);
	if (vasprintf(&evidence, fmt, ap) < 0)
		evidence = NULL;
	va_end(ap);
	if (!evidence)
		evidence = xstrdup("?");
	if (!d->checks) {
		printf("%-4s  %s%s%s%s\n", check_status_name(s), evidence, fix ? " (" : "", fix ? fix : "",
		       fix ? ")" : "");
		return;
	}
	/* The line is all a doctor check has: no logs, as verify's detail. */
	cJSON_AddItemToArray(d->checks, check_json(name, s, evidence, NULL, fix));
}
