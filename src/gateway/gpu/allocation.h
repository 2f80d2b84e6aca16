/* gateway/gpu/allocation.h - who hands pods their GPUs: `--gpu-allocation
 * device-plugin|dra`.
 *
 * device-plugin (the default): NVIDIA's device plugin registers
 * nvidia.com/gpu with the kubelet, and a pod asks for a count. dra:
 * NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu) publishes
 * each GPU as a device of a ResourceSlice, a pod asks for one through a
 * ResourceClaim, and the driver's DeviceClass serves nvidia.com/gpu too
 * (docs/dra-sources.md). The mode reaches the entrypoint as
 * OPENSHELL_GPU_ALLOCATION, which picks the chart it installs.
 */
#ifndef OPENSHELL_GATEWAY_GPU_ALLOCATION_H
#define OPENSHELL_GATEWAY_GPU_ALLOCATION_H

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/strv.h"
#include "docker/target.h"
#include "gateway/gpu/mig.h"
#include "gateway/gpu/sharing.h"

/* GPU_ALLOCATION_UNSET: a request that names none; no container has it. */
enum gpu_allocation { GPU_ALLOCATION_UNSET = -1, GPU_ALLOCATION_DEVICE_PLUGIN, GPU_ALLOCATION_DRA };

/* What the DRA chart deploys (deploy/kube/gpu-manifests/dra/): its
 * HelmChart's name (the release), its namespace, the kubelet plugin's
 * DaemonSet and the driver its ResourceSlices name. */
#define DRA_DRIVER_RELEASE "dra-driver-nvidia-gpu"
#define DRA_DRIVER_NAMESPACE "nvidia-dra-driver-gpu"
#define DRA_KUBELET_PLUGIN DRA_DRIVER_RELEASE "-kubelet-plugin"
#define DRA_DRIVER_NAME "gpu.nvidia.com"
/* The chart's DeviceClass of whole GPUs, which also serves nvidia.com/gpu
 * (extendedResourceName). */
#define DRA_DEVICE_CLASS "gpu.nvidia.com"
/* And its class of MIG devices, which names no extended resource. */
#define DRA_MIG_DEVICE_CLASS "mig.nvidia.com"
/* The label the chart's kubelet plugin requires of a node (without NFD). */
#define DRA_NODE_LABEL "nvidia.com/gpu.present=true"
/* resource.k8s.io, GA in Kubernetes 1.34: its version and API path. */
#define DRA_API_VERSION "resource.k8s.io/v1"
#define DRA_API_PATH "/apis/" DRA_API_VERSION

/* What an allocation deploys in the cluster, as the waits, their reports
 * and status look for it: one table row per mode. */
struct gpu_allocator {
	enum gpu_allocation mode;
	const char *title;        /* "the NVIDIA device plugin" */
	const char *daemonset;    /* the DaemonSet that serves a node's GPUs */
	const char *ns;           /* its namespace */
	const char *pod_label, *pod_value; /* a label of its pods, and its value */
	const char *container;    /* its container whose log tells */
	const char *helmchart;    /* the HelmChart that installs it, in kube-system */
	const char *helm_job;     /* and the Helm job that runs the install */
};

const struct gpu_allocator *gpu_allocator(enum gpu_allocation a);

/* BY's DaemonSet in a List of DaemonSets (any namespaces), or NULL. */
const cJSON *gpu_allocator_daemonset(const struct gpu_allocator *by, const cJSON *list);

/* NVIDIA's DRA driver needs the host's NVIDIA driver at 565 or later
 * (its prerequisites, docs/dra-sources.md): under dra, a DRIVER version
 * ("550.54.15") older than that is refused, naming the fix; an unknown one
 * (NULL) is let be. NODE: the host is that node's (gateway node add), or
 * NULL, the gateway's own. */
#define DRA_MIN_DRIVER_MAJOR 565
int gpu_allocation_check_driver(enum gpu_allocation a, const char *driver, const char *node, os_error *err);

