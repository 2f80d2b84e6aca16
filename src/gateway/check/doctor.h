/* gateway/check/doctor.h - `openshell doctor`'s checks: the Docker host, before any gateway.
 *
 * The docker client and daemon, Docker's runtimes and CDI view, the GPU
 * mode a start would take, the cluster image (built? self-contained?),
 * then the daemon's host read in a container of that image (the driver and
 * its GPUs, the NVIDIA Container Toolkit, gateway/check/doctor_host.h) and
 * the known pitfalls (gateway/check/doctor_pitfalls.h). Nothing is created.
 * Each check goes to the caller as it is made (gateway/check/doctor_report.h).
 */
#ifndef OPENSHELL_GATEWAY_DOCTOR_H
#define OPENSHELL_GATEWAY_DOCTOR_H

#include "gateway/check/doctor_report.h"

/* Every check, in order; d->counts says how they went. */
void doctor_run(struct doctor *d);

#endif
