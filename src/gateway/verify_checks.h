/* gateway/verify_checks.h - the checks of verify, for its own files (gateway/verify.h is the interface).
 *
 * verify.c runs the checks in order; verify_request.c has the ones about
 * the container's own GPU request, which need Docker alone.
 */
#ifndef OPENSHELL_GATEWAY_VERIFY_CHECKS_H
#define OPENSHELL_GATEWAY_VERIFY_CHECKS_H

#include "base/strv.h"
#include "gateway/verify.h"

/* Set a check's status and evidence (owned; the old one is freed). */
void check_set(struct check *c, enum check_status s, char *evidence);

/* The request: CDI devices of the NVIDIA spec, or Docker's nvidia driver
 * with the capabilities the chain needs; the evidence says which. */
void verify_device_request(const struct gateway *gw, struct check *c);

/* The container sees exactly the GPUs its request means on the Docker
 * host, by UUID; *seen gets the container's, *devices what the device
 * plugin advertises for them as nvidia.com/gpu under the gateway's MIG
 * strategy. -1 only when it cannot ask. */
int verify_selected_gpus(const struct gateway *gw, struct strv *seen, int *devices, struct check *c, os_error *err);

/* The smoke pod's GPU must be one of those seen. */
void verify_smoke_gpu(const struct strv *seen, struct check *c);

#endif
