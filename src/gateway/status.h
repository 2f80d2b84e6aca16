/* gateway/status.h - one gateway, looked at: what `gateway status` shows.
 *
 * Reads, never changes. Docker's inspect (the caller's lookup) gives the
 * container and its health; while it runs, one docker exec reads
 * containerd's config and the cluster's nodes (whether the API serves,
 * the node's allocatable GPUs and MIG resources, its agents' nodes). A
 * probe that fails is part of the answer, said with -v, not an error. */
#ifndef OPENSHELL_GATEWAY_STATUS_H
#define OPENSHELL_GATEWAY_STATUS_H

#include <cjson/cJSON.h>

#include "base/strv.h"
#include "gateway/lookup.h"
#include "gateway/node_record.h"
#include "kube/containerd.h"

struct gateway_status {
	int api_ready;
	struct runtime_fact rt;  /* containerd's nvidia runtime (config_read 0: unknown) */
	long long gpus;          /* allocatable nvidia.com/gpu; -1 absent or unknown */
	long long capacity;      /* the same, healthy or not */
	struct strv mig;         /* allocatable MIG resources: "nvidia.com/mig-1g.10gb=2" */
	const char *health;      /* Docker's verdict, or the probe's own (below) */
	char *health_line;       /* last line of the latest health probe, or NULL */
	struct node_records agents; /* its nodes on other hosts (gateway node add) */
	cJSON *nodes;            /* the cluster's nodes, while the API answers */
};

/* Fill S (zeroed by the caller) for GW; free it with gateway_status_free. */
void gateway_status_look(const struct gateway *gw, struct gateway_status *s);
void gateway_status_free(struct gateway_status *s);

#endif
