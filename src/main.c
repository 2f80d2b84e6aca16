/* main.c - global options, then dispatch to a command. Nothing else. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/signals.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"

static int cmd_help(int argc, char **argv);

static const struct os_command commands[] = {
	{ "gateway", cmd_gateway, "create and manage gateways (k3s in Docker)" },
	{ "image", cmd_image, "build and inspect the cluster image" },
	{ "doctor", cmd_doctor, "check that this host can run a GPU gateway" },
	{ "version", cmd_version, "show versions: openshell, the cluster image's pins" },
	{ "help", cmd_help, "show help for a command" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	fputs("Usage: openshell [-v|-q] COMMAND [ARGS...]\n"
	      "\n"
	      "Bootstrap a single-node Kubernetes (k3s) gateway inside Docker, with\n"
	      "NVIDIA GPUs passed through, and prove that its pods can use them.\n"
	      "\n"
	      "Commands:\n", out);
	cli_print_commands(out, commands);
	fputs("\n"
	      "Options:\n"
	      "  -v, --verbose   show each command openshell runs (repeat for more)\n"
	      "  -q, --quiet     print errors only\n"
	      "  -h, --help      show this help\n"
	      "  -V, --version   show the version\n"
	      "\n"
	      "Run 'openshell COMMAND --help' for a command's options.\n", out);
}

/* `openshell help gateway start` is `openshell gateway start --help`;
 * `help`, `help help` and `help --help` show the main usage. */
static int cmd_help(int argc, char **argv)
{
	static const struct option longopts[] = { CLI_COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct cli_parser p = { .cmd = "help", .longopts = longopts, .usage = usage };
	char *args[8];
	int n = 0;

	cli_next_option(&p, argc, argv);   /* only the common options: it ends at once */
	if (p.done >= 0)
		return p.done;
	if (optind >= argc || strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return OS_EXIT_OK;
	}
	if (argc - optind > 5)
		return log_usage_error("help", "too many words after 'help'");
	for (int i = optind; i < argc; i++)
		args[n++] = argv[i];
	args[n++] = (char *)"--help";
	args[n] = NULL;
	return cli_dispatch(NULL, commands, n, args);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_parser p = { .shortopts = "V", .longopts = longopts, .usage = usage };

	xalloc_init();
	signals_install();
	/* '+' in the optstring: stop at the command name; its options are its own. */
	if (cli_next_option(&p, argc, argv) == 'V') {
		printf("openshell %s\n", PACKAGE_VERSION);
		return OS_EXIT_OK;
	}
	if (p.done >= 0)
		return p.done;
	if (optind >= argc) {
		usage(stderr);
		return OS_EXIT_USAGE;
	}
	return cli_dispatch(NULL, commands, argc - optind, argv + optind);
}
