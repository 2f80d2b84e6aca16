/* cmd/doctor_pitfalls.h - the GPU pitfalls doctor catches.
 *
 * The pitfalls users hit, from `docker info` (INFO, may be NULL) and the
 * host's own files: the systemd cgroup driver losing GPUs on a daemon
 * reload, WSL2, Jetson/Tegra, rootless Docker, a CDI spec older than the
 * driver, and a daemon with neither the nvidia runtime nor CDI. The host's
 * files are read under $OPENSHELL_HOST_ROOT (default /), which the test
 * bed points at a made-up host. Each is reported only when it is there.
 */
#ifndef OPENSHELL_CMD_DOCTOR_PITFALLS_H
#define OPENSHELL_CMD_DOCTOR_PITFALLS_H

#include <cjson/cJSON.h>

#include "cmd/doctor_report.h"

void doctor_pitfalls(struct doctor *d, const cJSON *info);

#endif
