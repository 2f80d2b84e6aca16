/* cmd/image_build.c - `openshell image build`: the cluster image, from the
 * recipe and pins openshell installed, with docker build. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/deploy/deploy.h"
#include "gateway/deploy/image.h"


enum { OPT_TAG = 256, OPT_PULL, OPT_NO_CACHE, OPT_BUILD_ARG, OPT_NETWORK, OPT_TIMEOUT };

static const struct cli_opt image_build_opts[] = {
	{ .name = "tag", .key = OPT_TAG,
	  .arg = "REF",
	  .help = "tag to build (default: " IMAGE_DEFAULT_TAG ", the default image of 'gateway start')",
	  .value = CLI_VALUE_TEXT },
	{ .name = "pull", .key = OPT_PULL,
	  .help = "fetch newer base images first" },
	{ .name = "no-cache", .key = OPT_NO_CACHE,
	  .help = "build every step again" },
	{ .name = "build-arg", .key = OPT_BUILD_ARG,
	  .arg = "KEY=VAL",
	  .help = "override a pin of versions.env",
	  .value = CLI_VALUE_TEXT,
	  .repeatable = 1 },
	{ .name = "network", .key = OPT_NETWORK,
	  .arg = "MODE",
	  .help = "network of the build's RUN steps (docker build --network)",
	  .value = CLI_VALUE_TEXT },
	{ .name = "timeout", .key = OPT_TIMEOUT,
	  .arg = "DUR",
	  .help = "give up after DUR (default: 30m)",
	  .value = CLI_VALUE_TEXT },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec image_build_spec = {
	.name = "build",
	.summary = "build the cluster image from the recipe openshell installed",
	.about = "Build the cluster image with docker build (BuildKit) and print its tag.\n"
		 "The recipe is the deploy/ directory installed with openshell\n"
		 "(" OPENSHELL_PKGDATADIR "/deploy): docker/Dockerfile.cluster and the pins of\n"
		 "versions.env (k3s, the NVIDIA Container Toolkit, the device-plugin chart,\n"
		 "the bundled images). The build downloads and verifies them, so it needs\n"
		 "network; the image it makes does not: a gateway start from it runs offline.\n",
	.opts = image_build_opts,
	.after = "OPENSHELL_IMAGE_CONTEXT names another recipe directory.\n",
	.run = run,
};

static int check_build_arg(const char *cmd, const char *arg)
{
	size_t k = strcspn(arg, "=");

	if (k == 0 || !arg[k] || strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != k) {
		cleanup_free char *shown = printable(arg, 64);
		return log_usage_error(cmd, "invalid --build-arg '%s': give KEY=VALUE", shown);
	}
	return -1;
}

static int check_network(const char *cmd, const char *mode)
{
	if (*mode && strspn(mode, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == strlen(mode) && mode[0] != '-')
		return -1;
	cleanup_free char *shown = printable(mode, 64);
	return log_usage_error(cmd, "invalid --network '%s': give a mode such as host, none or default", shown);
}

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &image_build_spec };
	struct strv args = { 0 };
	struct image_build_opts o = { .tag = IMAGE_DEFAULT_TAG, .build_args = &args,
				      .timeout_ms = IMAGE_BUILD_TIMEOUT_MS };
	os_error err = { 0 };
	int c, rc = -1;

	while (rc < 0 && (c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case OPT_TAG: o.tag = optarg; break;
		case OPT_PULL: o.pull = 1; break;
		case OPT_NO_CACHE: o.no_cache = 1; break;
		case OPT_BUILD_ARG:
			if ((rc = check_build_arg("image build", optarg)) < 0)
				strv_push(&args, optarg);
			break;
		case OPT_NETWORK:
			if ((rc = check_network("image build", optarg)) < 0)
				o.network = optarg;
			break;
		case OPT_TIMEOUT: rc = cli_duration_option("image build", "--timeout", optarg, &o.timeout_ms); break;
		}
	}
	if (rc < 0 && p.done >= 0)
		rc = p.done;
	if (rc < 0)
		rc = cli_no_operands("image build", argc, argv);
	if (rc < 0 && image_ref_check(o.tag, &err) < 0)
		rc = log_error_report(&err);
	if (rc < 0) {
		rc = image_build(&o, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
		if (rc == OS_EXIT_OK)
			printf("%s\n", o.tag);
	}
	os_error_clear(&err);
	strv_free(&args);
	return rc;
}
