/* gateway/check/check.h - one check of a report (verify's, doctor's): its status
 * and the evidence seen, and the shape --json gives both reports alike.
 *
 * Below verify and the files of its checks, so that each of them sets a
 * check without calling back up into verify.c; doctor reports its checks
 * with the same statuses and the same JSON.
 */
#ifndef OPENSHELL_GATEWAY_CHECK_H
#define OPENSHELL_GATEWAY_CHECK_H

#include <cjson/cJSON.h>

/* One set for every report: a check that could not run, or does not
 * apply, is a skip; its evidence says why. */
enum check_status { CHECK_PASS, CHECK_WARN, CHECK_FAIL, CHECK_SKIP, CHECK_NSTATUS };

struct check {
	const char *name;           /* static: "device-request", … */
	enum check_status status;
	char *evidence;             /* what was seen, one line (owned) */
	char *detail;               /* optional: logs (owned) */
};

/* Set a check's status and evidence (owned; the old one is freed). */
void check_set(struct check *c, enum check_status s, char *evidence);

/* "pass", "warn", "fail" or "skip": the JSON's words, and the lines'. */
const char *check_status_name(enum check_status s);

/* One check as --json gives it: name, status, evidence, and detail and
 * fix (null when there is none). */
cJSON *check_json(const char *name, enum check_status s, const char *evidence, const char *detail,
		  const char *fix);

/* {"pass": N, "warn": N, "fail": N, "skip": N}: how many checks had each. */
cJSON *check_counts_json(const int counts[CHECK_NSTATUS]);

#endif
