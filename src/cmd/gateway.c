/* cmd/gateway.c - `openshell gateway`: the group of gateway commands. */
#include "config.h"

#include <stddef.h>

#include "cmd/cli.h"
#include "cmd/commands.h"

static const struct cli_spec *const gateway_commands[] = {
	&gateway_start_spec,
	&gateway_verify_spec,
	&gateway_status_spec,
	&gateway_gpus_spec,
	&gateway_list_spec,
	&gateway_stop_spec,
	&gateway_destroy_spec,
	&gateway_logs_spec,
	&gateway_exec_spec,
	&gateway_kubectl_spec,
	&gateway_node_spec,
	NULL,
};

static int run(int argc, char **argv)
{
	return cli_run_group(&gateway_spec, argc, argv);
}

const struct cli_spec gateway_spec = {
	.name = "gateway",
	.summary = "create and manage gateways (k3s in Docker)",
	.about = "A gateway is a single-node k3s cluster in a Docker container named\n"
		 "openshell-cluster-NAME, optionally with the host's NVIDIA GPUs.\n",
	.run = run,
	.subs = gateway_commands,
};
