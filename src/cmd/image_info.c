/* cmd/image_info.c - `openshell image info`: what a cluster image holds,
 * read from the labels its build set. Changes nothing. */
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
#include "docker/image.h"
#include "gateway/deploy.h"
#include "gateway/image.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: openshell image info [OPTIONS] [REF]\n"
		"\n"
		"Show what the cluster image REF holds (default: $OPENSHELL_CLUSTER_IMAGE,\n"
		"else %s): the versions of openshell, k3s, the NVIDIA Container\n"
		"Toolkit and the device-plugin chart, the images and chart it bundles, and\n"
		"whether it is self-contained, i.e. whether a gateway start from it needs\n"
		"no network.\n"
		"\n"
		"Options:\n"
		"      --json        print one JSON object on stdout\n"
		"  -v, --verbose     show each docker command\n"
		"  -h, --help        show this help\n"
		"\n"
		"Exit status 0 when the image exists, 5 when it does not.\n",
		IMAGE_DEFAULT_TAG);
}

enum { OPT_JSON = 256 };

int cmd_image_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_parser p = { .cmd = "image info", .shortopts = "", .longopts = longopts, .usage = usage };
	struct deploy_opts defaults;
	struct docker_image img = { 0 };
	os_error err = { 0 };
	const char *ref;
	cleanup_free char *why = NULL;
	int json = 0, ok, rc;

	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;   /* --json is the only option of its own */
	if (p.done >= 0)
		return p.done;
	deploy_opts_init(&defaults);
	ref = optind < argc ? argv[optind++] : defaults.image;
	if ((rc = cli_no_operands(p.cmd, argc, argv)) >= 0)
		return rc;
	if (image_ref_check(ref, &err) < 0 || image_inspect(ref, 0, &img, &err) < 0) {
		rc = log_error_report(&err);
	} else if (!img.exists) {
		int dflt = strcmp(ref, IMAGE_DEFAULT_TAG) == 0;
		os_error_set(&err, OS_EXIT_NOTFOUND, "no image %s here; build it with 'openshell image build%s%s'",
			     ref, dflt ? "" : " --tag ", dflt ? "" : ref);
		rc = log_error_report(&err);
	} else if ((ok = image_self_contained(ref, &img, &why, &err)) < 0) {
		rc = log_error_report(&err);
	} else {
		if (json)
			json_print_stdout(image_describe_json(json_document(), ref, &img, ok, why));
		else
			image_describe(ref, &img, ok, why, stdout);
		rc = OS_EXIT_OK;
	}
	docker_image_free(&img);
	os_error_clear(&err);
	return rc;
}
