/* gateway/state/gpu_claims.h - who holds a GPU under DRA: the claims allocated it.
 *
 * Under --gpu-allocation dra the kubelet's device checkpoint holds no GPU:
 * a pod holds one through a ResourceClaim that the scheduler allocated a
 * device of NVIDIA's driver (its pool and name, whose "uuid" attribute a
 * ResourceSlice publishes) and reserved for the pod (status.reservedFor).
 * A container of the pod (an init container too) uses it when it names
 * the pod's claim (resources.claims: the pod's resourceClaims entry that
 * names the claim, one several pods may share, or that
 * status.resourceClaimStatuses ties to a claim made from a template),
 * with the allocation's request where it names one; or, for the claim the
 * scheduler made for an extended resource (nvidia.com/gpu: 1), when
 * status.extendedResourceClaimStatus maps that request to it. The pods
 * are the reservation's, by UID.
 * Read from one List of the server's (pods, claims, slices), as `gateway
 * gpus` gets it; the API is the truth here, no node's file.
 */
#ifndef OPENSHELL_GATEWAY_GPU_CLAIMS_H
#define OPENSHELL_GATEWAY_GPU_CLAIMS_H

#include <cjson/cJSON.h>

#include "gateway/state/gpu_use.h"

/* The types the server's get must name for these readers. */
#define GPU_CLAIMS_TYPES "resourceclaims.resource.k8s.io,resourceslices.resource.k8s.io"

/* Is the GPU UUID published in NODE's slices of the driver, in LIST? */
int gpu_claims_published(const cJSON *list, const char *node, const char *uuid);

/* Call HOLD for each container of a live pod that holds the GPU UUID
 * through a claim in LIST (each once per claim). */
void gpu_claims_holders(const cJSON *list, const char *uuid,
			void (*hold)(void *ctx, const char *ns, const char *pod, const char *container), void *ctx);

/* How a claim in LIST allocated the GPU UUID (held by a pod or not) asks
 * the driver to share it: the sharing strategy ("TimeSlicing", "MPS") of the GpuConfig the
 * driver applies to the claim's result on it, as it picks one (of its own
 * driver's configs, the class's before the claim's, the last that names
 * the result's request or none); NULL when no claim asks. */
const char *gpu_claims_sharing(const cJSON *list, const char *uuid);

/* `gateway status`'s use line under DRA (gateway/state/gpu_use.h): the GPUs
 * NODE's slices publish, by the pods that hold them through claims. */
void gpu_claims_use(const cJSON *list, const char *node, struct gpu_use *use);

#endif
