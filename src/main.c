/* main.c - the command tree's root: global options, then dispatch. Nothing else. */
#include "config.h"

#include <stdio.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "docker/daemon.h"

static const struct cli_spec *const commands[] = {
	&gateway_spec,
	&image_spec,
	&doctor_spec,
	&version_spec,
	&completion_spec,
	&cli_help_spec,
	&complete_spec,
	&manpage_spec,
	NULL,
};

enum { OPT_CONTEXT = 256 };

static const struct cli_opt root_opts[] = {
	{ .name = "context", .key = OPT_CONTEXT,
	  .arg = "NAME",
	  .help = "use Docker context NAME for every docker call, as docker --context does: it wins over "
		  "DOCKER_HOST and DOCKER_CONTEXT",
	  .value = CLI_VALUE_CONTEXT },
	{ .name = "version", .key = 'V',
	  .help = "show the version" },
	{ NULL },
};

static const struct cli_spec root = {
	.name = "openshell",
	.about = "Bootstrap a single-node Kubernetes (k3s) gateway inside Docker, with\n"
		 "NVIDIA GPUs passed through, and prove that its pods can use them.\n",
	.opts = root_opts,
	.subs = commands,
};

static int root_option(int c)
{
	if (c == 'V') {
		printf("openshell %s\n", PACKAGE_VERSION);
		return OS_EXIT_OK;
	}
	os_error err = { 0 };
	int rc = -1;

	if (docker_daemon_choose(optarg, &err) < 0)
		rc = log_usage_error(NULL, "%s", err.msg);
	os_error_clear(&err);
	return rc;
}

int main(int argc, char **argv)
{
	xalloc_init();
	signals_install();
	return cli_main(&root, argc, argv, root_option);
}
