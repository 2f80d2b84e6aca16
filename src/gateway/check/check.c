/* gateway/check/check.c - one check of a report: its status, the evidence seen,
 * and its JSON. */
#include "config.h"

#include <stdlib.h>

#include "base/json.h"
#include "gateway/check/check.h"

const char *check_status_name(enum check_status s)
{
	static const char *const names[CHECK_NSTATUS] = { "pass", "warn", "fail", "skip" };

	return names[s];
}

void check_set(struct check *c, enum check_status s, char *evidence)
{
	c->status = s;
	free(c->evidence);
	c->evidence = evidence;
}

cJSON *check_json(const char *name, enum check_status s, const char *evidence, const char *detail,
		  const char *fix)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "status", check_status_name(s));
	cJSON_AddStringToObject(c, "evidence", evidence ? evidence : "");
	json_add_string_or_null(c, "detail", detail);
	json_add_string_or_null(c, "fix", fix);
	return c;
}

cJSON *check_counts_json(const int counts[CHECK_NSTATUS])
{
	cJSON *o = cJSON_CreateObject();

	for (int s = 0; s < CHECK_NSTATUS; s++)
		cJSON_AddNumberToObject(o, check_status_name((enum check_status)s), counts[s]);
	return o;
}
