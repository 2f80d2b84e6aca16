/* gateway/manage/status.c - one gateway, looked at (see gateway/manage/status.h). */
#include "config.h"

#include <string.h>

#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/allocation.h"
#include "gateway/gpu/mig.h"
#include "gateway/manage/status.h"
#include "gateway/state/gpu_claims.h"
#include "gateway/state/gpu_use.h"
#include "gateway/state/info.h"
#include "gateway/wait/gpu_state.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* With GPUs, the objects start's facts are read from, and the pods that
 * hold GPUs, in one kubectl; under DRA the ResourceSlices too (a type
 * older clusters lack, so asked of DRA gateways alone). */
#define GPU_FACT_TYPES "runtimeclasses,daemonsets,nodes,pods"
#define DRA_FACT_TYPES GPU_FACT_TYPES ",resourceslices,resourceclaims"

static const char *fact_types(int gpu, int dra)
{
	return !gpu ? "nodes" : dra ? DRA_FACT_TYPES : GPU_FACT_TYPES;
}

static void say_verbose(os_error *err)
{
	if (err->msg)
		log_verbose("%s", err->msg);
	os_error_clear(err);
}

/* The one exec: with GPUs, the kubelet's device checkpoint and
 * containerd's config read ahead of kubectl. */
static struct run_child *get_start(const struct docker_ctr *ctr, int gpu, int dra)
{
	os_error err = { 0 };
	struct run_child *c = kube_get_start(ctr, gpu ? GPU_USE_SCRIPT : NULL, gpu ? K3S_CONTAINERD_CONFIG : NULL,
					     fact_types(gpu, dra), NULL, gpu, 0, &err);

	say_verbose(&err);
	return c;
}

/* The image's probe, run now as Docker runs it (its HEALTHCHECK command,
 * by exec), for its own words: its verdict is the health shown. */
static void probe_health(const struct gateway *gw, struct gateway_status *s)
{
	char *line;
	os_error err = { 0 };
	int rc = container_probe_health(&gw->ctr, &gw->c, &line, &err);

	if (rc >= 0) {
		free(s->health_line);
		s->health_line = line;
		if (rc == 1)
			s->health = "healthy";
	}
	say_verbose(&err);
}

/* Do the facts start waits for hold in LIST? The API answered it; with
 * GPUs, they are read as the start's wait reads them (gateway/wait/gpu_state.h),
 * without the counts a sharing change or a mixed MIG layout asks of it:
 * those are the request's, which status does not have. */
static int start_facts_hold(const struct gateway *gw, const struct gateway_status *s, const cJSON *list)
{
	cleanup_free char *own = gateway_hostname(gw->name);
	struct gpu_state g = { .by = gpu_allocator(gw->allocation), .allocatable = -1, .want_node = own };
	int ok;

	if (!gateway_wants_gpu(gw))
		return 1;
	g.runtime_class = kube_find(list, "RuntimeClass", NVIDIA_RUNTIME_CLASS) != NULL;
	g.rt = s->rt;   /* borrowed: read once, for the status too */
	gpu_state_read_nodes(&g, list);
	gpu_state_read_sets(&g, list);
	if (gpu_state_dra(&g))
		gpu_state_read_slices(&g, list);
	ok = gpu_state_ready(&g);
	g.rt = (struct runtime_fact){ 0 };
	gpu_state_free(&g);
	return ok;
}

/* Until Docker's first passing probe its verdict is "starting", though
 * `gateway start` returns as soon as its facts hold: then status judges
 * them from its own get (LIST, NULL when the API did not answer), and
 * only when they do not hold runs the probe, whose marker says why. */
static void judge_health(const struct gateway *gw, struct gateway_status *s, const cJSON *list)
{
	s->health = gw->c.health;
	if (!gw->c.running || !gw->c.health || strcmp(gw->c.health, "starting") != 0)
		return;
	if (list && start_facts_hold(gw, s, list)) {
		s->health = "healthy";
		free(s->health_line);
		s->health_line = xstrdup("start's checks pass; Docker's first probe is still to come");
		return;
	}
	probe_health(gw, s);
}

/* The get's answer, the container running: whether the API serves and
 * what the nodes have; with GPUs, who holds them and containerd's config
 * (read also when kubectl failed; missing or empty, as while k3s rewrites
 * it, it is not read). */
