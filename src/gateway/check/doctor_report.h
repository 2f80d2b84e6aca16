/* gateway/check/doctor_report.h - one of doctor's checks, as it is made.
 *
 * Below gateway/check/doctor.c (the checks of Docker and the image),
 * gateway/check/doctor_host.c and gateway/check/doctor_pitfalls.c. Each check
 * has a stable name, a status of verify's (gateway/check/check.h) and,
 * short of a pass, its fix; it goes to the caller as it is made, which
 * reports it (cmd/doctor.c: a line, or a --json object).
 */
#ifndef OPENSHELL_GATEWAY_DOCTOR_REPORT_H
#define OPENSHELL_GATEWAY_DOCTOR_REPORT_H

#include "gateway/check/check.h"

struct doctor {
	int counts[CHECK_NSTATUS];   /* the checks so far, by status */
	/* Each check as it is made: NAME its stable key, EVIDENCE what was
	 * seen, FIX the fix (NULL: none). */
	void (*on_check)(void *ctx, enum check_status s, const char *name, const char *evidence, const char *fix);
	void *ctx;
};

/* One check: counted, and handed to d->on_check with FMT's text. */
void doctor_check(struct doctor *d, enum check_status s, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
