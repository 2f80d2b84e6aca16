/* gateway/manage/status.h - one gateway, looked at: what `gateway status` shows.
 *
 * Reads, never changes. Docker's inspect gives the container and its
 * health; beside it, one docker exec reads containerd's config and the
 * cluster's nodes (whether the API serves, the node's allocatable GPUs
 * and MIG resources, its agents' nodes), with GPUs also the kubelet's
 * device checkpoint, the RuntimeClasses and DaemonSets that start's facts
 * are read from, and the pods, which with the checkpoint say who holds
 * the node's GPUs (gateway/state/gpu_use.h). While Docker's verdict is still
 * "starting", those facts are the health: a gateway is healthy once
 * they hold (the exact counts a sharing change or a mixed MIG layout
 * makes start wait for aside), and only one whose facts do not hold has
 * the image's probe run for its marker. A probe that fails is part of
 * the answer, said with -v, not an error. */
#ifndef OPENSHELL_GATEWAY_STATUS_H
#define OPENSHELL_GATEWAY_STATUS_H

#include <cjson/cJSON.h>

#include "base/strv.h"
#include "gateway/state/gpu_use.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"
#include "kube/containerd.h"

struct gateway_status {
	int api_ready;
	struct runtime_fact rt;  /* containerd's nvidia runtime (config_read 0: unknown) */
	long long gpus;          /* allocatable nvidia.com/gpu; -1 absent or unknown */
	long long capacity;      /* the same, healthy or not */
	struct strv mig;         /* allocatable MIG resources: "nvidia.com/mig-1g.10gb=2" */
	const char *health;      /* Docker's verdict, or while it says "starting", start's facts' or the probe's */
	char *health_line;       /* last line of the latest health probe, what the facts said, or NULL */
	struct gpu_use use;      /* the devices of its own node and who holds them; */
	int use_read;            /* valid when its kubelet's checkpoint and the pods were read */
	struct node_records agents; /* its nodes on other hosts (gateway node add) */
	cJSON *nodes;            /* while the API answers, a List of the cluster's Nodes */
	cJSON *slices;           /* and under DRA, of its ResourceSlices (else NULL) */
};

/* Look gateway NAME up into *GW (gateway_lookup(), whose errors it
 * returns, GW then freed) and fill S (zeroed by the caller); free them
 * with gateway_free() and gateway_status_free(). */
int gateway_status_look(const char *name, struct gateway *gw, struct gateway_status *s, os_error *err);
void gateway_status_free(struct gateway_status *s);

/* Agent NAME's node as S's cluster says it: "Ready", "NotReady",
 * "Unknown", "absent" (no such node), or "unknown" while the API does not
 * answer; its allocatable GPUs in *GPUS (under DRA those its slices
 * publish; -1 unknown). */
const char *gateway_status_node(const struct gateway_status *s, const char *name, long long *gpus);

#endif
