/* cmd/gateway_node_add.c - `openshell gateway node add`: options in, summary out. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/deploy/deploy.h"
#include "gateway/gpu/gpus.h"
#include "gateway/node/node_add.h"

enum { OPT_NAME = 256, OPT_DOCKER_HOST, OPT_CONTEXT, OPT_GPU, OPT_GPUS, OPT_GPU_SHARING, OPT_MIG_STRATEGY, OPT_TIMEOUT,
       OPT_JSON };

static const char *const gpus_all[] = { "all", NULL };
static const char *const sharing_words[] = { "time-slicing:", "mps:", "time-slicing", "none", NULL };
static const char *const mig_words[] = { "none", "single", "mixed", NULL };

static const struct cli_opt add_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "docker-host", .key = OPT_DOCKER_HOST, .arg = "URL",
	  .help = "the node's Docker daemon, as DOCKER_HOST names one: ssh://user@host, tcp://host:2376 (with the "
	  "environment's DOCKER_TLS_VERIFY and DOCKER_CERT_PATH)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "context", .key = OPT_CONTEXT, .arg = "NAME",
	  .help = "the node's Docker daemon by its Docker context instead",
	  .value = CLI_VALUE_CONTEXT },
	{ .name = "gpu", .key = OPT_GPU,
	  .help = "pass all of the node's NVIDIA GPUs to its agent, as 'gateway start --gpu' does for the server; "
	  "the node's host needs the driver and the NVIDIA Container Toolkit" },
	{ .name = "gpus", .key = OPT_GPUS, .arg = "WHICH",
	  .help = "which of the node's GPUs: a count or indices and UUIDs, checked on its host; the agent hides the others",
	  .value = CLI_VALUE_WORDS, .words = gpus_all },
	{ .name = "gpu-sharing", .key = OPT_GPU_SHARING, .arg = "MODE",
	  .help = "the gateway's GPU sharing, said again: the device plugin's (or DRA driver's) configuration is one "
	  "for every node, so another than the gateway's is refused (change the gateway's with 'gateway start "
	  "--gpu-sharing')",
	  .value = CLI_VALUE_WORDS, .words = sharing_words },
	{ .name = "mig-strategy", .key = OPT_MIG_STRATEGY, .arg = "STRATEGY",
	  .help = "the gateway's MIG strategy, said again: one for every node, so another is refused; the agent "
	  "takes the gateway's",
	  .value = CLI_VALUE_WORDS, .words = mig_words },
	{ .name = "timeout", .key = OPT_TIMEOUT, .arg = "DUR",
	  .help = "give up after DUR, e.g. 90s or 10m (default: 10m), and remove what was made",
	  .value = CLI_VALUE_TEXT },
	{ .name = "json", .key = OPT_JSON, .help = "print a JSON summary on stdout" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_node_add_spec = {
	.name = "add",
	.summary = "join a k3s agent on another Docker host to a gateway",
	.operands = "NODE",
	.about = "Run the gateway's cluster image as a k3s agent named NODE on the Docker\n"
		 "daemon --docker-host or --context names, and wait until the node is Ready\n"
		 "with its GPUs. The image is sent there (docker save | docker load) when\n"
		 "that daemon lacks it; the server's token goes into the agent's volume,\n"
		 "never its arguments or environment. A failure removes what was made.\n",
	.opts = add_opts,
	.run = run,
};

struct args {
	struct node_add_opts o;
	int json, gpu_flag;
};

static int option(struct args *a, int c, os_error *err)
{
	switch (c) {
	case OPT_NAME: a->o.gateway = optarg; break;
	case OPT_DOCKER_HOST: a->o.docker_host = optarg; break;
	case OPT_CONTEXT: a->o.context = optarg; break;
	case OPT_GPU: a->gpu_flag = a->o.gpu = 1; break;
	case OPT_GPUS:
		a->o.gpu = 1;
		gpus_free(&a->o.gpus);
		return gpus_parse(optarg, &a->o.gpus, err) < 0 ? log_error_report(err) : -1;
	case OPT_GPU_SHARING:
		return sharing_parse(optarg, &a->o.sharing, err) < 0 ? log_error_report(err) : -1;
	case OPT_MIG_STRATEGY:
		return mig_strategy_parse(optarg, &a->o.mig, err) < 0 ? log_error_report(err) : -1;
	case OPT_TIMEOUT: return cli_duration_option("gateway node add", "--timeout", optarg, &a->o.timeout_ms);
	case OPT_JSON: a->json = 1; break;
	}
	return -1;
}

static int parse(int argc, char **argv, struct args *a)
{
	struct cli_parser p = { .spec = &gateway_node_add_spec };
	const char *operand = NULL;
	os_error err = { 0 };
	int c, rc = -1;

	a->o = (struct node_add_opts){ .gateway = GATEWAY_DEFAULT_NAME, .sharing.replicas = SHARING_UNSET,
				       .mig = MIG_UNSET, .timeout_ms = DEPLOY_DEFAULT_TIMEOUT_MS };
	while (rc < 0 && (c = cli_next_arg(&p, argc, argv, &operand)) != -1) {
		if (c != 0)
			rc = option(a, c, &err);
		else if (a->o.node)
			rc = log_usage_error("gateway node add", "unexpected argument '%s': one node at a time", operand);
		else
			a->o.node = operand;
	}
	os_error_clear(&err);
	if (rc >= 0 || p.done >= 0)
		return rc >= 0 ? rc : p.done;
	if (!a->o.node)
		return log_usage_error("gateway node add", "name the node: 'openshell gateway node add NODE --docker-host URL'");
	if (!a->o.docker_host == !a->o.context)
		return log_usage_error("gateway node add",
				       "say where the node runs with one of --docker-host URL or --context NAME");
	if ((sharing_asked(&a->o.sharing) || a->o.mig != MIG_UNSET) && !a->o.gpu)
		return log_usage_error("gateway node add", "--%s says how the node's GPUs are given, and none were asked for: add --gpu or --gpus",
				       sharing_asked(&a->o.sharing) ? "gpu-sharing" : "mig-strategy");
	if (a->gpu_flag && a->o.gpus.kind != GPUS_ALL)
		return log_usage_error("gateway node add", "--gpu means --gpus all, which --gpus contradicts; give one of them");
	return -1;
}

static void print_summary(const struct args *a, const struct node_add_result *r)
{
	if (a->json) {
		cJSON *j = json_document();

		cJSON_AddStringToObject(j, "gateway", a->o.gateway);
		cJSON_AddStringToObject(j, "node", a->o.node);
		cJSON_AddStringToObject(j, "docker_endpoint", r->endpoint);
		cJSON_AddStringToObject(j, "server", r->server);
		cJSON_AddBoolToObject(j, "gpu", a->o.gpu);
		cJSON_AddItemToObject(j, "gpus", a->o.gpu ? gpus_json(&a->o.gpus) : cJSON_CreateNull());
		json_add_count_or_null(j, "gpus_allocatable", a->o.gpu ? r->gpus : -1);
		cJSON_AddBoolToObject(j, "image_sent", r->image_sent);
		json_print_stdout(j);
		return;
	}
	printf("Node '%s' joined gateway '%s'.\n", a->o.node, a->o.gateway);
	printf("  Docker host: %s\n", r->endpoint);
	printf("  Server:      %s\n", r->server);
	if (a->o.gpu && r->dra)
		printf("  GPUs:        %lld published in ResourceSlices (DRA driver " DRA_DRIVER_NAME ")\n",
		       r->gpus < 0 ? 0 : r->gpus);
	else if (a->o.gpu)
		printf("  GPUs:        %lld allocatable (nvidia.com/gpu)\n", r->gpus < 0 ? 0 : r->gpus);
	else
		printf("  GPUs:        none\n");
	printf("\nNext:\n  openshell gateway node list --name %s\n", a->o.gateway);
	if (a->o.gpu)
		printf("  openshell gateway verify --name %s\n", a->o.gateway);
}

static int run(int argc, char **argv)
{
	struct args a = { 0 };
	struct node_add_result r = { 0 };
	os_error err = { 0 };
	int rc = parse(argc, argv, &a);

	if (rc < 0) {
		if (gateway_node_add(&a.o, &r, &err) < 0) {
			rc = log_error_report(&err);
		} else {
			print_summary(&a, &r);
			rc = OS_EXIT_OK;
		}
	}
	node_add_result_free(&r);
	os_error_clear(&err);
	gpus_free(&a.o.gpus);
	return rc;
}
