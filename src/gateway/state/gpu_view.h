/* gateway/state/gpu_view.h - every GPU device of a gateway, who holds it and how
 * busy it is: what `gateway gpus` shows.
 *
 * Each node with GPUs (the server's, each agent's) is asked once, and the
 * server always (it has the pods), all of them side by side, each within docker's per-call deadline, by one
 * docker exec in its container on its own daemon: the kubelet's device
 * checkpoint (kube/checkpoint.h: which container holds which device
 * ID), `nvidia-smi -L` (its GPUs and their MIG devices) and `nvidia-smi
 * --query-gpu` (memory and utilisation), the processes on the GPUs with
 * their cgroups (gateway/state/gpu_procs.h); the server's exec ends with one
 * kubectl get of the pods (a checkpoint entry counts while its pod
 * lives), the nodes (unhealthy devices: capacity over allocatable) and
 * the HelmChartConfigs (the sharing: time-slicing or MPS); under DRA the
 * claims and slices, whose holders are the claims' instead, and the
 * sharing the GpuConfig of a claim allocated the GPU asks
 * (gateway/state/gpu_claims.h). A node that
 * does not answer gets one row, its state unknown and why; the other
 * nodes' rows stand. Reads, never changes.
 */
#ifndef OPENSHELL_GATEWAY_GPU_VIEW_H
#define OPENSHELL_GATEWAY_GPU_VIEW_H

#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"
#include "gateway/state/gpu_procs.h"

enum gpu_share { SHARE_EXCLUSIVE, SHARE_TIME_SLICING, SHARE_MPS, SHARE_MIG };

struct gpu_row {
	const char *node;          /* the node's name in the cluster */
	const char *host;          /* its Docker endpoint, or NULL when unknown */
	int index;                 /* the GPU's, as its node's nvidia-smi numbers it; -1 unknown */
	int mig_index;             /* a MIG device's place under its GPU; -1 for a GPU */
	char *uuid;                /* GPU-… or MIG-…; NULL for a node that did not answer */
	char *model;               /* the GPU's name, or the MIG device's profile */
	long long mem_used, mem_total, util;   /* MiB, MiB, %; -1 unknown */
	enum gpu_share share;
	int replicas;              /* time-slicing or MPS: the device plugin's replicas */
	const char *health;        /* "healthy", "unhealthy", "unknown", or NULL: not a
	                            * device the plugin serves (a MIG GPU's card) */
	char *why;                 /* unknown: why */
	struct gpu_holder *holders; /* the containers that hold it, each once */
	size_t n_holders;
};

struct gpu_view {
	struct gpu_row *v;
	size_t n;
	int nodes;                 /* nodes with GPUs asked */
	char *holders_why;         /* why no holder could be named (the server's pods
	                            * were not read), or NULL */
	struct gpu_procs procs;    /* the processes on the GPUs (gateway/state/gpu_procs.h) */
	struct strv names;         /* what the rows' and processes' node and host point into */
};

/* Look gateway NAME's GPUs up; fails when it does not exist or does not
 * run (as gateway_require_running() says). A gateway without GPUs has no
 * row. */
int gateway_gpu_view(const char *name, struct gpu_view *view, os_error *err);
void gpu_view_free(struct gpu_view *view);

/* The section of a node's answer after MARK's line, to the next mark's
 * line or the end; an empty section is "" (owned), NULL without MARK. */
char *gpu_view_part(const char *out, const char *mark);

/* "exclusive", "time-slicing", "mps" or "mig". */
const char *gpu_share_name(enum gpu_share s);

#endif
