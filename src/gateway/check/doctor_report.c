/* gateway/check/doctor_report.c - one of doctor's checks, as it is made (see gateway/check/doctor_report.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/xalloc.h"
#include "gateway/check/doctor_report.h"

void doctor_check(struct doctor *d, enum check_status s, const char *name, const char *fix, const char *fmt, ...)
{
	cleanup_free char *evidence = NULL;
	va_list ap;

	d->counts[s]++;
	va_start(ap, fmt);
	if (vasprintf(&evidence, fmt, ap) < 0)
		evidence = NULL;
	va_end(ap);
	d->on_check(d->ctx, s, name, evidence ? evidence : "?", fix);
}
