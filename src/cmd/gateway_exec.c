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
#include <unistd.h>

#include "base/exitcode.h"
#include "base/log.h"
#include "base/names.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "docker/attach.h"
#include "gateway/info.h"
#include "gateway/lookup.h"
#include "kube/kubeconfig.h"

static void usage_for(FILE *out, const char *cmd)
{
	int kubectl = strcmp(cmd, "kubectl") == 0;

	fprintf(out,
		"Usage: openshell gateway %s [OPTIONS] -- %s\n"
		"\n"
		"%s inside the gateway's container with KUBECONFIG=%s,\n"
		"passing stdin through (and a TTY when stdin and stdout are terminals).\n"
		"Exits with the command's status.\n"
		"\n"
		"Options:\n"
		"      --name NAME   gateway name (default: %s)\n"
		"  -v, --verbose     show the docker command\n"
		"  -h, --help        show this help\n",
		cmd, kubectl ? "ARGS..." : "CMD [ARGS...]",
		kubectl ? "Run kubectl ARGS" : "Run CMD", K3S_KUBECONFIG_PATH, GATEWAY_DEFAULT_NAME);
}

static void usage_exec(FILE *out)
{
	usage_for(out, "exec");
}

static void usage_kubectl(FILE *out)
{
	usage_for(out, "kubectl");
}

static int exec_in(const struct gateway *gw, const char *prefix, char **cmd, int *status,
		   os_error *err)
{
	struct strv args = { 0 };
	int rc;

	if (gateway_require_running(gw, err) < 0)
		return -1;
	strv_push(&args, "exec");
	strv_push(&args, "--interactive");
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		strv_push(&args, "--tty");
	strv_pushf(&args, "--env=KUBECONFIG=%s", K3S_KUBECONFIG_PATH);
	strv_push(&args, gw->container);
	if (prefix)
		strv_push(&args, prefix);
	strv_pushv(&args, (const char *const *)cmd);
	rc = docker_attach(strv_argv(&args), 0, status, err);
	strv_free(&args);
	return rc;
}

enum { OPT_NAME = 256 };

/* Both commands: options, then `--`, then the command line to run. */
static int exec_main(int argc, char **argv, const char *prefix, void (*usage)(FILE *))
{
	static const struct option longopts[] = {
		CLI_COMMON_LONG,
		{ "name", required_argument, NULL, OPT_NAME },
		{ NULL, 0, NULL, 0 },
	};
	cleanup_free char *cmd = xasprintf("gateway %s", argv[0]);
	struct cli_parser p = { .cmd = cmd, .longopts = longopts, .usage = usage };
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
	if (exec_in(&gw, prefix, argv + optind, &status, &err) < 0)
		status = log_error_report(&err);
	gateway_free(&gw);
	os_error_clear(&err);
	return status;
}

int cmd_gateway_exec(int argc, char **argv)
{
	return exec_main(argc, argv, NULL, usage_exec);
}

int cmd_gateway_kubectl(int argc, char **argv)
{
	return exec_main(argc, argv, "kubectl", usage_kubectl);
}
