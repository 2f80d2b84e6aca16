/* gateway/wait/gpu_state.c - the GPU facts, read from the cluster's lists (see
 * gateway/wait/gpu_state.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/xalloc.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/mig.h"
#include "gateway/wait/gpu_state.h"
#include "kube/objects.h"

void gpu_state_read_nodes(struct gpu_state *g, const cJSON *list)
{
	g->nodes = kube_count_kind(list, "Node");
	free(g->heartbeat);
	g->heartbeat = kube_nodes_heartbeat(list);
	g->allocatable = kube_nodes_allocatable_gpus(list);
	g->capacity = kube_nodes_capacity_gpus(list);
	strv_free(&g->migs);
	g->mig = mig_resources(list, &g->migs);
	g->mig_capacity = g->want_node ? mig_capacity(kube_find(list, "Node", g->want_node)) : mig_capacity(list);
}

/* The plugin's pods run under RuntimeClass nvidia (the chart's
 * runtimeClassName): the API admits no pod whose RuntimeClass does not
 * exist (the RuntimeClass admission plugin), so its ready pods prove it. */
static int plugin_proves_class(const struct gpu_state *g, const cJSON *ds)
{
	const char *rc = json_str(json_get(ds, "spec", "template", "spec", NULL), "runtimeClassName");

	return rc && strcmp(rc, NVIDIA_RUNTIME_CLASS) == 0 && g->ds.desired > 0 && g->ds.ready == g->ds.desired;
}

void gpu_state_read_sets(struct gpu_state *g, const cJSON *list)
{
	const cJSON *ds = gpu_allocator_daemonset(gpu_state_by(g), list);
	const cJSON *mps = gpu_state_dra(g) ? NULL : kube_find(list, "DaemonSet", DEVICE_PLUGIN_RELEASE "-mps-control-daemon");

	g->plugin_found = ds != NULL;
	kube_daemonset_status(ds, &g->ds);
	g->gate_met = !g->want_gate || (ds && dra_gates_rolled(ds, &g->ds, g->want_gate));
	g->mps_found = mps != NULL;
	kube_daemonset_status(mps, &g->mps);
	if (g->runtime_class <= 0 && plugin_proves_class(g, ds))
		g->runtime_class = 1;
}

void gpu_state_read_slices(struct gpu_state *g, const cJSON *list)
{
	strv_free(&g->published);
	free(g->slices_created);
	g->slices_created = NULL;
	dra_published_uuids(list, g->want_node, &g->published, &g->slices_created);
	g->slices_seen = 1;
}

int gpu_state_slices_met(const struct gpu_state *g)
{
	if (!g->want_uuids || !g->want_uuids->n)
		return g->published.n > 0;
	if (g->published.n != g->want_uuids->n)
		return 0;
	for (size_t i = 0; i < g->want_uuids->n; i++)
		if (!strv_has(&g->published, g->want_uuids->v[i]))
			return 0;
	return 1;
}

void gpu_state_mark_stale(struct gpu_state *g, const char *started)
{
	g->stale_slices = gpu_state_dra(g) && kube_status_predates(g->slices_created, started);
	g->stale = g->stale_slices || kube_status_predates(g->heartbeat, started);
}

int gpu_state_ready(const struct gpu_state *g)
{
	if (gpu_state_dra(g))
		return g->rt.nvidia && g->plugin_found && g->ds.desired > 0 && g->ds.ready == g->ds.desired &&
		       g->gate_met && gpu_state_slices_met(g);
	return g->runtime_class > 0 && g->rt.nvidia && g->plugin_found && g->ds.desired > 0 &&
	       g->ds.ready == g->ds.desired && (g->allocatable > 0 || g->mig > 0) && gpu_sharing_met(g) &&
	       g->mig_capacity >= g->want_mig;
}

void gpu_state_free(struct gpu_state *g)
{
	free(g->heartbeat);
	runtime_fact_free(&g->rt);
	free(g->api_error);
	strv_free(&g->migs);
	strv_free(&g->published);
	free(g->slices_created);
}
