/* cmd/gateway_status.c - `openshell gateway status`: one gateway, looked at.
 *
 * Reads, never changes: docker inspect for the container and its health,
 * and only while it runs, the k3s API's /readyz and the node's allocatable
 * GPUs. A gateway that exists but is stopped is a successful answer.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "docker/client.h"
#include "gateway/info.h"
#include "gateway/lookup.h"
#include "gateway/mig.h"
#include "gateway/node_record.h"
#include "kube/containerd.h"
#include "kube/kubectl.h"
#include "kube/objects.h"

struct status {
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


/* Until Docker's first passing probe its verdict is "starting", though
 * `gateway start` returns as soon as the facts hold: then the probe is run
 * now, as Docker runs it (the image's HEALTHCHECK command, by exec), and
 * its answer is the health shown. */
static void probe_health(const struct gateway *gw, struct status *s)
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
static void probe(const struct gateway *gw, struct status *s)
{
	struct run_child *get;
	os_error err = { 0 };
	cleanup_free char *config = NULL;
	cJSON *nodes = NULL;
	int found = -1;

	s->gpus = s->capacity = -1;
	if (gw->c.health_line)
		s->health_line = xstrdup(gw->c.health_line);
	probe_health(gw, s);
	if (!gw->c.running)
		return;
	if ((get = kube_get_start(gw->container, NULL, gateway_wants_gpu(gw) ? K3S_CONTAINERD_CONFIG : NULL, "nodes", NULL, 0,
				  0, &err)))
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

static cJSON *nodes_json(const struct status *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < s->agents.n; i++) {
		const struct node_record *r = &s->agents.v[i];
		cJSON *o = cJSON_CreateObject();
		long long gpus;

		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "docker_endpoint", r->docker.endpoint);
		cJSON_AddStringToObject(o, "status", kube_node_state(s->nodes, r->name, &gpus));
		json_add_count_or_null(o, "gpus_allocatable", gpus);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void print_json(const struct gateway *gw, const struct status *s)
{
	cJSON *j = json_document();

	gateway_json_common(j, gw);
	json_add_string_or_null(j, "health", s->health);
	cJSON_AddBoolToObject(j, "api_ready", s->api_ready);
	json_add_count_or_null(j, "gpus_allocatable", s->gpus);
	json_add_count_or_null(j, "gpus_capacity", s->capacity);
	/* The node's answer, or null when there was none to read. */
	cJSON_AddItemToObject(j, "mig_allocatable", s->api_ready ? mig_resources_json(&s->mig) : cJSON_CreateNull());
	/* null while unknown (not running, no GPUs asked for, k3s not up yet) */
	if (s->rt.config_read)
		cJSON_AddBoolToObject(j, "nvidia_runtime", s->rt.nvidia);
	else
		cJSON_AddNullToObject(j, "nvidia_runtime");
	cJSON_AddItemToObject(j, "nodes", nodes_json(s));
	json_print_stdout(j);
}

static void print_text(const struct gateway *gw, const struct status *s)
{
	const char *problem = gateway_metadata_problem(gw);
	cleanup_free char *gpus = gateway_gpus(gw);
	/* All of the host's GPUs is the usual case, and says nothing more. */
	int some = gpus && strcmp(gpus, "all") != 0;
	cleanup_free char *which = xasprintf("%s%s%s%s", some ? " (--gpus " : "", some ? gpus : "", some ? ")" : "",
					     gw->c.gpu_cdi ? " through CDI" : "");
	cleanup_free char *mig = strv_join(&s->mig, ", ");

	printf("Gateway '%s'\n", gw->name);
	printf("  Container:   %s (%s)\n", gw->container, gateway_state_word(gw));
	if (gw->c.exists)
		printf("  Health:      %s%s%s\n", s->health ? s->health : "no healthcheck",
		       s->health_line ? ": " : "", s->health_line ? s->health_line : "");
	printf("  API ready:   %s\n", s->api_ready ? "yes" : gw->c.running ? "no" : "no (not running)");
	if (!gateway_wants_gpu(gw))
		printf("  GPUs:        none requested\n");
	else if (s->gpus >= 0 && s->capacity > s->gpus)
		printf("  GPUs:        requested%s; %lld allocatable (nvidia.com/gpu), %lld unhealthy\n", which, s->gpus,
		       s->capacity - s->gpus);
	else if (s->gpus >= 0)
		printf("  GPUs:        requested%s; %lld allocatable (nvidia.com/gpu)\n", which, s->gpus);
	else
		printf("  GPUs:        requested%s; allocatable absent\n", which);
	if (gw->mig != MIG_NONE || s->mig.n)
		printf("  MIG:         strategy %s; %s\n", mig_strategy_name(gw->mig),
		       s->mig.n ? mig : "no MIG resource allocatable");
	if (gateway_wants_gpu(gw) && s->rt.config_read)
		printf("  Runtime:     %s\n", s->rt.nvidia ? (s->rt.binary ? s->rt.binary : "nvidia")
						  : "no nvidia runtime in containerd: the image lacks nvidia-container-runtime");
	printf("  API:         %s\n", gw->has_metadata ? gw->md.server : "unknown");
	printf("  Kubeconfig:  %s\n", gw->has_metadata ? gw->md.kubeconfig : "unknown");
	for (size_t i = 0; i < s->agents.n; i++) {
		long long n;
		const char *st = kube_node_state(s->nodes, s->agents.v[i].name, &n);
		cleanup_free char *g = n >= 0 ? xasprintf(", %lld allocatable (nvidia.com/gpu)", n) : xstrdup("");
		printf("  Node:        %s on %s: %s%s\n", s->agents.v[i].name, s->agents.v[i].docker.endpoint, st, g);
	}
	if (problem)
		printf("  Metadata:    %s\n", problem);
}

enum { OPT_NAME = 256, OPT_JSON };

static const struct cli_opt status_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object on stdout" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_status_spec = {
	.name = "status",
	.summary = "show a gateway's state, health, API and GPUs",
	.about = "Show a gateway's container state and health, whether the k3s API is\n"
		 "ready, its GPU request and allocatable GPUs, API address and kubeconfig.\n",
	.opts = status_opts,
	.after = "Exit status 0 when the gateway exists, even stopped; 5 when it does not.\n",
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_status_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	struct gateway gw;
	struct status s = { 0 };
	int c, json = 0, rc;

	while ((c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: name = optarg; break;
		case OPT_JSON: json = 1; break;
		}
	}
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway status", argc, argv)) >= 0)
		return rc;
	if ((rc = gateway_lookup_or_report(name, &gw)) != OS_EXIT_OK)
		return rc;
	probe(&gw, &s);
	if (json)
		print_json(&gw, &s);
	else
		print_text(&gw, &s);
	free(s.health_line);
	node_records_free(&s.agents);
	cJSON_Delete(s.nodes);
	strv_free(&s.mig);
	runtime_fact_free(&s.rt);
	gateway_free(&gw);
	return OS_EXIT_OK;
}
