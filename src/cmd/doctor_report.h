/* cmd/doctor_report.h - doctor's report: one line, or one --json object,
 * a check.
 *
 * Below cmd/doctor.c (the checks of the host, Docker and the image) and
 * cmd/doctor_pitfalls.c (those of the known GPU pitfalls). Each check
 * reports with a stable name, and a fix for anything short of ok.
 */
#ifndef OPENSHELL_CMD_DOCTOR_REPORT_H
#define OPENSHELL_CMD_DOCTOR_REPORT_H

#include <cjson/cJSON.h>

enum verdict { OK, WARN, FAIL };

struct doctor {
	int failed;
	int warned;
	cJSON *checks;   /* --json: the checks so far; NULL: print lines */
	int pitfalls_done;
};

/* One check: NAME is its stable key in --json; the line shows what was
 * seen (FMT) and, in parentheses, the FIX (NULL: none). */
void report(struct doctor *d, enum verdict v, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
