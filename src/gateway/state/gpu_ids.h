/* gateway/state/gpu_ids.h - the device plugin's IDs read against a gateway's GPU
 * rows (gateway/state/gpu_view.h): which row an ID of the kubelet's checkpoint or
 * of the plugin's log names, and why the plugin marked a row unhealthy.
 *
 * An ID is a GPU's or MIG device's UUID, "UUID::K" for a shared GPU's
 * replica K, or under the plugin's DEVICE_ID_STRATEGY=index the GPU's
 * index "I" or a MIG device's "I:K" (kube/checkpoint.h). On WSL2 the
 * plugin serves one device, "all" (replicas "all::K"), that is every GPU
 * of the node: go-nvlib's WSL platform, /dev/dxg for all of them.
 */
#ifndef OPENSHELL_GATEWAY_GPU_IDS_H
#define OPENSHELL_GATEWAY_GPU_IDS_H

#include "gateway/state/gpu_view.h"
#include "kube/checkpoint.h"

#define GPU_ID_WSL2 "all"

/* Does ID name row R's device (a replica of it too)? */
int gpu_id_names(const char *id, const struct gpu_row *r);

/* How many of the healthy devices the kubelet recorded for NVIDIA's
 * resources are R's (its replicas counted). */
int gpu_ids_registered(const struct device_checkpoint *cp, const struct gpu_row *r);

/* The plugin's last log line (of LINES, those that mark a device
 * unhealthy) naming R's device, after klog's header (owned); NULL when
 * none does, or when the exact device it named is registered healthy
 * again (a line of an earlier run of the plugin). */
char *gpu_sick_reason(const struct device_checkpoint *cp, const char *lines, const struct gpu_row *r);

#endif
