/* cmd/gateway_logs.c - `openshell gateway logs`: the container's logs,
 * streamed straight to the terminal by docker. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/manage/attach.h"
#include "gateway/state/lookup.h"


enum { OPT_NAME = 256, OPT_TAIL };

static const struct cli_opt logs_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ .name = "follow", .key = 'f',
	  .help = "keep printing new lines until interrupted" },
	{ .name = "tail", .key = OPT_TAIL,
	  .arg = "N",
	  .help = "only the last N lines",
	  .value = CLI_VALUE_TEXT },
	{ NULL },
};

static int run(int argc, char **argv);

const struct cli_spec gateway_logs_spec = {
	.name = "logs",
	.summary = "print the gateway container's logs",
	.about = "Print the gateway container's logs (k3s and the entrypoint), as\n"
		 "'docker logs' does. Exits with docker's status.\n",
	.opts = logs_opts,
	.run = run,
};

static int run(int argc, char **argv)
{
	struct cli_parser p = { .spec = &gateway_logs_spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	struct gateway gw;
	os_error err = { 0 };
	int c, follow = 0, tail = -1, status;

	while ((c = cli_next_option(&p, argc, argv)) != -1) {
		switch (c) {
		case 'f': follow = 1; break;
		case OPT_NAME: name = optarg; break;
		case OPT_TAIL:
			if (parse_uint(optarg, INT_MAX, &tail) < 0) {
				cleanup_free char *shown = printable(optarg, 32);
				return log_usage_error("gateway logs", "invalid --tail '%s': give a number of lines", shown);
			}
			break;
		}
	}
	if (p.done >= 0)
		return p.done;
	if ((status = cli_no_operands("gateway logs", argc, argv)) >= 0)
		return status;
	if ((status = gateway_lookup_or_report(name, &gw)) != OS_EXIT_OK)
		return status;
	if (gateway_logs_attached(&gw, follow, tail, &status, &err) < 0)
		status = log_error_report(&err);
	gateway_free(&gw);
	os_error_clear(&err);
	return status;
}
