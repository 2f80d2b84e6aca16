/* test_phases.c - phase timings of a start add up and skip what was skipped. */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/xalloc.h"
#include "gateway/wait/phases.h"
#include "tap.h"

static long long num(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

int main(void)
{
	struct phases p = { .start = 1000 };
	cJSON *j;

	xalloc_init();
	p.end[PHASE_IMAGE] = 1010;
	p.end[PHASE_CONTAINER] = 1400;
	p.end[PHASE_API] = 2400;
	p.end[PHASE_RUNTIME] = 2600;
	/* Seen at one look: the plugin ready and the GPUs allocatable. */
	p.end[PHASE_PLUGIN] = 4000;
	p.end[PHASE_GPUS] = 4000;
	is_int((int)phases_ms(&p, PHASE_IMAGE), 10, "image: from the start");
	is_int((int)phases_ms(&p, PHASE_API), 1000, "api: from the container's end");
	is_int((int)phases_ms(&p, PHASE_PLUGIN), 1400, "device plugin: from the runtime's end");
	is_int((int)phases_ms(&p, PHASE_GPUS), 0, "allocatable seen with the plugin: 0");
	j = phases_json(&p);
	is_int((int)num(j, "total"), 3000, "total is launch to the last phase");
	is_int((int)(num(j, "image") + num(j, "container") + num(j, "api") + num(j, "runtime") +
		     num(j, "device_plugin") + num(j, "allocatable")),
	       3000, "the phases add up to the total");
	cJSON_Delete(j);

	/* A running gateway reused: no image phase, no GPUs. */
	memset(p.end, 0, sizeof(p.end));
	p.end[PHASE_CONTAINER] = 1050;
	p.end[PHASE_API] = 1100;
	is_int((int)phases_ms(&p, PHASE_IMAGE), -1, "a skipped phase has no time");
	is_int((int)phases_ms(&p, PHASE_CONTAINER), 50, "container: from the start when image was skipped");
	j = phases_json(&p);
	ok(!cJSON_GetObjectItemCaseSensitive(j, "image") && !cJSON_GetObjectItemCaseSensitive(j, "allocatable"),
	   "skipped phases are left out of the JSON");
	is_int((int)num(j, "total"), 100, "total 100");
	cJSON_Delete(j);
	is_str(phase_name(PHASE_PLUGIN), "device_plugin", "names as in the JSON");
	phases_mark(NULL, PHASE_API);
	ok(1, "marking without phases is a no-op");
	return tap_done();
}
