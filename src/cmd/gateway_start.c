/* cmd/gateway_start.c - `openshell gateway start`: options in, summary out. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"
#include "gateway/gpu/gpus.h"
#include "gateway/gpu/mig.h"
#include "gateway/start/start.h"

enum { OPT_NAME = 256, OPT_GPU, OPT_GPUS, OPT_GPU_SHARING, OPT_GPU_MODE, OPT_MIG_STRATEGY, OPT_GPU_ALLOCATION, OPT_PORT, OPT_BIND, OPT_IMAGE, OPT_RECREATE, OPT_TIMEOUT,
       OPT_NO_WAIT, OPT_JSON, OPT_UPDATE_KUBECONFIG, OPT_NO_BUILD, OPT_TLS_SAN, OPT_ADVERTISE, OPT_NODE_NETWORK };

static const char *const gpu_mode_words[] = { "auto", "cdi", "legacy", NULL };
static const char *const mig_words[] = { "none", "single", "mixed", NULL };
static const char *const allocation_words[] = { "device-plugin", "dra", NULL };
static const char *const sharing_words[] = { "time-slicing:", "mps:", "time-slicing", "none", NULL };
static const char *const gpus_all[] = { "all", NULL };
static const char *const node_network_words[] = { "vxlan", "wireguard", NULL };

static const struct cli_opt start_opts[] = {
	{ .name = "name", .key = OPT_NAME,
	  .arg = "NAME",
	  .help = "gateway name (default: " GATEWAY_DEFAULT_NAME "); a DNS label of at most " CLI_STR(GATEWAY_NAME_MAX)
	  " lowercase letters, digits and '-'",
	  .value = CLI_VALUE_GATEWAY },
	{ .name = "gpu", .key = OPT_GPU,
	  .help = "pass all of the host's NVIDIA GPUs to the gateway: Docker's --gpus, or its CDI devices (see --gpu-mode), "
	  "and GPU_ENABLED=true, so that k3s gets the nvidia runtime and the NVIDIA device plugin. A pod then asks "
	  "for a GPU with runtimeClassName: nvidia and resources.limits nvidia.com/gpu (openshell(1) has a sample). "
	  "The host needs the NVIDIA driver and the NVIDIA Container Toolkit configured for Docker "
	  "(nvidia-ctk runtime configure --runtime=docker); 'openshell doctor' checks" },
	{ .name = "gpus", .key = OPT_GPUS,
	  .arg = "WHICH",
	  .help = "which GPUs instead of all: a count (--gpus 2, the first two) or GPU indices and UUIDs (--gpus 0,2 or "
	  "--gpus GPU-3f2a...), checked against the Docker host's GPUs before anything is created, and before "
	  "an image build or pull where that can be done without the image (with CDI, by the daemon's device "
	  "names; else by a container of another cluster image here); --gpus all is --gpu. The gateway hides "
	  "the host's other GPUs, which its privileged container would see too",
	  .value = CLI_VALUE_WORDS,
	  .words = gpus_all },
	{ .name = "gpu-sharing", .key = OPT_GPU_SHARING,
	  .arg = "MODE",
	  .help = "share each GPU between pods: time-slicing:N makes allocatable nvidia.com/gpu N times the GPUs (pods "
	  "take turns; no memory isolation); mps:N the same through CUDA MPS (pods run at once, each with its "
	  "share; N at most 48, 16 before Volta; the GPUs go into compute mode EXCLUSIVE_PROCESS on the host); "
	  "none undoes it; under --gpu-allocation dra, time-slicing or mps (no N) lets a claim's GpuConfig ask NVIDIA's "
	  "DRA driver for it. Changes a running gateway in place",
	  .value = CLI_VALUE_WORDS,
	  .words = sharing_words },
	{ .name = "gpu-mode", .key = OPT_GPU_MODE,
	  .arg = "MODE",
	  .help = "how Docker gives the GPUs: cdi (--device nvidia.com/gpu=..., the NVIDIA CDI spec), legacy (--gpus, "
	  "the toolkit's hook) or auto (default: cdi when the daemon lists NVIDIA CDI devices, as Docker >= 28.2 "
	  "does)",
	  .value = CLI_VALUE_WORDS,
	  .words = gpu_mode_words },
	{ .name = "mig-strategy", .key = OPT_MIG_STRATEGY,
	  .arg = "STRATEGY",
	  .help = "MIG for the device plugin: none (default; a MIG GPU counts whole), single (each MIG device is an "
	  "nvidia.com/gpu) or mixed (nvidia.com/mig-<profile>)",
	  .value = CLI_VALUE_WORDS,
	  .words = mig_words },
	{ .name = "gpu-allocation", .key = OPT_GPU_ALLOCATION,
	  .arg = "MODE",
	  .help = "who hands pods their GPUs: device-plugin (default; NVIDIA's device plugin, pods ask for "
	  "nvidia.com/gpu) or dra (Dynamic Resource Allocation through NVIDIA's DRA driver: each GPU a device of "
	  "the node's ResourceSlice, which a pod's ResourceClaim of DeviceClass gpu.nvidia.com asks for; "
	  "nvidia.com/gpu is still served through that class from Kubernetes 1.37, the image's k3s; DRA itself needs "
	  "1.34). dra takes no --mig-strategy, and --gpu-sharing only as time-slicing, mps or none",
	  .value = CLI_VALUE_WORDS,
	  .words = allocation_words },
	{ .name = "port", .key = OPT_PORT,
	  .arg = "PORT",
	  .help = "host port for the k3s API (default: " CLI_STR(DEPLOY_DEFAULT_PORT) ", or the next free port when "
	  "that is taken)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "bind", .key = OPT_BIND,
	  .arg = "ADDR",
	  .help = "address to publish the API on, on the Docker daemon's machine (default: " DEPLOY_DEFAULT_BIND
		  "); anything but loopback exposes the cluster to the network; 0.0.0.0 or :: puts the machine's "
		  "addresses in the API's certificate. A daemon on another machine (ssh://, tcp://) needs it: "
		  "that machine's loopback is out of this one's reach",
	  .value = CLI_VALUE_TEXT },
	{ .name = "tls-san", .key = OPT_TLS_SAN,
	  .arg = "NAME",
	  .help = "another DNS name or address for the API's certificate; with a wildcard --bind the first one is the "
	  "kubeconfig's server",
	  .value = CLI_VALUE_TEXT,
	  .repeatable = 1 },
	{ .name = "advertise-address", .key = OPT_ADVERTISE,
	  .arg = "ADDR",
	  .help = "the IP address agents on other hosts reach this gateway's API at, which its k3s advertises to them "
	  "(default: the API's address when it is an IP address other than loopback: --bind, or with a wildcard "
	  "--bind the first --tls-san)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "node-network", .key = OPT_NODE_NETWORK,
	  .arg = "KIND",
	  .help = "how pods on different hosts reach each other, through k3s's flannel: vxlan (default; 8472/udp, "
	  "unencrypted, for a trusted network) or wireguard (encrypted; 51820/udp, 51821/udp for an IPv6 advertised address). With an "
	  "address to advertise, the port is published on --bind; every node's host must reach every other's there",
	  .value = CLI_VALUE_WORDS,
	  .words = node_network_words },
	{ .name = "image", .key = OPT_IMAGE,
	  .arg = "REF",
	  .help = "cluster image (default: $OPENSHELL_CLUSTER_IMAGE, else " IMAGE_DEFAULT_TAG ", which 'openshell image "
	  "build' makes and start builds when it is absent; the build does not count against --timeout); any "
	  "other image that is absent is pulled (Docker Hub names too)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "no-build", .key = OPT_NO_BUILD,
	  .help = "refuse to build the default image; say how instead" },
	{ .name = "recreate", .key = OPT_RECREATE,
	  .help = "remove an existing gateway and its volume first" },
	{ .name = "timeout", .key = OPT_TIMEOUT,
	  .arg = "DUR",
	  .help = "give up after DUR, e.g. 90s or 10m (default: 10m)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "no-wait", .key = OPT_NO_WAIT,
	  .help = "return once the container runs and its kubeconfig is written, without waiting for the API or the GPUs" },
	{ .name = "json", .key = OPT_JSON,
	  .help = "print a JSON summary on stdout" },
	{ .name = "update-kubeconfig", .key = OPT_UPDATE_KUBECONFIG,
	  .help = "also merge the gateway into $KUBECONFIG or ~/.kube/config and make it the current context; the old "
	  "file is kept as FILE.openshell-backup" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_start_spec = {
	.name = "start",
	.summary = "create (or resume) a gateway and wait until it is ready",
	.about = "Create a gateway - k3s in a privileged Docker container named\n"
		 "openshell-cluster-NAME - or resume a stopped one, and wait until it is ready:\n"
		 "the k3s API answers and, with --gpu, the node has allocatable GPUs (under\n"
		 "--gpu-allocation dra, published in its ResourceSlices).\n"
		 "The kubeconfig is written to $XDG_CONFIG_HOME/openshell/gateways/NAME/.\n",
	.opts = start_opts,
	.after = "An existing gateway is reused (resumed if stopped) with its own port,\n"
		 "address and image; a different GPU request, or a --port, --bind,\n"
		 "--image or --node-network that contradicts it, is refused (use\n"
		 "--recreate). See openshell(1) for exit statuses.\n",
	.run = run,
};

int gateway_start_parse(int argc, char **argv, struct gateway_request *rq, int *json)
{
	struct cli_parser p = { .spec = &gateway_start_spec };
	os_error err = { 0 };
	int c, rc = -1, gpu_flag = 0;

	gateway_request_init(rq);
	while (rc < 0 && (c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: rq->name = optarg; break;
		case OPT_GPU: gpu_flag = rq->gpu = 1; break;
		case OPT_GPUS:
			rq->gpu = 1;
			gpus_free(&rq->gpus);
			if (gpus_parse(optarg, &rq->gpus, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_GPU_SHARING:
			if (sharing_parse(optarg, &rq->sharing, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_GPU_MODE:
			if (gpu_mode_parse(optarg, &rq->gpu_mode, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_MIG_STRATEGY:
			if (mig_strategy_parse(optarg, &rq->mig, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_GPU_ALLOCATION:
			if (gpu_allocation_parse(optarg, &rq->allocation, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_BIND:
			rq->bind = optarg;
			break;
		case OPT_IMAGE:
			rq->image = optarg;
			break;
		case OPT_NO_BUILD: rq->no_build = 1; break;
		case OPT_TLS_SAN:
			if (rq->n_tls_san == DEPLOY_MAX_TLS_SANS)
				rc = log_usage_error("gateway start", "too many --tls-san (at most %d)", DEPLOY_MAX_TLS_SANS);
			else
				rq->tls_san[rq->n_tls_san++] = optarg;
			break;
		case OPT_ADVERTISE: rq->advertise = optarg; break;
		case OPT_NODE_NETWORK:
			if (node_network_parse(optarg, &rq->node_network, &err) < 0)
				rc = log_error_report(&err);
			break;
		case OPT_RECREATE: rq->recreate = 1; break;
		case OPT_NO_WAIT: rq->no_wait = 1; break;
		case OPT_JSON: *json = 1; break;
		case OPT_UPDATE_KUBECONFIG: rq->update_kubeconfig = 1; break;
		case OPT_PORT:
			if (parse_port(optarg, &rq->port) < 0) {
				cleanup_free char *shown = printable(optarg, 32);
				rc = log_usage_error("gateway start", "invalid --port '%s': give a number from 1 to 65535", shown);
			}
			break;
		case OPT_TIMEOUT:
			rc = cli_duration_option("gateway start", "--timeout", optarg, &rq->timeout_ms);
			break;
		}
	}
	os_error_clear(&err);
	if (rc >= 0)
		return rc;
	if (p.done >= 0)
		return p.done;
	if (gpu_flag && rq->gpus.kind != GPUS_ALL) {
		cleanup_free char *sel = gpus_string(&rq->gpus);
		return log_usage_error("gateway start", "--gpu means --gpus all, which --gpus %s contradicts; give one of them", sel);
	}
	return cli_no_operands("gateway start", argc, argv);
}

/* openshell's own cost, its children excluded: for scripts/bench, and
 * for anyone who wonders what the tool itself adds to a start. */
