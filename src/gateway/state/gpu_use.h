/* gateway/state/gpu_use.h - the GPU use line of `gateway status`.
 *
 * The devices of the gateway's own node by the pods that hold them, from
 * the kubelet's device checkpoint (kube/checkpoint.h) read in status's one
 * exec, ahead of its kubectl, and the pods of its get (under DRA, from the
 * claims instead: gpu_claims_use(), gateway/state/gpu_claims.h). `gateway
 * gpus` (gateway/state/gpu_view.h) names them.
 */
#ifndef OPENSHELL_GATEWAY_GPU_USE_H
#define OPENSHELL_GATEWAY_GPU_USE_H

#include <cjson/cJSON.h>

#include "kube/checkpoint.h"

/* `gateway status`'s line of GPU use on the gateway's own node, from its
 * checkpoint read in status's one exec (GPU_USE_SCRIPT, run ahead of its
 * kubectl) and the pods of its get: the devices the plugin serves there
 * (a GPU, a MIG device; a shared GPU's replicas are one), those one
 * pod holds, those several share (and how many pods), and the free ones. */
struct gpu_use {
	int devices, in_use, shared, shared_by, free;
};
#define GPU_USE_MARK "#openshell-gpu-use"
#define GPU_USE_SCRIPT "cat " KUBELET_DEVICE_CHECKPOINT " 2>/dev/null; echo; echo '" GPU_USE_MARK "'"

/* Read TEXT, that script's output ahead of more (*REST: where the rest
 * begins, TEXT itself without the mark), against LIST's pods: 1 with
 * *USE filled; 0 when there is no checkpoint to read (no plugin has
 * registered) or it does not read. */
int gpu_use_read(const char *text, const cJSON *list, struct gpu_use *use, const char **rest);


#endif
