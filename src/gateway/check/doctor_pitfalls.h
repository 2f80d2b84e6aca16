/* gateway/check/doctor_pitfalls.h - the GPU pitfalls doctor catches.
 *
 * The pitfalls users hit, from `docker info` (INFO, may be NULL) and the
 * facts of the daemon's host (F, may be NULL: not read): the systemd
 * cgroup driver losing GPUs on a daemon reload, WSL2, Jetson/Tegra,
 * rootless Docker and a CDI spec older than the driver. Each is reported
 * only when it is there.
 */
#ifndef OPENSHELL_GATEWAY_DOCTOR_PITFALLS_H
#define OPENSHELL_GATEWAY_DOCTOR_PITFALLS_H

#include <cjson/cJSON.h>

#include "gateway/check/doctor_report.h"
#include "gateway/gpu/host_probe.h"

void doctor_pitfalls(struct doctor *d, const cJSON *info, const struct host_facts *f);

#endif
