/* gateway/wait/phases.h - how long each phase of a start took.
 *
 * A start passes its phases in order: the image at hand, the container
 * running, the k3s API ready, and with GPUs the nvidia runtime in
 * containerd, the device plugin ready and GPUs allocatable. Each is marked
 * the first time it is seen done; a phase's time is from the end of the
 * one before it (or the start) to its own end, so the times add up to the
 * whole. Phases a start skips (a running gateway's image, the GPU ones
 * without --gpu) have no time. `gateway start --json` and `-v` show them:
 * the time-to-GPU of any host can be read and compared.
 */
#ifndef OPENSHELL_GATEWAY_PHASES_H
#define OPENSHELL_GATEWAY_PHASES_H

#include <cjson/cJSON.h>

enum phase { PHASE_IMAGE, PHASE_CONTAINER, PHASE_API, PHASE_RUNTIME, PHASE_PLUGIN, PHASE_GPUS, PHASE_COUNT };

struct phases {
	long long start;               /* clock_ms() when the start began */
	long long end[PHASE_COUNT];    /* clock_ms() when each was seen done; 0: not */
};

/* Start the clock. */
void phases_begin(struct phases *p);

/* Mark PHASE done now, unless it was already (p may be NULL). */
void phases_mark(struct phases *p, enum phase phase);

/* Its name in JSON and messages: image, container, api, runtime,
 * device_plugin, allocatable. */
const char *phase_name(enum phase phase);

/* The time PHASE took in ms, or -1 when it was not reached. */
long long phases_ms(const struct phases *p, enum phase phase);

/* {"image": MS, ...} for the phases reached, and "total". */
cJSON *phases_json(const struct phases *p);

/* One verbose line: "phases: image 3ms, container 410ms, ... (total 2.1s)". */
void phases_log(const struct phases *p);

#endif
