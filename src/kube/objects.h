/* kube/objects.h - what the cluster's objects say, read from kubectl's JSON.
 *
 * Readiness is judged from object state: these read it from the JSON
 * kubectl printed, tolerating absent fields (a node has no nvidia.com/gpu
 * key until the device plugin registers). Nothing here runs a command.
 */
#ifndef OPENSHELL_KUBE_OBJECTS_H
#define OPENSHELL_KUBE_OBJECTS_H

#include <cjson/cJSON.h>

#define GPU_RESOURCE "nvidia.com/gpu"
#define DEVICE_PLUGIN_LABEL "app.kubernetes.io/name"
#define DEVICE_PLUGIN_NAME "nvidia-device-plugin"
#define DEVICE_PLUGIN_NAMESPACE "nvidia-device-plugin"
#define DEVICE_PLUGIN_RELEASE "nvidia-device-plugin"   /* the HelmChart's name */
#define DEVICE_PLUGIN_HELMCHART DEVICE_PLUGIN_RELEASE
#define DEVICE_PLUGIN_HELM_JOB "helm-install-nvidia-device-plugin"
#define DEVICE_PLUGIN_CONTAINER "nvidia-device-plugin-ctr"   /* the chart's container name */
#define MPS_DAEMON_CONTAINER "mps-control-daemon-ctr"        /* its MPS control daemon's */
#define NVIDIA_RUNTIME_CLASS "nvidia"

/* The item of KIND named NAME in a List (of one type or several), or NULL. */
const cJSON *kube_find(const cJSON *list, const char *kind, const char *name);

/* The Pod of UID in LIST while it lives (neither Succeeded nor Failed), or
 * NULL: the kubelet's device checkpoint keeps an ended pod's devices until
 * its next allocation. */
const cJSON *kube_live_pod(const cJSON *list, const char *uid);

/* Is RESOURCE one of NVIDIA's device plugin's (nvidia.com/gpu,
 * nvidia.com/mig-…), not another plugin's? */
int kube_nvidia_resource(const char *resource);

/* Node NAME's Ready condition in LIST, or NULL. */
const cJSON *kube_node_ready_condition(const cJSON *list, const char *name);

/* That condition as kubectl's STATUS column words it: "Ready", "NotReady"
 * or "Unknown"; NULL when LIST has no such node. */
const char *kube_node_ready(const cJSON *list, const char *name);

/* What a node list or status says of node NAME: its word above, "absent"
 * when LIST lacks it, "unknown" when there is no LIST (the API did not
 * answer); *gpus its allocatable nvidia.com/gpu (-1: none). */
const char *kube_node_state(const cJSON *list, const char *name, long long *gpus);

/* A List of LIST's items of KIND alone, copied (owned). */
cJSON *kube_list_of_kind(const cJSON *list, const char *kind);

/* Take every Node but NAME out of LIST, when LIST has NAME: what is read
 * of the nodes after is of that one alone. */
void kube_keep_node(cJSON *list, const char *name);

/* How many items of KIND a List holds. */
int kube_count_kind(const cJSON *list, const char *kind);

/* The oldest Node's Ready lastHeartbeatTime in a List: when its kubelet
 * last posted the node's status (owned), or NULL. */
char *kube_nodes_heartbeat(const cJSON *list);

/* Was a node status of HEARTBEAT posted before STARTED (a container's
 * State.StartedAt)? Both UTC RFC 3339; the API's have whole seconds, so a
 * status of the very second the container started may be the last run's,
 * and counts as such: k3s takes longer than that to post its own. 0 when
 * either is unknown. */
int kube_status_predates(const char *heartbeat, const char *started);

/* Node allocatable nvidia.com/gpu summed over a NodeList (or one Node).
 * -1 when no node has the key (plugin not registered), else the count. */
long long kube_nodes_allocatable_gpus(const cJSON *nodes);
/* The same of the nodes' capacity: the devices the kubelet holds for a
 * plugin, healthy or not (allocatable counts the healthy ones). */
long long kube_nodes_capacity_gpus(const cJSON *nodes);

/* Why a node's allocatable nvidia.com/gpu is 0, from its CAPACITY: a
 * plugin that does not find GPUs never registers the resource, so 0 means
 * that one registered GPUs and the kubelet now counts none healthy. */
const char *kube_gpus_zero_why(long long capacity);

/* "K of the node's N nvidia.com/gpu devices are unhealthy: …" when some
 * are allocatable and the capacity holds more (the plugin marked devices
 * unhealthy: an Xid error, a lost GPU), else NULL (owned). */
char *kube_gpus_unhealthy(long long allocatable, long long capacity);

struct ds_status {
	long long desired;
	long long ready;
	long long available;
	long long updated;   /* pods of its current template */
	int rolled;          /* its controller has seen its current template (observedGeneration) */
};

/* Find the device plugin's DaemonSet in a DaemonSetList: its label, and the
 * release's name (never the chart's MPS control daemon beside it). */
const cJSON *kube_find_device_plugin(const cJSON *daemonsets);

/* Read a DaemonSet's status counters (absent counters read as 0). */
void kube_daemonset_status(const cJSON *ds, struct ds_status *st);

/* Why the pod's container waits, as the kubelet says: "REASON: MESSAGE" for
 * a reason other than being created or initialised, or NULL. */
char *kube_pod_stuck(const cJSON *pod);

/* The pod's last Warning in an EventList: "REASON: MESSAGE" (a sandbox that
 * cannot be made: FailedCreatePodSandBox), or NULL. */
char *kube_pod_warning(const cJSON *events, const char *pod);

/* Why a pod of a PodList whose label KEY is VALUE cannot run its container,
 * as the kubelet says it: "pod NS/NAME: REASON: MESSAGE" for the first
 * container waiting for a reason other than being created (a pull that
 * fails, a sandbox that cannot be made, a crash loop), or NULL. */
char *kube_pods_stuck(const cJSON *pods, const char *key, const char *value);

/* The last line of text that starts with "Error:" (helm's), or NULL. */
char *kube_last_error_line(const char *text);

#endif