/* What NODE's ResourceSlices of the DRA driver publish, in LIST (any
 * kinds): the UUIDs of its GPUs, whole (the attributes "type" gpu and
 * "uuid" of the driver's GpuInfo.Attributes(), docs/dra-sources.md) or as
 * MIG devices (type mig: their "parentUUID"; the driver publishes a
 * MIG-enabled GPU only so), each once, into OUT, and into *OLDEST (owned;
 * left alone without slices; OLDEST may be NULL) the oldest of those
 * slices' creationTimestamp. A pool's slices of two generations may both
 * list one. dra_published_whole() counts those published whole. */
void dra_published_uuids(const cJSON *list, const char *node, struct strv *out, char **oldest);
long long dra_published_whole(const cJSON *list, const char *node);

/* How many GPUs NODE's slices in LIST publish, as a node list counts
 * them, -1 for none; also -1 when SINCE (RFC 3339, or NULL) is later than
 * the oldest of those slices, made before the node's kubelet last started
 * (which deletes them as it starts): the last run's. */
long long dra_node_gpus(const cJSON *list, const char *node, const char *since);

/* The UUID of the device DEVICE of pool POOL that a slice of the driver in
 * LIST publishes (a claim's allocation names it so), or NULL. */
const char *dra_device_uuid(const cJSON *list, const char *pool, const char *device);

/* The GPU that device is or is part of: its uuid, a MIG device's
 * parentUUID; NULL when none publishes it. */
const char *dra_device_gpu(const cJSON *list, const char *pool, const char *device);

/* "device-plugin" or "dra"; a usage error naming --gpu-allocation otherwise. */
int gpu_allocation_parse(const char *text, enum gpu_allocation *a, os_error *err);
const char *gpu_allocation_name(enum gpu_allocation a);

/* The allocation a container's OPENSHELL_GPU_ALLOCATION (NULL: unset) gave
 * the entrypoint; unset is the device plugin, as the entrypoint takes it. */
enum gpu_allocation gpu_allocation_of_env(const char *value);

/* Is GATE on for the DRA kubelet plugin's gpus container in DS's
 * template (its chart renders featureGates as FEATURE_GATES)?
 * dra_gates_rolled(): of the gates of sharing, just GATE ("" none) is on
 * there, and every pod runs that template (ST, the DaemonSet's status). */
struct ds_status;
int dra_gate_on(const cJSON *ds, const char *gate);
int dra_gates_rolled(const cJSON *ds, const struct ds_status *st, const char *gate);

/* The sharing S of allocation A where it cannot be: a count of replicas
 * under DRA, a sharing per claim but under DRA (A UNSET too: the
 * form asks for --gpu-allocation dra with it). The reason and the fix, or
 * NULL. */
const char *gpu_allocation_sharing_refused(enum gpu_allocation a, const struct sharing *s);

/* The options that configure the device plugin, or its form of them, have
 * no place beside dra: --gpu-sharing with a count (a claim asks for
 * sharing), --mig-strategy (the driver publishes what it finds); nor a
 * sharing per claim beside device-plugin. A usage error naming it. */
int gpu_allocation_check(enum gpu_allocation a, const struct sharing *s, enum mig_strategy m, os_error *err);

struct host_gpu;
struct host_gpus;
/* Does NVIDIA's DRA driver publish G, whole or as its MIG devices? Not a
 * GPU with MIG enabled and no MIG device (its nvlib.go publishes nothing
 * of it). */
int host_gpu_dra_published(const struct host_gpu *g);
/* The UUIDs of H's GPUs that it publishes, pushed onto UUIDS. */
void host_gpus_dra_published(const struct host_gpus *h, struct strv *uuids);

/* The UUIDs, pushed onto UUIDS, of the GPUs container CTR was given that NVIDIA's DRA driver publishes
 * (host_gpu_dra_published()), with a warning for each it leaves out. -1
 * when nvidia-smi -L fails there (container_gpus_finish()'s error), or
 * (OS_EXIT_NOGPU) when the container sees no GPU or the driver would
 * publish none of those it sees, naming WHAT ("gateway 'g'", "node 'n'")
 * and the fix. */
int container_dra_gpus(const struct docker_ctr *ctr, const char *what, int timeout_ms,
		       struct strv *uuids, os_error *err);

#endif
