/* cmd/gateway_status.c - `openshell gateway status`: one gateway, looked at.
 *
 * Reads, never changes: docker inspect for the container and its health,
 * and only while it runs, the k3s API's nodes and allocatable GPUs
 * (gateway/manage/status.h). A gateway that exists but is stopped is a
 * successful answer.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/gpu/mig.h"
#include "gateway/manage/status.h"
#include "gateway/state/info.h"
#include "gateway/state/lookup.h"

static cJSON *nodes_json(const struct gateway_status *s)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < s->agents.n; i++) {
		const struct node_record *r = &s->agents.v[i];
		cJSON *o = cJSON_CreateObject();
		long long gpus;

		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "docker_endpoint", r->docker.endpoint);
		cJSON_AddStringToObject(o, "status", gateway_status_node(s, r->name, &gpus));
		json_add_count_or_null(o, "gpus_allocatable", gpus);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The own node's GPU devices by use, or null when unknown. */
static cJSON *use_json(const struct gateway_status *s)
{
	cJSON *o;

	if (!s->use_read)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "devices", s->use.devices);
	cJSON_AddNumberToObject(o, "in_use", s->use.in_use);
	cJSON_AddNumberToObject(o, "shared", s->use.shared);
	cJSON_AddNumberToObject(o, "shared_by", s->use.shared_by);
	cJSON_AddNumberToObject(o, "free", s->use.free);
	return o;
}

/* "3 devices: 1 in use, 1 shared by 4 pods, 1 free", the parts with none
 * left out but the free. */
static char *use_words(const struct gpu_use *u)
{
	struct strv parts = { 0 };
	cleanup_free char *inner = NULL;
	char *out;

	if (u->in_use)
		strv_pushf(&parts, "%d in use", u->in_use);
	if (u->shared)
		strv_pushf(&parts, "%d shared by %d pods", u->shared, u->shared_by);
	strv_pushf(&parts, "%d free", u->free);
	inner = strv_join(&parts, ", ");
	out = xasprintf("%d device%s: %s", u->devices, u->devices == 1 ? "" : "s", inner);
	strv_free(&parts);
	return out;
}

static void print_json(const struct gateway *gw, const struct gateway_status *s)
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
	cJSON_AddItemToObject(j, "gpu_use", use_json(s));
	cJSON_AddItemToObject(j, "nodes", nodes_json(s));
	json_print_stdout(j);
}

static void print_text(const struct gateway *gw, const struct gateway_status *s)
{
	const char *problem = gateway_metadata_problem(gw);
	cleanup_free char *gpus = gateway_gpus_named(gw);
	int some = gpus != NULL;
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
	else if (gw->allocation == GPU_ALLOCATION_DRA && s->gpus >= 0)
		printf("  GPUs:        requested%s; %lld published in ResourceSlices (DRA driver gpu.nvidia.com)\n", which,
		       s->gpus);
	else if (gw->allocation == GPU_ALLOCATION_DRA)
		printf("  GPUs:        requested%s; ResourceSlices not read\n", which);
	else if (s->gpus >= 0 && s->capacity > s->gpus)
		printf("  GPUs:        requested%s; %lld allocatable (nvidia.com/gpu), %lld unhealthy\n", which, s->gpus,
		       s->capacity - s->gpus);
	else if (s->gpus >= 0)
		printf("  GPUs:        requested%s; %lld allocatable (nvidia.com/gpu)\n", which, s->gpus);
	else
		printf("  GPUs:        requested%s; allocatable absent\n", which);
	if (s->use_read) {
		cleanup_free char *use = use_words(&s->use);
		printf("  GPU use:     %s\n", use);
	}
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
		const char *st = gateway_status_node(s, s->agents.v[i].name, &n);
		cleanup_free char *g = n < 0 ? xstrdup("")
				       : s->slices ? xasprintf(", %lld published in ResourceSlices", n)
						   : xasprintf(", %lld allocatable (nvidia.com/gpu)", n);
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
	struct gateway_status s = { 0 };
	os_error err = { 0 };
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
	if (gateway_status_look(name, &gw, &s, &err) < 0) {
		rc = log_error_report(&err);
		os_error_clear(&err);
		return rc;
	}
	if (json)
		print_json(&gw, &s);
	else
		print_text(&gw, &s);
	gateway_status_free(&s);
	gateway_free(&gw);
	return OS_EXIT_OK;
}
