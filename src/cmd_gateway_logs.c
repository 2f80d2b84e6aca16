/* cmd_gateway_logs.c - `openshell gateway logs`: the container's logs,
 * streamed straight to the terminal by docker. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "attach.h"
#include "cli.h"
#include "commands.h"
#include "docker.h"
#include "exitcode.h"
#include "gateway.h"
#include "log.h"
#include "names.h"
#include "strv.h"
#include "xalloc.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: openshell gateway logs [OPTIONS]\n"
		"\n"
		"Print the gateway container's logs (k3s and the entrypoint), as\n"
		"'docker logs' does. Exits with docker's status.\n"
		"\n"
		"Options:\n"
		"      --name NAME   gateway name (default: %s)\n"
		"  -f, --follow      keep printing new lines until interrupted\n"
		"      --tail N      only the last N lines\n"
		"  -v, --verbose     show the docker command\n"
		"  -h, --help        show this help\n",
		GATEWAY_DEFAULT_NAME);
}

static int show_logs(const struct gateway *gw, int follow, const char *tail, int *status,
		     os_error *err)
{
	struct strv args = { 0 };
	int rc;

	if (!gw->c.exists)
		return os_error_set(err, OS_EXIT_NOTFOUND, "gateway '%s' has no container (%s is gone)",
				    gw->name, gw->container);
	strv_push(&args, "logs");
	if (follow)
		strv_push(&args, "--follow");
	if (tail) {
		strv_push(&args, "--tail");
		strv_push(&args, tail);
	}
	strv_push(&args, gw->container);
	/* Following has no natural end; a plain read keeps the per-call deadline. */
	rc = docker_attach(strv_argv(&args), follow ? 0 : docker_call_timeout_ms(), status, err);
	strv_free(&args);
	return rc;
}

enum { OPT_NAME = 256, OPT_TAIL };

int cmd_gateway_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "name", required_argument, NULL, OPT_NAME },
		{ "follow", no_argument, NULL, 'f' },
		{ "tail", required_argument, NULL, OPT_TAIL },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = "gateway logs";
	const char *name = GATEWAY_DEFAULT_NAME, *tail = NULL;
	struct gateway gw;
	os_error err = { 0 };
	int c, follow = 0, lines, status = OS_EXIT_FAILURE;

	while ((c = getopt_long(argc, argv, CLI_OPTS_PREFIX CLI_COMMON_SHORT "f", longopts, NULL)) != -1) {
		if (cli_common_option(c))
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return OS_EXIT_OK;
		case 'f': follow = 1; break;
		case OPT_NAME: name = optarg; break;
		case OPT_TAIL:
			if (cli_parse_uint(optarg, INT_MAX, &lines) < 0) {
				cleanup_free char *shown = printable(optarg, 32);
				return log_usage_error(cmd, "invalid --tail '%s': give a number of lines", shown);
			}
			tail = optarg;
			break;
		default:
			return cli_bad_option(cmd, c, argv);
		}
	}
	if (optind < argc) {
		cleanup_free char *shown = printable(argv[optind], 64);
		return log_usage_error(cmd, "unexpected argument '%s'", shown);
	}
	if (gateway_lookup(name, &gw, &err) == 0) {
		if (show_logs(&gw, follow, tail, &status, &err) < 0)
			status = log_error_report(&err);
		gateway_free(&gw);
	} else {
		status = log_error_report(&err);
	}
	os_error_clear(&err);
	return status;
}
