/* gateway/check.h - one check of verify: its status and the evidence seen.
 *
 * Below verify and the files of its checks, so that each of them sets a
 * check without calling back up into verify.c.
 */
#ifndef OPENSHELL_GATEWAY_CHECK_H
#define OPENSHELL_GATEWAY_CHECK_H

enum check_status { CHECK_PASS, CHECK_FAIL, CHECK_SKIP, CHECK_NA };

struct check {
	const char *name;           /* static: "device-request", … */
	enum check_status status;
	char *evidence;             /* what was seen, one line (owned) */
	char *detail;               /* optional: logs (owned) */
};

/* Set a check's status and evidence (owned; the old one is freed). */
void check_set(struct check *c, enum check_status s, char *evidence);

/* "pass", "fail", "skip" or "n/a". */
const char *check_status_name(enum check_status s);

#endif