static cJSON *read_answer(const struct gateway *gw, struct run_child *get, struct gateway_status *s)
{
	os_error err = { 0 };
	cleanup_free char *text = NULL;
	cJSON *list = NULL;
	int gpu = gateway_wants_gpu(gw);

	if (kube_get_finish(get, fact_types(gpu, gw->allocation == GPU_ALLOCATION_DRA), &list, gpu ? &text : NULL, &err) <= 0) {
		say_verbose(&err);
		cJSON_Delete(list);
		list = NULL;
	}
	if (text) {
		const char *toml;
		/* Under DRA the kubelet's device checkpoint holds no GPU: who
		 * holds one is a claim's (read_nodes()). */
		s->use_read = gpu_use_read(text, list, &s->use, &toml) && gw->allocation != GPU_ALLOCATION_DRA;
		if (strspn(toml, " \t\r\n") < strlen(toml))
			containerd_parse_nvidia(toml, &s->rt);
	}
	return list;
}

static void read_nodes(const struct gateway *gw, struct gateway_status *s, cJSON *list)
{
	cleanup_free char *own = gateway_hostname(gw->name);

	s->api_ready = 1;
	/* The agents' as the cluster says them (the nodes alone are kept: the
	 * list has every pod too); the gateway's GPUs are its own node's. */
	s->nodes = kube_list_of_kind(list, "Node");
	if (gw->allocation == GPU_ALLOCATION_DRA) {
		/* And each node's GPUs are those its slices publish (0, not
		 * absent, before the driver has published any). */
		long long n = dra_node_gpus(list, own, NULL);

		s->slices = kube_list_of_kind(list, "ResourceSlice");
		s->gpus = s->capacity = n < 0 ? 0 : n;
		gpu_claims_use(list, own, &s->use);
		s->use_read = 1;
	}
	kube_keep_node(list, own);
	if (gw->allocation != GPU_ALLOCATION_DRA) {
		s->gpus = kube_nodes_allocatable_gpus(list);
		s->capacity = kube_nodes_capacity_gpus(list);
	}
	mig_resources(list, &s->mig);
}

/* The get is started before the inspect, beside it, where the gateway's
 * own files say what it is (a gateway with no files, or asked otherwise
 * than its container says, gets its get after the inspect); its answer
 * counts only for a container that runs and is openshell's. */
int gateway_status_look(const char *name, struct gateway *gw, struct gateway_status *s, os_error *err)
{
	struct run_child *get = NULL;
	os_error e = { 0 };
	cJSON *list = NULL;
	int early_gpu = 0, early_dra = 0, rc = -1;

	s->gpus = s->capacity = -1;
	if (gateway_lookup_files(name, gw, err) < 0)
		goto out;
	if (gw->has_metadata) {
		early_gpu = gw->md.gpu;
		early_dra = early_gpu && gw->md.allocation == GPU_ALLOCATION_DRA;
		get = get_start(&gw->ctr, early_gpu, early_dra);
	}
	if (gateway_lookup_container(gw, err) < 0)
		goto out;
	/* A DRA gateway's get asks for its slices too: another get when the
	 * files did not say so (older ones do not record the allocation). */
	if (get && (!gw->c.running || early_gpu != gateway_wants_gpu(gw) ||
		    early_dra != (early_gpu && gw->allocation == GPU_ALLOCATION_DRA)))
		docker_drop(&get);
	if (!get && gw->c.running)
		get = get_start(&gw->ctr, gateway_wants_gpu(gw), gw->allocation == GPU_ALLOCATION_DRA);
	if (get)
		list = read_answer(gw, get, s);
	get = NULL;   /* reaped */
	if (gw->c.health_line)
		s->health_line = xstrdup(gw->c.health_line);
	judge_health(gw, s, list);
	if (gw->c.running && node_records_load(gw->state_dir, &s->agents, &e) < 0)
		say_verbose(&e);
	if (list)
		read_nodes(gw, s, list);
	rc = 0;
out:
	docker_drop(&get);
	cJSON_Delete(list);
	return rc;
}

const char *gateway_status_node(const struct gateway_status *s, const char *name, long long *gpus)
{
	const char *state = kube_node_state(s->nodes, name, gpus);

	if (s->slices)
		*gpus = dra_node_gpus(s->slices, name, NULL);
	return state;
}

void gateway_status_free(struct gateway_status *s)
{
	free(s->health_line);
	node_records_free(&s->agents);
	cJSON_Delete(s->nodes);
	cJSON_Delete(s->slices);
	strv_free(&s->mig);
	runtime_fact_free(&s->rt);
}
