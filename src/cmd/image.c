/* cmd/image.c - `openshell image`: dispatch to the image commands. */
#include "config.h"

#include <stdio.h>

#include "cmd/cli.h"
#include "cmd/commands.h"

static const struct os_command image_commands[] = {
	{ "build", cmd_image_build, "build the cluster image from the recipe openshell installed" },
	{ "info", cmd_image_info, "show what a cluster image holds: versions, bundle, self-contained" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	fputs("Usage: openshell image COMMAND [OPTIONS]\n"
	      "\n"
	      "The cluster image every gateway runs: k3s, the NVIDIA Container Toolkit,\n"
	      "and the device-plugin chart and images bundled, so that a start needs no\n"
	      "network.\n"
	      "\n"
	      "Commands:\n", out);
	cli_print_commands(out, image_commands);
	fputs("\nRun 'openshell image COMMAND --help' for a command's options.\n", out);
}

int cmd_image(int argc, char **argv)
{
	return cli_run_group("image", image_commands, usage, argc, argv);
}