static cJSON *self_usage_json(void)
{
	struct rusage ru;
	cJSON *j = cJSON_CreateObject();

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
			     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
		cJSON_AddNumberToObject(j, "cpu_ms", (double)(long long)(cpu + 0.5));
		cJSON_AddNumberToObject(j, "max_rss_kib", (double)ru.ru_maxrss);
	}
	return j;
}

static void print_summary(const struct gateway_request *rq, int json, const struct start_result *r)
{
	if (json) {
		cJSON *j = json_document();

		cJSON_AddStringToObject(j, "name", rq->name);
		cJSON_AddStringToObject(j, "container", r->container);
		cJSON_AddStringToObject(j, "outcome", r->outcome ? r->outcome : "running");
		cJSON_AddStringToObject(j, "image", r->image);
		cJSON_AddStringToObject(j, "server", r->server);
		cJSON_AddStringToObject(j, "kubeconfig", r->kubeconfig);
		cJSON_AddBoolToObject(j, "gpu", rq->gpu);
		cJSON_AddItemToObject(j, "gpus", rq->gpu ? gpus_json(&rq->gpus) : cJSON_CreateNull());
		json_add_string_or_null(j, "gpu_mode", r->gpu_mode);
		json_add_string_or_null(j, "gpu_injection", r->gpu_injection);
		json_add_string_or_null(j, "mig_strategy", r->mig_strategy);
		json_add_string_or_null(j, "gpu_allocation", r->gpu_allocation);
		json_add_string_or_null(j, "user_kubeconfig", r->user_kubeconfig);
		json_add_count_or_null(j, "gpus_allocatable", r->gpus);
		/* null, as gpus_allocatable, when the start did not wait for the GPUs */
		cJSON_AddItemToObject(j, "mig_allocatable",
				      rq->gpu && !rq->no_wait ? mig_resources_json(&r->mig) : cJSON_CreateNull());
		cJSON_AddItemToObject(j, "phases_ms", phases_json(&r->phases));
		cJSON_AddItemToObject(j, "openshell_usage", self_usage_json());
		json_print_stdout(j);
		return;
	}
	printf("Gateway '%s' is ready (%s).\n", rq->name, r->outcome ? r->outcome : "running");
	printf("  API:         %s\n", r->server);
	printf("  Kubeconfig:  %s\n", r->kubeconfig);
	long long migs = mig_count(&r->mig);
	cleanup_free char *mig = migs > 0 ? xasprintf(" and %lld MIG devices (nvidia.com/mig-*)", migs) : xstrdup("");

	if (rq->gpu && r->gpu_allocation && !strcmp(r->gpu_allocation, "dra") && r->gpus >= 0)
		printf("  GPUs:        %lld, devices of ResourceSlices (DRA driver gpu.nvidia.com; claim them with DeviceClass gpu.nvidia.com, or ask for nvidia.com/gpu)\n",
		       r->gpus);
	else if (rq->gpu && (r->gpus >= 0 || migs > 0))
		printf("  GPUs:        %lld allocatable (nvidia.com/gpu)%s, through %s\n", r->gpus < 0 ? 0 : r->gpus, mig,
		       !strcmp(r->gpu_mode, "cdi")        ? "CDI"
		       : !strcmp(r->gpu_injection, "cdi") ? "Docker's --gpus, which this Docker gives through CDI"
							 : "Docker's --gpus");
	else if (rq->gpu)
		printf("  GPUs:        requested; not yet checked (--no-wait)\n");
	else
		printf("  GPUs:        none (start with --gpu --recreate to add them)\n");
	if (r->user_kubeconfig) {
		printf("  Merged into: %s (current context openshell-%s)\n", r->user_kubeconfig, rq->name);
		if (r->user_backup)
			printf("  Backup:      %s\n", r->user_backup);
		printf("\nNext:\n  kubectl get nodes\n");
	} else {
		printf("\nNext:\n  export KUBECONFIG=%s\n  kubectl get nodes\n", r->kubeconfig);
	}
	if (rq->gpu)
		printf("  openshell gateway verify --name %s\n", rq->name);
}

static int run(int argc, char **argv)
{
	struct gateway_request rq;
	struct start_result r;
	os_error err = { 0 };
	int json = 0, rc = gateway_start_parse(argc, argv, &rq, &json);

	if (rc >= 0)
		goto done;
	if (gateway_request_check(&rq, &err) < 0) {
		rc = log_error_report(&err);
		goto done;
	}
	if (rq.bind && !bind_is_loopback(rq.bind))
		log_warn("the k3s API will be published on %s: reachable from other machines, not just this one",
			 rq.bind);
	if (gateway_start(&rq, &r, &err) < 0) {
		rc = log_error_report(&err);
	} else {
		phases_log(&r.phases);
		print_summary(&rq, json, &r);
		rc = OS_EXIT_OK;
	}
	start_result_free(&r);
done:
	os_error_clear(&err);
	gateway_request_free(&rq);
	return rc;
}
