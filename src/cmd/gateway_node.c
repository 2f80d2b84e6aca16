/* cmd/gateway_node.c - `openshell gateway node`: a gateway's nodes on other Docker hosts. */
#include "config.h"

#include <stddef.h>

#include "cmd/cli.h"
#include "cmd/commands.h"

static const struct cli_spec *const node_commands[] = {
	&gateway_node_add_spec,
	&gateway_node_list_spec,
	&gateway_node_remove_spec,
	NULL,
};

static int run(int argc, char **argv)
{
	return cli_run_group(&gateway_node_spec, argc, argv);
}

const struct cli_spec gateway_node_spec = {
	.name = "node",
	.summary = "add, list and remove a gateway's nodes on other Docker hosts",
	.about = "A node is a k3s agent in a Docker container named openshell-node-GATEWAY on\n"
		 "another Docker host, joined to the gateway's server with its own GPUs.\n"
		 "The server must be published where that host reaches it (gateway start\n"
		 "--bind, --tls-san); see openshell(1), \"More than one GPU host\".\n",
	.run = run,
	.subs = node_commands,
};
