/* cmd/doctor_report.h - doctor's report: one line, or one --json object,
 * a check.
 *
 * Below cmd/doctor.c (the checks of the host, Docker and the image) and
 * cmd/doctor_pitfalls.c (those of the known GPU pitfalls). Each check
 * reports with a stable name, and a fix for anything short of a pass; its
 * status is one of verify's (gateway/check/check.h), so both reports speak alike.
 */
#ifndef OPENSHELL_CMD_DOCTOR_REPORT_H
#define OPENSHELL_CMD_DOCTOR_REPORT_H

#include <cjson/cJSON.h>

#include "gateway/check/check.h"

struct doctor {
	int counts[CHECK_NSTATUS];   /* the checks so far, by status */
	cJSON *checks;   /* --json: the checks so far; NULL: print lines */
};

/* One check: NAME is its stable key in --json; the line shows what was
 * seen (FMT) and, in parentheses, the FIX (NULL: none). */
void doctor_report_check(struct doctor *d, enum check_status s, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
