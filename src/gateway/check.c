/* gateway/check.c - one check of verify: its status and the evidence seen. */
#include "config.h"

#include <stdlib.h>

#include "gateway/check.h"

const char *check_status_name(enum check_status s)
{
	static const char *const names[] = { "pass", "fail", "skip", "n/a" };

	return names[s];
}

void check_set(struct check *c, enum check_status s, char *evidence)
{
	c->status = s;
	free(c->evidence);
	c->evidence = evidence;
}
