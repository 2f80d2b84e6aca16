/* gateway/gpu/gpu_errors.h - Docker's errors about a gateway's GPUs, explained.
 *
 * Below every file that runs docker with GPUs (gateway/gpu/gpus.c's looks, a
 * start's run or resume), so that none of them calls up into
 * gateway/gpu/gpu_mode.c to read its error.
 */
#ifndef OPENSHELL_GATEWAY_GPU_ERRORS_H
#define OPENSHELL_GATEWAY_GPU_ERRORS_H

#include "base/error.h"
#include "docker/target.h"

/* Recognise a docker run/start failure of the CDI path (an unresolvable
 * device, a spec older than the driver, a daemon without CDI) and set the
 * error that names the fix (for a KEPT gateway, one that keeps it or says
 * --recreate): 1 when recognised, 0 otherwise. */
int gpu_errors_explain(const char *docker_stderr, int kept, os_error *err);

/* The error for a Docker (the one ON names, docker/client.h) that cannot
 * select its nvidia driver (exit 7), told apart by the Docker host's own
 * files (gateway/gpu/host_probe.h, in a container of IMAGE there): the
 * toolkit not installed there, or installed after
 * dockerd started, which registers the driver only when it finds the hook
 * on its PATH at start. Returns -1. */
int gpu_errors_no_toolkit(const struct docker_target *on, const char *image, os_error *err);

#endif
