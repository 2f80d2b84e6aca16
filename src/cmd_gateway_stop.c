/* cmd_gateway_stop.c - `openshell gateway stop`: stop the container, keep
 * everything else, so that `gateway start` resumes it with its state. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "docker.h"
#include "exitcode.h"
#include "gateway.h"
#include "log.h"
#include "names.h"
#include "xalloc.h"

/* k3s gets this long to shut down before docker kills it. */
#define STOP_GRACE_S 10

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: openshell gateway stop [OPTIONS]\n"
		"\n"
		"Stop a gateway's container (k3s gets %ds to shut down, then is killed).\n"
		"The volume, kubeconfig and metadata are kept: 'openshell gateway start'\n"
		"resumes it with its cluster state. Stopping a stopped gateway succeeds.\n"
		"\n"
		"Options:\n"
		"      --name NAME   gateway name (default: %s)\n"
		"  -v, --verbose     show each docker command\n"
		"  -q, --quiet       print errors only\n"
		"  -h, --help        show this help\n",
		STOP_GRACE_S, GATEWAY_DEFAULT_NAME);
}

static int stop(const struct gateway *gw, os_error *err)
{
	char grace[16];
	struct run_result res;
	int rc;

	if (!gw->c.exists)
		return os_error_set(err, OS_EXIT_NOTFOUND,
				    "gateway '%s' has no container (%s is gone); 'openshell gateway destroy --name %s' removes what is left",
				    gw->name, gw->container, gw->name);
	if (!gw->c.running && !gw->c.restarting) {
		log_info("gateway '%s' is already stopped (%s)", gw->name, gw->c.status);
		return 0;
	}
	snprintf(grace, sizeof(grace), "%d", STOP_GRACE_S);
	const char *args[] = { "stop", "--time", grace, gw->container, NULL };
	log_step("stopping gateway '%s'", gw->name);
	/* docker's own grace period comes on top of the per-call deadline. */
	rc = docker_run_ok(args, NULL, 0, STOP_GRACE_S * 1000 + docker_call_timeout_ms(), &res, err);
	run_result_free(&res);
	if (rc < 0)
		return os_error_wrap(err, "cannot stop gateway '%s'", gw->name);
	log_step_done(1);
	return 0;
}

enum { OPT_NAME = 256 };

int cmd_gateway_stop(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "name", required_argument, NULL, OPT_NAME },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = GATEWAY_DEFAULT_NAME;
	struct gateway gw;
	os_error err = { 0 };
	int c, rc = OS_EXIT_OK;

	while ((c = getopt_long(argc, argv, CLI_OPTS_PREFIX CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		if (cli_common_option(c))
			continue;
		if (c == 'h') {
			usage(stdout);
			return OS_EXIT_OK;
		}
		if (c != OPT_NAME)
			return cli_bad_option("gateway stop", c, argv);
		name = optarg;
	}
	if (optind < argc) {
		cleanup_free char *shown = printable(argv[optind], 64);
		return log_usage_error("gateway stop", "unexpected argument '%s'", shown);
	}
	if (gateway_lookup(name, &gw, &err) < 0) {
		rc = log_error_report(&err);
		os_error_clear(&err);
		return rc;
	}
	if (stop(&gw, &err) < 0)
		rc = log_error_report(&err);
	gateway_free(&gw);
	os_error_clear(&err);
	return rc;
}
