/* cmd/gateway.c - `openshell gateway`: dispatch to the gateway commands. */
#include "config.h"

#include <stdio.h>

#include "cmd/cli.h"
#include "cmd/commands.h"

static const struct os_command gateway_commands[] = {
	{ "start", cmd_gateway_start, "create (or resume) a gateway and wait until it is ready" },
	{ "verify", cmd_gateway_verify, "prove the GPUs are usable, check by check" },
	{ "status", cmd_gateway_status, "show a gateway's state, health, API and GPUs" },
	{ "list", cmd_gateway_list, "list every gateway openshell knows" },
	{ "stop", cmd_gateway_stop, "stop a gateway, keeping its state" },
	{ "destroy", cmd_gateway_destroy, "remove a gateway's container, network, volume and files" },
	{ "logs", cmd_gateway_logs, "print the gateway container's logs" },
	{ "exec", cmd_gateway_exec, "run a command in the gateway's container" },
	{ "kubectl", cmd_gateway_kubectl, "run kubectl in the gateway's container" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	fputs("Usage: openshell gateway COMMAND [OPTIONS]\n"
	      "\n"
	      "A gateway is a single-node k3s cluster in a Docker container named\n"
	      "openshell-cluster-NAME, optionally with the host's NVIDIA GPUs.\n"
	      "\n"
	      "Commands:\n", out);
	cli_print_commands(out, gateway_commands);
	fputs("\nRun 'openshell gateway COMMAND --help' for a command's options.\n", out);
}

int cmd_gateway(int argc, char **argv)
{
	return cli_run_group("gateway", gateway_commands, usage, argc, argv);
}
