/* gateway/check/doctor_host.h - doctor's checks of the daemon's host.
 *
 * The driver and its GPUs, the NVIDIA Container Toolkit's tools and
 * net.core.bpf_jit_harden, as the host probe (gateway/gpu/host_probe.h) read
 * them on the daemon's host: the machine Docker runs on, which need not be
 * the one doctor runs on. doctor_host_read() says which host was read, or
 * why none could be (no daemon, no cluster image yet: a skip with its fix).
 */
#ifndef OPENSHELL_GATEWAY_DOCTOR_HOST_H
#define OPENSHELL_GATEWAY_DOCTOR_HOST_H

#include <cjson/cJSON.h>

#include "gateway/check/doctor_report.h"
#include "gateway/gpu/host_probe.h"

/* Read the host of the daemon that gave INFO (NULL: none answered) in a
 * container of IMAGE (image_present: Docker has it). 0 with F filled, or
 * -1 with the reason reported. */
int doctor_host_read(struct doctor *d, const cJSON *info, const char *image, int image_present,
		     struct host_facts *f);

void doctor_host_checks(struct doctor *d, const struct host_facts *f);

#endif
