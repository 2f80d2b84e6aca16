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
#include "gateway/deploy.h"
#include "gateway/image.h"

static void usage(FILE *out)
{
	cleanup_free char *dir = image_context_dir();

	fprintf(out,
		"Usage: openshell image build [OPTIONS]\n"
		"\n"
		"Build the cluster image with docker build (BuildKit) and print its tag.\n"
		"The recipe is %s:\n"
		"docker/Dockerfile.cluster and the pins of versions.env (k3s, the NVIDIA\n"
		"Container Toolkit, the device-plugin chart, the bundled images). The build\n"
		"downloads and verifies them, so it needs network; the image it makes\n"
		"does not: a gateway start from it runs offline.\n"
		"\n"
		"Options:\n"
		"      --tag REF            tag to build (default: %s, the default image\n"
		"                           of 'gateway start')\n"
		"      --pull               fetch newer base images first\n"
		"      --no-cache           build every step again\n"
		"      --build-arg KEY=VAL  override a pin of versions.env (repeatable)\n"
		"      --network MODE       network of the build's RUN steps (docker build --network)\n"
		"      --timeout DUR        give up after DUR (default: 30m)\n"
		"  -v, --verbose            show the whole build output\n"
		"  -q, --quiet              print errors only\n"
		"  -h, --help               show this help\n"
		"\n"
		"OPENSHELL_IMAGE_CONTEXT names another recipe directory.\n",
		dir, IMAGE_DEFAULT_TAG);
}

enum { OPT_TAG = 256, OPT_PULL, OPT_NO_CACHE, OPT_BUILD_ARG, OPT_NETWORK, OPT_TIMEOUT };

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

int cmd_image_build(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "tag", required_argument, NULL, OPT_TAG },
		{ "pull", no_argument, NULL, OPT_PULL },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "build-arg", required_argument, NULL, OPT_BUILD_ARG },
		{ "network", required_argument, NULL, OPT_NETWORK },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_parser p = { .cmd = "image build", .shortopts = "", .longopts = longopts, .usage = usage };
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
			if ((rc = check_build_arg(p.cmd, optarg)) < 0)
				strv_push(&args, optarg);
			break;
		case OPT_NETWORK:
			if ((rc = check_network(p.cmd, optarg)) < 0)
				o.network = optarg;
			break;
		case OPT_TIMEOUT: rc = cli_duration_option(p.cmd, "--timeout", optarg, &o.timeout_ms); break;
		}
	}
	if (rc < 0 && p.done >= 0)
		rc = p.done;
	if (rc < 0)
		rc = cli_no_operands(p.cmd, argc, argv);
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
