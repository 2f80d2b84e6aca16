/* gateway/node/node_list.c - a gateway's nodes (see gateway/node/node_list.h). */
#include "config.h"

#include <stdlib.h>

#include "base/names.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/gpus.h"
#include "gateway/node/node_list.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

int gateway_node_list(const char *name, struct node_list *l, os_error *err)
{
	struct gateway *gw = &l->gw;
	int dra;

	*l = (struct node_list){ 0 };
	if (gateway_lookup(name, gw, err) < 0)
		return -1;
	dra = gw->allocation == GPU_ALLOCATION_DRA;
	if (node_records_load(gw->state_dir, &l->rs, err) < 0)
		return -1;
	/* Under DRA a node's GPUs are those its ResourceSlices publish. */
	if (gw->c.running && kube_get(&gw->ctr, dra ? "nodes,resourceslices.resource.k8s.io" : "nodes", NULL, NULL,
				      0, 0, &l->nodes, err) < 0)
		return -1;
	l->own = gateway_hostname(name);
	l->n = l->rs.n + 1;
	l->v = xcalloc(l->n, sizeof(*l->v));
	l->v[0] = (struct node_row){ .name = l->own, .role = "server", .container = gw->container,
				     .endpoint = gw->has_metadata ? gw->md.docker.endpoint : NULL, .gpus = gw->has_gpus ? &gw->gpus : NULL };
	for (size_t i = 0; i < l->rs.n; i++)
		l->v[i + 1] = (struct node_row){ .name = l->rs.v[i].name, .role = "agent",
						 .container = l->rs.v[i].container,
						 .endpoint = l->rs.v[i].docker.endpoint,
						 .gpus = l->rs.v[i].gpu ? &l->rs.v[i].gpus : NULL };
	for (size_t i = 0; i < l->n; i++) {
		l->v[i].status = kube_node_state(l->nodes, l->v[i].name, &l->v[i].allocatable);
		if (dra && l->nodes)
			l->v[i].allocatable = dra_node_gpus(l->nodes, l->v[i].name, NULL);
	}
	return 0;
}

void node_list_free(struct node_list *l)
{
	free(l->v);
	cJSON_Delete(l->nodes);
	node_records_free(&l->rs);
	gateway_free(&l->gw);
	free(l->own);
	*l = (struct node_list){ 0 };
}
