/* gateway/gpu/mig_caps.h - the MIG capabilities the NVIDIA runtime gives a selection.
 *
 * A container given a selection's devices the way a gateway gets them
 * (Docker's nvidia driver, or CDI), unprivileged, gets the
 * /dev/nvidia-caps/nvidia-capN nodes of exactly its MIG devices
 * (libnvidia-container's nvc_mig_device_access_caps_mount; the CDI spec's
 * deviceNodes of each MIG device). That is the runtime's own answer to
 * "which MIG instances are these": `gateway start` hands it to the
 * entrypoint (OPENSHELL_GPU_CAPS) where no tmpfs of the hook's says it
 * (CDI), and verify holds the gateway's nodes against it.
 */
#ifndef OPENSHELL_GATEWAY_MIG_CAPS_H
#define OPENSHELL_GATEWAY_MIG_CAPS_H

#include "base/error.h"
#include "base/runner.h"
#include "base/strv.h"
#include "docker/target.h"
#include "gateway/gpu/gpus.h"

/* A MIG capability's device node, /dev/nvidia-caps/MIG_CAP_NODE<minor>. */
#define MIG_CAP_NODE "nvidia-cap"

/* Does SEL name a MIG device (MIG-…)? */
int mig_caps_named(const struct gpus *sel);

/* Start the throwaway container of IMAGE given SEL as a gateway is (CDI
 * devices, or --gpus), within TIMEOUT_MS (0: the per-call limit), on the
 * daemon ON names (docker/client.h; NULL: the process's). */
struct run_child *mig_caps_probe_start(const struct docker_target *on, const char *image, int cdi, const struct gpus *sel,
				       int timeout_ms, os_error *err);

/* Its capability nodes' minors, as text ("12"), into MINORS; -1 when it
 * did not run, the error naming the selection. */
int mig_caps_probe_finish(struct run_child *c, const struct gpus *sel, struct strv *minors, os_error *err);

#endif
