/* cmd/image.c - `openshell image`: the group of cluster image commands. */
#include "config.h"

#include <stddef.h>

#include "cmd/cli.h"
#include "cmd/commands.h"

static const struct cli_spec *const image_commands[] = {
	&image_build_spec,
	&image_info_spec,
	NULL,
};

static int run(int argc, char **argv)
{
	return cli_run_group(&image_spec, argc, argv);
}

const struct cli_spec image_spec = {
	.name = "image",
	.summary = "build and inspect the cluster image",
	.about = "The cluster image every gateway runs: k3s, the NVIDIA Container Toolkit,\n"
		 "and the device-plugin chart and images bundled, so that a start needs no\n"
		 "network.\n",
	.run = run,
	.subs = image_commands,
};
