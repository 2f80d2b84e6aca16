/* cmd/gateway_verify.c - `openshell gateway verify`: the checklist. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/json.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/deploy/deploy.h"
#include "gateway/state/lookup.h"
#include "gateway/verify/verify.h"


enum { OPT_NAME = 256, OPT_JSON, OPT_SMOKE_IMAGE, OPT_TIMEOUT, OPT_KEEP };

static const struct cli_opt verify_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "json", .key = OPT_JSON,
	  .help = "print the checks as one JSON object on stdout" },
	{ .name = "smoke-image", .key = OPT_SMOKE_IMAGE,
	  .arg = "IMAGE",
	  .help = "image of the smoke pod (default: the one the gateway's image bundles, else " VERIFY_DEFAULT_SMOKE_IMAGE ")",
	  .value = CLI_VALUE_TEXT },
	{ .name = "timeout", .key = OPT_TIMEOUT,
	  .arg = "DUR",
	  .help = "how long the pods, and an API server still starting, may take (default: 2m)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "keep", .key = OPT_KEEP,
	  .help = "leave the pods in place for inspection" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_verify_spec = {
	.name = "verify",
	.summary = "prove the GPUs are usable, check by check",
	.about = "Prove that a gateway's GPUs are usable, check by check:\n"
		 "  device-request  the container asks Docker for GPUs (HostConfig.DeviceRequests)\n"
		 "  runtime-class   RuntimeClass nvidia exists\n"
		 "  device-plugin   the NVIDIA device plugin DaemonSet has all its pods ready\n"
		 "  allocatable     the node has allocatable nvidia.com/gpu > 0\n"
		 "  smoke-pod       a pod limited to nvidia.com/gpu: 1 runs nvidia-smi -L,\n"
		 "                  succeeds and names exactly one GPU\n"
		 "  pod-isolation   a pod that asks for no GPU but sets NVIDIA_VISIBLE_DEVICES=all\n"
		 "                  (as every CUDA image does) sees none\n"
		 "  privileged-pod  the smoke pod, privileged: it too names exactly one GPU\n"
		 "  node-gpus       on each GPU node of another host (gateway node add), a pod\n"
		 "                  limited to one GPU names one that node's agent sees\n"
		 "Under --gpu-allocation dra:\n"
		 "  dra-driver      the DRA driver's kubelet plugin has all its pods ready\n"
		 "  resource-slices the node's ResourceSlices publish the container's GPUs\n"
		 "  smoke-pod       (and privileged-pod) asks through a ResourceClaim and\n"
		 "                  sees the very GPU its claim was allocated\n"
		 "  extended-pod    a pod asking nvidia.com/gpu: 1 is served through DRA\n",
	.opts = verify_opts,
	.after = "Exit status: 0 when every check passes, 8 when one fails, 9 when the\n"
		 "gateway was started without --gpu (the checks do not apply).\n",
	.run = run,
};

static void print_human(const char *name, const struct check *checks)
{
	int counts[CHECK_NSTATUS] = { 0 };

	printf("Verifying gateway '%s'\n", name);
	for (int i = 0; i < VERIFY_NCHECKS; i++) {
		const struct check *c = &checks[i];
		static const char *const words[CHECK_NSTATUS] = { "PASS", "WARN", "FAIL", "SKIP" };

		if (!c->name)
			continue;
		counts[c->status]++;
		printf("  %s  %-15s %s\n", words[c->status], c->name, c->evidence ? c->evidence : "");
		if (c->detail && *c->detail) {
			const char *p = c->detail;
			while (*p) {
				size_t n = strcspn(p, "\n");
				printf("        | %.*s\n", (int)n, p);
				p += n + (p[n] == '\n');
			}
		}
	}
	printf("%d passed, %d failed\n", counts[CHECK_PASS], counts[CHECK_FAIL]);
}

static void print_json(const char *name, const struct check *checks)
{
	cJSON *o = json_document();
	cJSON *arr;
	int counts[CHECK_NSTATUS] = { 0 };

	cJSON_AddStringToObject(o, "name", name);
	arr = cJSON_AddArrayToObject(o, "checks");
	for (int i = 0; i < VERIFY_NCHECKS; i++) {
		if (!checks[i].name)
			continue;
		cJSON_AddItemToArray(arr, check_json(checks[i].name, checks[i].status, checks[i].evidence,
						     checks[i].detail, NULL));
		counts[checks[i].status]++;
	}
	cJSON_AddItemToObject(o, "counts", check_counts_json(counts));
	json_print_stdout(o);
}

/* A gateway without GPUs has every check skipped: that they do not apply
 * is an answer of its own, apart from a skip that hides a failure. */
static int verdict(const struct gateway *gw, const struct check *checks)
{
	if (!gw->c.gpu_request)
		return OS_EXIT_NOTAPPLICABLE;
	for (int i = 0; i < VERIFY_NCHECKS; i++)
		if (checks[i].name && (checks[i].status == CHECK_FAIL || checks[i].status == CHECK_SKIP))
			return OS_EXIT_CHECKS;
	return OS_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_verify_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	struct verify_opts vo = { .timeout_ms = VERIFY_DEFAULT_TIMEOUT_MS };
	struct check checks[VERIFY_NCHECKS] = { 0 };
	struct gateway gw;
	os_error err = { 0 };
	int c, json = 0, rc = -1;

	while (rc < 0 && (c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_NAME: name = optarg; break;
		case OPT_JSON: json = 1; break;
		case OPT_SMOKE_IMAGE: vo.smoke_image = optarg; break;
		case OPT_KEEP: vo.keep = 1; break;
		case OPT_TIMEOUT:
			rc = cli_duration_option("gateway verify", "--timeout", optarg, &vo.timeout_ms);
			break;
		}
	}
	if (rc >= 0)
		return rc;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway verify", argc, argv)) >= 0)
		return rc;
	if ((vo.smoke_image && image_ref_check(vo.smoke_image, &err) < 0) || gateway_lookup(name, &gw, &err) < 0) {
		rc = log_error_report(&err);
		os_error_clear(&err);
		return rc;
	}
	/* The image the gateway's own image bundled runs without network. */
	if (!vo.smoke_image)
		vo.smoke_image = gw.c.smoke_image ? gw.c.smoke_image : VERIFY_DEFAULT_SMOKE_IMAGE;
	if (gateway_require_running(&gw, &err) < 0) {
		rc = log_error_report(&err);
	} else if (verify_gateway(&gw, &vo, checks, &err) < 0) {
		rc = log_error_report(&err);
	} else {
		if (json)
			print_json(name, checks);
		else
			print_human(name, checks);
		rc = verdict(&gw, checks);
	}
	verify_free(checks);
	gateway_free(&gw);
	os_error_clear(&err);
	return rc;
}
