/* cmd/gateway_stop.c - `openshell gateway stop`: stop the container, keep
 * everything else, so that `gateway start` resumes it with its state. It
 * waits for the gateway's lock, so it never interleaves with a `start`. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/manage/stop.h"

enum { OPT_NAME = 256 };

static const struct cli_opt stop_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_stop_spec = {
	.name = "stop",
	.summary = "stop a gateway, keeping its state",
	.about = "Stop a gateway's container (k3s gets " CLI_STR(GATEWAY_STOP_GRACE_S) "s to shut down, then is killed).\n"
		 "The volume, kubeconfig and metadata are kept: 'openshell gateway start'\n"
		 "resumes it with its cluster state. Stopping a stopped gateway succeeds.\n",
	.opts = stop_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_stop_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	os_error err = { 0 };
	int rc;

	/* --name is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		name = optarg;
	if (p.done >= 0)
		return p.done;
	if ((rc = cli_no_operands("gateway stop", argc, argv)) >= 0)
		return rc;
	rc = gateway_stop(name, &err) < 0 ? log_error_report(&err) : OS_EXIT_OK;
	os_error_clear(&err);
	return rc;
}
