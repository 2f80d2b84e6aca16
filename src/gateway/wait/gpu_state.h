/* gateway/wait/gpu_state.h - what the GPU wait knows of the cluster, as
 * wait_gpus.c and its timeout report (gpu_report.c) share it, and the one
 * reading of those facts from the cluster's lists, which `gateway status`
 * shares too: it calls a gateway healthy on the facts start returns on
 * (without the exact counts a sharing change or a mixed MIG layout asks,
 * which status does not know).
 */
#ifndef OPENSHELL_GATEWAY_GPU_STATE_H
#define OPENSHELL_GATEWAY_GPU_STATE_H

#include "base/error.h"
#include "base/strv.h"
#include "gateway/gpu/allocation.h"
#include "gateway/wait/wait.h"
#include "kube/containerd.h"
#include "kube/objects.h"

struct gpu_state {
	const struct gpu_allocator *by; /* who serves the GPUs; NULL: the device plugin */
	int seen;                 /* a watch has listed the cluster's objects: the facts below are its */
	int runtime_class;        /* RuntimeClass nvidia exists: 1, or 0 not; -1 unknown */
	struct runtime_fact rt;   /* containerd's nvidia runtime, once k3s wrote its config */
	int plugin_found;
	struct ds_status ds;
	struct ds_status mps;     /* the chart's MPS control daemon (all 0 without it) */
	int mps_found;            /* and whether the chart has rendered it */
	int nodes;                /* how many the cluster has */
	long long allocatable;    /* -1: absent */
	long long capacity;       /* the same, healthy or not */
	long long mig;            /* MIG devices allocatable as resources of their own (mixed) */
	struct strv migs;         /* and those resources, as mig_resources() gives them */
	long long mig_capacity;   /* the MIG devices of WANT_NODE registered, healthy or not */
	const char *want_node;    /* the container's own node */
	long long want_mig;       /* mixed: the MIG devices the container's GPUs have */
	int want_set;             /* a sharing change asks for an exact allocatable: */
	long long want;           /* this one (0: none left, or absent) */
	int mps_sharing;          /* that sharing is MPS: its control daemon comes first */
	char *heartbeat;          /* the oldest node's Ready heartbeat (RFC 3339), or NULL */
	int stale;                /* the facts predate the container's last start: */
	int stale_slices;         /* under DRA, its slices do (else the node's status) */
	char *api_error;          /* the last transient kubectl error, or NULL */
	/* DRA: a sharing change asks the driver's DaemonSet to roll out with
	 * this gate of sharing on (or both off: WANT_GATE ""); NULL: any. */
	const char *want_gate;
	int gate_met;             /* its template has just that, and every pod runs it */
	/* DRA: the devices of WANT_NODE's ResourceSlices of driver gpu.nvidia.com. */
	const struct strv *want_uuids; /* the GPUs it is to publish (NULL: any) */
	struct strv published;    /* the UUIDs it publishes */
	char *slices_created;     /* the oldest of those slices' creationTimestamp, or NULL */
	int slices_seen;          /* a list of the slices has been read */
};

/* Its allocator: the device plugin unless G says otherwise. */
static inline const struct gpu_allocator *gpu_state_by(const struct gpu_state *g)
{
	return g->by ? g->by : gpu_allocator(GPU_ALLOCATION_DEVICE_PLUGIN);
}

static inline int gpu_state_dra(const struct gpu_state *g)
{
	return gpu_state_by(g)->mode == GPU_ALLOCATION_DRA;
}

/* Has the node the allocatable a sharing change makes (any, without one)? */
static inline int gpu_sharing_met(const struct gpu_state *g)
{
	return !g->want_set || g->allocatable == g->want || (g->want == 0 && g->allocatable < 0);
}

/* The facts of a List holding the cluster's Nodes (other kinds are
 * passed over); and of one holding the DaemonSets (the device plugin's and
 * its MPS daemon's), whose ready plugin proves RuntimeClass nvidia. */
void gpu_state_read_nodes(struct gpu_state *g, const cJSON *list);
void gpu_state_read_sets(struct gpu_state *g, const cJSON *list);

/* DRA: the facts of a List holding the ResourceSlices (other kinds are
 * passed over); and whether WANT_NODE publishes exactly WANT_UUIDS (any
 * device, without them). */
void gpu_state_read_slices(struct gpu_state *g, const cJSON *list);
int gpu_state_slices_met(const struct gpu_state *g);

/* Set G's stale and stale_slices: do its facts predate a container's
 * start at STARTED (RFC 3339; NULL: unknown, not stale)? The node's status,
 * and under DRA its slices (the kubelet deletes a node's slices as it
 * starts, kubelet/cm/dra, so that a plugin publishes anew). */
void gpu_state_mark_stale(struct gpu_state *g, const char *started);

/* Every fact holds: the runtime, its RuntimeClass, the plugin's pods all
 * ready, allocatable GPUs (or MIG devices) as WANT asks; under DRA the
 * runtime, the kubelet plugin's pods all ready and the node's slices. */
int gpu_state_ready(const struct gpu_state *g);

void gpu_state_free(struct gpu_state *g);

/* The wait ran out with G as it last stood: the fact missing, what keeps
 * it (the Helm job's error, a stuck pod, the kubelet's warning) and the
 * logs of the plugin, its MPS daemon and the Helm job as the detail.
 * Always -1, err set (OS_EXIT_TIMEOUT). */
int gpu_timeout(const struct wait_ctx *w, const struct gpu_state *g, os_error *err);

#endif
