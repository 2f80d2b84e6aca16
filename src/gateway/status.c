/* gateway/status.c - one gateway, looked at (see gateway/status.h). */
#include "config.h"

#include <string.h>

#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/info.h"
#include "gateway/mig.h"
#include "gateway/status.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

/* Until Docker's first passing probe its verdict is "starting", though
 * `gateway start` returns as soon as the facts hold: then the probe is run
 * now, as Docker runs it (the image's HEALTHCHECK command, by exec), and
 * its answer is the health shown. */
static void probe_health(const struct gateway *gw, struct gateway_status *s)
{
	char *line;
	os_error err = { 0 };
	int rc;

	s->health = gw->c.health;
	if (!gw->c.health || strcmp(gw->c.health, "starting") != 0)
		return;
	rc = container_probe_health(gw->container, &gw->c, &line, &err);
	if (rc >= 0) {
		free(s->health_line);
		s->health_line = line;
		if (rc == 1)
			s->health = "healthy";
	}
	if (err.msg)
		log_verbose("%s", err.msg);
	os_error_clear(&err);
}

static void say_verbose(os_error *err)
{
	if (err->msg)
		log_verbose("%s", err->msg);
	os_error_clear(err);
}

/* The API and GPU probes only make sense in a running container; their
 * failure is part of the answer, not an error. One kubectl call answers
 * both whether the API serves and what the node has, and containerd's
 * config is read in the same docker exec. */
void gateway_status_look(const struct gateway *gw, struct gateway_status *s)
{
	struct run_child *get;
	os_error err = { 0 };
	cleanup_free char *config = NULL;
	cJSON *nodes = NULL;
	int found = -1;

	s->gpus = s->capacity = -1;
	if (gw->c.health_line)
		s->health_line = xstrdup(gw->c.health_line);
	/* The get runs while the health probe (when Docker still says
	 * "starting") does: two execs side by side. */
	get = gw->c.running ? kube_get_start(gw->container, NULL, gateway_wants_gpu(gw) ? K3S_CONTAINERD_CONFIG : NULL,
					     "nodes", NULL, 0, 0, &err)
			    : NULL;
	probe_health(gw, s);
	if (!gw->c.running)
		return;
	if (get)
		found = kube_get_finish(get, "nodes", &nodes, gateway_wants_gpu(gw) ? &config : NULL, &err);
	if (node_records_load(gw->state_dir, &s->agents, &err) < 0)
		say_verbose(&err);
	if (found > 0) {
		cleanup_free char *own = gateway_hostname(gw->name);
		s->api_ready = 1;
		/* The agents' as the cluster says them; the gateway's GPUs are its
		 * own node's. */
		s->nodes = cJSON_Duplicate(nodes, 1);
		kube_keep_node(nodes, own);
		s->gpus = kube_nodes_allocatable_gpus(nodes);
		s->capacity = kube_nodes_capacity_gpus(nodes);
		mig_resources(nodes, &s->mig);
	}
	if (config)
		containerd_parse_nvidia(config, &s->rt);
	say_verbose(&err);
	cJSON_Delete(nodes);
}

void gateway_status_free(struct gateway_status *s)
{
	free(s->health_line);
	node_records_free(&s->agents);
	cJSON_Delete(s->nodes);
	strv_free(&s->mig);
	runtime_fact_free(&s->rt);
}
