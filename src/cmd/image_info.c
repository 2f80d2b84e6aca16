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
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"


enum { OPT_JSON = 256 };

static const struct cli_opt image_info_opts[] = {
	{ .name = "json", .key = OPT_JSON,
	  .help = "print one JSON object on stdout" },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec image_info_spec = {
	.name = "info",
	.summary = "show what a cluster image holds: versions, bundle, self-contained",
	.operands = "[REF]",
	.about = "Show what the cluster image REF holds (default: $OPENSHELL_CLUSTER_IMAGE,\n"
		 "else " IMAGE_DEFAULT_TAG "): the versions of openshell, k3s, the NVIDIA\n"
		 "Container Toolkit and the device-plugin chart, the images and chart it\n"
		 "bundles, and whether it is self-contained, i.e. whether a gateway start\n"
		 "from it needs no network.\n",
	.opts = image_info_opts,
	.after = "Exit status 0 when the image exists, 5 when it does not.\n",
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &image_info_spec };
	struct image_facts f = { 0 };
	os_error err = { 0 };
	const char *ref;
	int json = 0, rc;

	while (cli_next_option(&p, argc, argv) != -1)
		json = 1;   /* --json is the only option of its own */
	if (p.done >= 0)
		return p.done;
	ref = optind < argc ? argv[optind++] : gateway_default_image();
	if ((rc = cli_no_operands("image info", argc, argv)) >= 0)
		return rc;
	if (image_ref_check(ref, &err) < 0 || image_read(ref, &f, &err) < 0) {
		rc = log_error_report(&err);
	} else if (!f.img.exists) {
		int dflt = !image_named(ref);
		os_error_set(&err, OS_EXIT_NOTFOUND, "no image %s here; build it with 'openshell image build%s%s'",
			     ref, dflt ? "" : " --tag ", dflt ? "" : ref);
		rc = log_error_report(&err);
	} else {
		if (json)
			json_print_stdout(image_describe_json(json_document(), ref, &f));
		else
			image_describe(ref, &f, stdout);
		rc = OS_EXIT_OK;
	}
	image_facts_free(&f);
	os_error_clear(&err);
	return rc;
}
