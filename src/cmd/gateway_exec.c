/* cmd/gateway_exec.c - `openshell gateway exec` and `gateway kubectl`:
 * a command inside the gateway's container, on the user's terminal.
 *
 * The command runs with KUBECONFIG pointing at k3s' own kubeconfig, so
 * kubectl and helm inside just work. stdin is always passed (-i); a TTY is
 * asked for only when both stdin and stdout are terminals, as `docker exec
 * -it` would fail on a pipe. The child's exit status is the result, and
 * there is no deadline: a shell may stay open as long as the user likes.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/manage/attach.h"
#include "gateway/state/info.h"
#include "gateway/state/lookup.h"


enum { OPT_NAME = 256 };

static const struct cli_opt exec_opts[] = {
	CLI_GATEWAY_NAME_OPT(OPT_NAME),
	{ NULL },
};

static int run_exec(int argc, char **argv);
static int run_kubectl(int argc, char **argv);

const struct cli_spec gateway_exec_spec = {
	.name = "exec",
	.summary = "run a command in the gateway's container",
	.operands = "-- CMD [ARGS...]",
	.about = "Run CMD inside the gateway's container with\n"
		 "KUBECONFIG=" GATEWAY_EXEC_KUBECONFIG ", passing stdin through (and a TTY\n"
		 "when stdin and stdout are terminals). Exits with the command's status.\n",
	.opts = exec_opts,
	.run = run_exec,
};

const struct cli_spec gateway_kubectl_spec = {
	.name = "kubectl",
	.summary = "run kubectl in the gateway's container",
	.operands = "-- ARGS...",
	.about = "Run kubectl ARGS inside the gateway's container with\n"
		 "KUBECONFIG=" GATEWAY_EXEC_KUBECONFIG ", passing stdin through (and a TTY\n"
		 "when stdin and stdout are terminals). Exits with kubectl's status.\n",
	.opts = exec_opts,
	.run = run_kubectl,
};

/* Both commands: options, then `--`, then the command line to run. */
static int exec_main(const struct cli_spec *spec, int argc, char **argv, const char *prefix)
{
	cleanup_free char *cmd = xasprintf("gateway %s", argv[0]);
	struct cli_parser p = { .spec = spec };
	const char *name = GATEWAY_DEFAULT_NAME;
	struct gateway gw;
	os_error err = { 0 };
	int status;

	/* --name is the only option of its own. */
	while (cli_next_option(&p, argc, argv) != -1)
		name = optarg;
	if (p.done >= 0)
		return p.done;
	/* getopt consumed a "--" iff it is the word just before optind; the
	 * command's own options must never be taken for openshell's. */
	if (optind < 1 || strcmp(argv[optind - 1], "--") != 0)
		return log_usage_error(cmd, "put '--' before the command to run");
	if (optind >= argc)
		return log_usage_error(cmd, "no command after '--'");
	if ((status = gateway_lookup_or_report(name, &gw)) != OS_EXIT_OK)
		return status;
	if (gateway_exec_attached(&gw, prefix, argv + optind, &status, &err) < 0)
		status = log_error_report(&err);
	gateway_free(&gw);
	os_error_clear(&err);
	return status;
}

static int run_exec(int argc, char **argv)
{
	return exec_main(&gateway_exec_spec, argc, argv, NULL);
}

static int run_kubectl(int argc, char **argv)
{
	return exec_main(&gateway_kubectl_spec, argc, argv, "kubectl");
}
