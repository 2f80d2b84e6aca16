/* gateway/node/node_list.h - a gateway's nodes, for `gateway node list`.
 *
 * Its server's node first, then each agent node add joined, from the
 * gateway's files; while its container runs, each node's state and
 * allocatable nvidia.com/gpu as the cluster says them (one kubectl get),
 * else unknown. */
#ifndef OPENSHELL_GATEWAY_NODE_LIST_H
#define OPENSHELL_GATEWAY_NODE_LIST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "gateway/state/lookup.h"
#include "gateway/state/node_record.h"

struct node_row {
	const char *name, *role;     /* role: "server" or "agent" */
	const char *endpoint;        /* its Docker host, or NULL when unknown */
	const char *container;
	const struct gpus *gpus;     /* the selection, or NULL without GPUs */
	const char *status;          /* as the cluster says it, or unknown */
	long long allocatable;       /* nvidia.com/gpu, -1 unknown */
};

struct node_list {
	struct node_row *v;
	size_t n;
	/* What the rows point into. */
	struct gateway gw;
	struct node_records rs;
	cJSON *nodes;
	char *own;
};

int gateway_node_list(const char *name, struct node_list *l, os_error *err);
void node_list_free(struct node_list *l);

#endif
