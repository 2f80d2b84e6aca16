/* gateway/verify/verify.h - the checks that prove a gateway's GPUs are usable.
 *
 * The design's testing plan as code, in order: the container asks Docker
 * for GPUs and sees exactly the ones its request names on the Docker host,
 * by UUID; RuntimeClass nvidia exists; the device-plugin DaemonSet has all
 * its pods ready; the node has allocatable nvidia.com/gpu; a pod that
 * requests one GPU runs nvidia-smi to completion and names that GPU alone,
 * one of the container's; and a pod that requests none sees none, though
 * it names every GPU in NVIDIA_VISIBLE_DEVICES; on each of its GPU nodes on
 * other hosts, a pod that requests one GPU names one its agent sees.
 * Under DRA (--gpu-allocation dra) the DRA driver's kubelet plugin stands
 * for the device plugin, the node's ResourceSlices for its allocatable
 * (they publish the container's GPUs, by UUID), the smoke pods ask by a
 * ResourceClaim from a template, whose allocated device must be the GPU
 * they see, and a pod asking nvidia.com/gpu: 1 must be served through the
 * driver's DeviceClass. Each check yields a status and the evidence it saw. A
 * gateway without a GPU request gets "skip" for all of them (they do not
 * apply), never "pass".
 */
#ifndef OPENSHELL_GATEWAY_VERIFY_H
#define OPENSHELL_GATEWAY_VERIFY_H

#include "base/error.h"
#include "gateway/check/check.h"
#include "gateway/state/lookup.h"

/* The image's own bundled smoke image wins (its org.openshell.smoke-image
 * label); this pin of deploy/versions.env serves images without one. */
#define VERIFY_DEFAULT_SMOKE_IMAGE OPENSHELL_SMOKE_IMAGE
#define VERIFY_DEFAULT_TIMEOUT_MS (2 * 60 * 1000)
/* verify's checks, in the order they are reported. */
enum verify_check {
	VC_DEVICE_REQUEST,
	VC_RUNTIME_CLASS,
	VC_DEVICE_PLUGIN,
	VC_ALLOCATABLE,
	VC_SMOKE_POD,
	VC_POD_ISOLATION,
	VC_PRIVILEGED_POD,
	VC_EXTENDED_POD,     /* named only under DRA */
	VC_NODE_GPUS,        /* the last, named only with GPU nodes on other hosts */
	VERIFY_NCHECKS
};

struct verify_opts {
	const char *smoke_image;
	int timeout_ms;             /* for the smoke pod */
	int keep;                   /* leave the smoke pod in place */
};

/* Run every check against a running gateway; checks[] gets VERIFY_NCHECKS
 * results, but for a check that has nothing to check, whose name is NULL
 * (node-gpus, for a gateway without GPU nodes on other hosts;
 * extended-pod, but under DRA). Returns -1 only when verification itself could not run (docker
 * unreachable, container not running), not when a check fails. */
int verify_gateway(const struct gateway *gw, const struct verify_opts *vo,
		   struct check checks[VERIFY_NCHECKS], os_error *err);
void verify_free(struct check checks[VERIFY_NCHECKS]);

#endif
