/* gateway/wait/phases.c - phase timings of a start (see gateway/wait/phases.h). */
#include "config.h"

#include <stdlib.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "gateway/wait/phases.h"

static const char *const names[PHASE_COUNT] = {
	[PHASE_IMAGE] = "image", [PHASE_CONTAINER] = "container", [PHASE_API] = "api",
	[PHASE_RUNTIME] = "runtime", [PHASE_PLUGIN] = "device_plugin", [PHASE_GPUS] = "allocatable",
};

void phases_begin(struct phases *p)
{
	*p = (struct phases){ .start = clock_ms() };
}

void phases_mark(struct phases *p, enum phase phase)
{
	if (p && !p->end[phase])
		p->end[phase] = clock_ms();
}

const char *phase_name(enum phase phase)
{
	return names[phase];
}

long long phases_ms(const struct phases *p, enum phase phase)
{
	long long from = p->start;

	if (!p->end[phase])
		return -1;
	for (int i = 0; i < (int)phase; i++)
		if (p->end[i] && p->end[i] <= p->end[phase])
			from = p->end[i] > from ? p->end[i] : from;
	return p->end[phase] - from;
}

static long long total_ms(const struct phases *p)
{
	long long last = p->start;

	for (int i = 0; i < PHASE_COUNT; i++)
		last = p->end[i] > last ? p->end[i] : last;
	return last - p->start;
}

cJSON *phases_json(const struct phases *p)
{
	cJSON *j = cJSON_CreateObject();

	for (int i = 0; i < PHASE_COUNT; i++)
		if (p->end[i])
			cJSON_AddNumberToObject(j, names[i], (double)phases_ms(p, (enum phase)i));
	cJSON_AddNumberToObject(j, "total", (double)total_ms(p));
	return j;
}

void phases_log(const struct phases *p)
{
	cleanup_free char *line = xstrdup("");

	for (int i = 0; i < PHASE_COUNT; i++) {
		if (!p->end[i])
			continue;
		cleanup_free char *dur = clock_format_ms((int)phases_ms(p, (enum phase)i));
		char *next = xasprintf("%s%s%s %s", line, *line ? ", " : "", names[i], dur);
		free(line);
		line = next;
	}
	cleanup_free char *total = clock_format_ms((int)total_ms(p));
	log_verbose("phases: %s (total %s)", *line ? line : "none", total);
}
